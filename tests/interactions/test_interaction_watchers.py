"""Watchers of an interaction are told of its changes and comments by e-mail, each only what they may read:
through the edit page, the comment form, the API and a fault link, delivered by the notification service."""
from __future__ import annotations

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from portal.core.models import NotificationDelivery
from portal.core.notifications import deliver
from tests.factories import MembershipFactory, UserFactory
from tests.health.factories_health import ClusterFactory, GpuFaultFactory
from tests.interactions.factories_interactions import InteractionFactory


@pytest.fixture
def people(world):
    """A second lead SA of A (who watches), a customer of A who watches, one without an address, one gone."""
    lead = MembershipFactory(user=UserFactory(username="lead_a2"), organization=world.org_a, role="lead_sa").user
    quiet = MembershipFactory(user=UserFactory(username="no_mail", email=""), organization=world.org_a,
                              role="lead_sa").user
    gone = MembershipFactory(user=UserFactory(username="gone", is_active=False), organization=world.org_a,
                             role="lead_sa").user
    return {"lead": lead, "customer": world.customer_a, "quiet": quiet, "gone": gone}


def _watched(world, people, visibility="shared"):
    item = InteractionFactory(organization=world.org_a, summary="EFA missing on p5", visibility=visibility,
                              owner=world.lead_a, severity="normal")
    item.watchers.set([people["lead"], people["customer"], people["quiet"], people["gone"], world.lead_a])
    return item


def _sent() -> dict[str, list[str]]:
    """Deliver every pending watcher delivery; each recipient's e-mail bodies."""
    for pk in NotificationDelivery.objects.filter(channel="watcher", status="pending").values_list("pk", flat=True):
        assert deliver.apply(args=[pk]).get() == "sent"
    got: dict[str, list[str]] = {}
    for message in mail.outbox:
        for to in message.to:
            got.setdefault(to, []).append(f"{message.subject}\n{message.body}")
    mail.outbox.clear()
    return got


def _edit(client, world, item, **changes):
    data = {"organization": world.org_a.pk, "kind": item.kind, "summary": item.summary, "body": item.body,
            "occurred_at": timezone.localtime(item.occurred_at).strftime("%Y-%m-%dT%H:%M"), "status": item.status,
            "severity": item.severity, "owner": item.owner_id, "visibility": item.visibility, "support_case_id": "",
            "resolution": "", "lesson": "", "watchers": [w.pk for w in item.watchers.all()], **changes}
    response = client.post(reverse("interactions:interaction_edit", kwargs={"pk": item.pk}), data)
    assert response.status_code == 302, response.content.decode()[:2000]


def test_a_change_on_the_edit_page_reaches_every_watcher_but_its_author(client, world, people):
    item = _watched(world, people)
    client.force_login(world.lead_a)
    _edit(client, world, item, status="resolved", severity="high")
    got = _sent()
    assert set(got) == {"lead_a2@example.com", "customer_a@example.com"}  # not the author, the address-less, the gone
    for body in got.values():
        assert "Status change: Open → Resolved" in body[0] and "Severity: Normal → High" in body[0]
        assert "EFA missing on p5" in body[0] and f"/interactions/{item.pk}/" in body[0]
    assert NotificationDelivery.objects.filter(channel="watcher", status="sent").count() == 2


def test_each_watcher_reads_the_change_in_their_own_language(client, world, people):
    people["lead"].language = "ja"
    people["lead"].save(update_fields=["language"])
    item = _watched(world, people)
    client.force_login(world.lead_a)  # the author reads English; the lines are each watcher's
    _edit(client, world, item, status="resolved", severity="high")
    url = reverse("interactions:interaction_comment", kwargs={"pk": item.pk})
    assert client.post(url, {"body": "Please run nccl-tests"}).status_code == 302
    got = _sent()
    japanese, english = "\n".join(got["lead_a2@example.com"]), "\n".join(got["customer_a@example.com"])
    assert "Status change" not in japanese and "Severity:" not in japanese and "commented:" not in japanese
    assert "重大度: " in japanese and "さんのコメント: Please run nccl-tests" in japanese
    assert "Status change: Open → Resolved" in english and "commented: Please run nccl-tests" in english


def test_internal_comments_reach_only_watchers_who_see_internal_entries(client, world, people):
    item = _watched(world, people)
    client.force_login(world.lead_a)
    url = reverse("interactions:interaction_comment", kwargs={"pk": item.pk})
    assert client.post(url, {"body": "Suspect a bad HBM stack", "internal": "on"}).status_code == 302
    assert set(_sent()) == {"lead_a2@example.com"}
    assert client.post(url, {"body": "Please run nccl-tests on two nodes"}).status_code == 302
    got = _sent()
    assert set(got) == {"lead_a2@example.com", "customer_a@example.com"}
    assert "Please run nccl-tests on two nodes" in got["customer_a@example.com"][0]
    assert "HBM" not in got["customer_a@example.com"][0]

    client.force_login(world.customer_a)  # the customer answers: the leads hear of it, the customer does not
    assert client.post(url, {"body": "Ran it: 3 GB/s"}).status_code == 302
    got = _sent()
    assert set(got) == {"lead_a2@example.com", "lead_a@example.com"} and "3 GB/s" in got["lead_a@example.com"][0]


def test_watchers_of_an_internal_interaction_who_may_not_read_it_hear_nothing(client, world, people):
    item = _watched(world, people, visibility="internal")
    client.force_login(world.lead_a)
    _edit(client, world, item, status="waiting_aws")
    assert set(_sent()) == {"lead_a2@example.com"}


def test_api_changes_and_fault_links_reach_watchers(client, world, people):
    item = _watched(world, people)
    client.force_login(world.lead_a)
    response = client.patch(reverse("interactions-api:interaction-detail", kwargs={"pk": item.pk}),
                            {"status": "waiting_customer"}, content_type="application/json")
    assert response.status_code == 200, response.content
    got = _sent()
    assert set(got) == {"lead_a2@example.com", "customer_a@example.com"}
    assert "Status change: Open → Waiting on customer" in got["customer_a@example.com"][0]

    fault = GpuFaultFactory(cluster=ClusterFactory(organization=world.org_a, name="p5-train"), hostname="node-3")
    response = client.patch(reverse("health-api:gpufault-detail", kwargs={"pk": fault.pk}),
                            {"interaction": item.pk}, content_type="application/json")
    assert response.status_code == 200
    got = _sent()
    assert set(got) == {"lead_a2@example.com", "customer_a@example.com"}
    assert "GPU fault: — → node-3" in got["lead_a2@example.com"][0] and "p5-train" in got["lead_a2@example.com"][0]


def test_a_failed_watcher_mail_is_recorded_and_the_change_kept(client, world, people, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing listens
    item = _watched(world, people)
    client.force_login(world.lead_a)
    _edit(client, world, item, status="resolved")
    deliveries = NotificationDelivery.objects.filter(channel="watcher")
    assert deliveries.count() == 2
    assert {deliver.apply(args=[pk]).get() for pk in deliveries.values_list("pk", flat=True)} == {"failed"}
    assert all("E-mail not sent" in d.error for d in deliveries.all())
    item.refresh_from_db()
    assert item.status == "resolved"


def test_a_watcher_who_left_the_organization_hears_nothing(client, world, people):
    item = _watched(world, people)
    item.watchers.add(world.customer_b)  # added while a member of A, say, and no longer one
    client.force_login(world.lead_a)
    url = reverse("interactions:interaction_comment", kwargs={"pk": item.pk})
    assert client.post(url, {"body": "Shared with the customer"}).status_code == 302
    assert "customer_b@example.com" not in _sent()


@pytest.mark.worker
def test_a_real_worker_sends_the_watcher_mail(celery_worker_process, client, world, people):
    """The worker process knows the "watcher" channel (registered when the app starts): the delivery is sent,
    not refused as a channel without settings."""
    import time

    item = _watched(world, people)
    client.force_login(world.lead_a)
    _edit(client, world, item, status="waiting_aws")
    deliveries = NotificationDelivery.objects.filter(channel="watcher")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and deliveries.filter(status="pending").exists():
        time.sleep(0.2)
    assert sorted(deliveries.values_list("status", "error")) == [("sent", ""), ("sent", "")]
