"""The notification service: real HTTP to a local Slack-webhook stand-in, Django's mail outbox,
retries then a recorded failure, and never a blocked save."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core import mail
from django.urls import reverse

from portal.core.models import NotificationDelivery, NotificationSetting
from portal.core.notifications import MAX_RETRIES, Event, deliver, notify
from workloads.interactions.models import Interaction


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.received.append(json.loads(body))
        status = self.server.status
        self.send_response(status)
        self.end_headers()
        self.wfile.write(b"ok" if status == 200 else b"invalid_token")

    def log_message(self, *args):
        pass


@pytest.fixture
def webhook(outbound_allows_local):
    """A local HTTP server standing in for Slack's incoming webhook; records what it is sent."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.received, server.status = [], 200
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}/services/T000/B000/XXXX"
    yield server
    server.shutdown()
    server.server_close()


def _run_all():
    return [deliver.apply(args=[pk]).get() for pk in NotificationDelivery.objects.values_list("pk", flat=True)]


def test_slack_and_email_receive_an_event(world, webhook):
    NotificationSetting.objects.create(name="#geniac-leads", slack_webhook_url=webhook.url,
                                       email_recipients="leads@example.com, pm@example.com",
                                       min_severity="high", include_internal=True)
    ids = notify(Event(kind="interaction.created", title="EFA down at Alpha", organization_id=world.org_a.pk,
                       severity="critical", body="32 devices missing", url="/interactions/1/"))
    assert len(ids) == 2
    assert _run_all() == ["sent", "sent"]
    assert len(webhook.received) == 1 and "EFA down at Alpha" in webhook.received[0]["text"]
    assert "CRITICAL" in webhook.received[0]["text"]
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["leads@example.com", "pm@example.com"]
    assert "EFA down at Alpha" in mail.outbox[0].subject and "32 devices missing" in mail.outbox[0].body
    assert set(NotificationDelivery.objects.values_list("status", flat=True)) == {"sent"}


def test_channels_filter_by_organization_severity_and_visibility(world, webhook):
    NotificationSetting.objects.create(name="alpha customers", organization=world.org_a, slack_webhook_url=webhook.url,
                                       min_severity="normal", include_internal=False)
    NotificationSetting.objects.create(name="beta", organization=world.org_b, email_recipients="b@example.com",
                                       min_severity="low", include_internal=True)
    NotificationSetting.objects.create(name="program", email_recipients="pm@example.com", min_severity="critical",
                                       include_internal=True)
    assert notify(Event(kind="x", title="internal high", organization_id=world.org_a.pk, severity="high")) == []
    shared = notify(Event(kind="x", title="shared high", organization_id=world.org_a.pk, severity="high",
                          visibility="shared"))
    assert [NotificationDelivery.objects.get(pk=pk).setting.name for pk in shared] == ["alpha customers"]
    assert notify(Event(kind="x", title="shared low", organization_id=world.org_a.pk, severity="low",
                        visibility="shared")) == []
    critical = notify(Event(kind="x", title="internal critical", organization_id=world.org_a.pk, severity="critical"))
    assert [NotificationDelivery.objects.get(pk=pk).setting.name for pk in critical] == ["program"]


def test_failed_slack_send_is_retried_then_recorded(world, webhook):
    webhook.status = 500
    NotificationSetting.objects.create(name="broken", slack_webhook_url=webhook.url, min_severity="low",
                                       include_internal=True)
    (pk,) = notify(Event(kind="x", title="will fail", severity="high"))
    assert deliver.apply(args=[pk]).get() == "failed"
    delivery = NotificationDelivery.objects.get(pk=pk)
    assert delivery.status == "failed" and delivery.attempts == MAX_RETRIES + 1
    assert "500" in delivery.error and delivery.finished_at is not None
    assert len(webhook.received) == MAX_RETRIES + 1


def test_failed_email_is_recorded(world, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 9, 1
    NotificationSetting.objects.create(name="mail", email_recipients="x@example.com", min_severity="low",
                                       include_internal=True)
    (pk,) = notify(Event(kind="x", title="no mail server", severity="high"))
    assert deliver.apply(args=[pk]).get() == "failed"
    assert "E-mail not sent" in NotificationDelivery.objects.get(pk=pk).error


def test_high_interaction_notifies_after_commit_and_saving_never_waits(
    client, world, webhook, django_capture_on_commit_callbacks
):
    NotificationSetting.objects.create(name="leads", slack_webhook_url="http://127.0.0.1:9/unreachable",
                                       min_severity="high", include_internal=True)
    client.force_login(world.lead_a)
    url = reverse("interactions:interaction_quick_log", args=[world.org_a.slug])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(url, {"kind": "support_case", "summary": "All-reduce at 3 GB/s",
                                     "severity": "critical", "visibility": "internal"})
    assert response.status_code == 302 and Interaction.objects.filter(summary="All-reduce at 3 GB/s").exists()
    delivery = NotificationDelivery.objects.get()
    assert delivery.status == "pending" and delivery.event_kind == "interaction.created"
    assert len(callbacks) == 1  # the delivery task is sent after commit, not inside the request's transaction
    assert deliver.apply(args=[delivery.pk]).get() == "failed"
    assert Interaction.objects.filter(summary="All-reduce at 3 GB/s").exists()


def test_normal_interactions_do_not_notify(client, world):
    NotificationSetting.objects.create(name="leads", email_recipients="l@example.com", min_severity="high",
                                       include_internal=True)
    client.force_login(world.lead_a)
    client.post(reverse("interactions:interaction_quick_log", args=[world.org_a.slug]),
                {"kind": "chat", "summary": "routine", "severity": "normal", "visibility": "shared"})
    assert not NotificationDelivery.objects.exists()


@pytest.mark.worker
def test_real_worker_delivers_to_the_webhook(outbound_allows_local, celery_worker_process, world, webhook):
    NotificationSetting.objects.create(name="leads", slack_webhook_url=webhook.url, min_severity="high",
                                       include_internal=True)
    (pk,) = notify(Event(kind="interaction.escalated", title="Escalated via worker", severity="high"))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and NotificationDelivery.objects.get(pk=pk).status == "pending":
        time.sleep(0.2)
    assert NotificationDelivery.objects.get(pk=pk).status == "sent"
    assert webhook.received and "Escalated via worker" in webhook.received[0]["text"]
