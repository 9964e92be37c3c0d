"""A specialist's answer reaches the lead SA who asked: by e-mail, and on the channels that take internal
events (as "escalated" does); never the customer's channel, never the specialist who answered."""
from __future__ import annotations

import pytest
from django.core import mail
from django.urls import reverse

from portal.core.models import NotificationDelivery, NotificationSetting
from portal.core.notifications import deliver
from portal.engagement import services
from tests.engagement.factories_engagement import specialist, target
from tests.factories import MembershipFactory, UserFactory
from tests.interactions.factories_interactions import InteractionFactory

pytestmark = pytest.mark.django_db


def _deliver_all() -> None:
    for pk in NotificationDelivery.objects.filter(status="pending").values_list("pk", flat=True):
        assert deliver.apply(args=[pk]).get() == "sent"


def _answer(client, escalation, who, text="Set FI_EFA_USE_DEVICE_RDMA=1."):
    client.force_login(who)
    client.post(reverse("engagement:escalation_transition", args=[escalation.pk, "accept"]))
    NotificationDelivery.objects.all().delete()
    url = reverse("engagement:escalation_transition", args=[escalation.pk, "answer"])
    return client.post(url, {"answer": text})


def test_the_answer_is_mailed_to_the_lead_who_asked_and_sent_to_internal_channels(client, world):
    NotificationSetting.objects.create(name="#leads", email_recipients="leads@example.com", min_severity="low",
                                       include_internal=True)
    NotificationSetting.objects.create(name="customer", organization=world.org_a, min_severity="low",
                                       email_recipients="customer-channel@example.com", include_internal=False)
    interaction = InteractionFactory(organization=world.org_a, summary="NCCL slow on p5", severity="high")
    escalation = services.raise_escalation(interaction, world.lead_a, target("frameworks"), "why 30 GB/s?")
    NotificationDelivery.objects.all().delete()
    mail.outbox.clear()
    fw = specialist("fw_specialist", "frameworks")

    assert _answer(client, escalation, fw).status_code == 302
    _deliver_all()
    by_recipient = {to: m for m in mail.outbox for to in m.to}
    assert set(by_recipient) == {"lead_a@example.com", "leads@example.com"}
    mine = by_recipient["lead_a@example.com"]
    assert "answered" in mine.subject and "NCCL slow on p5" in mine.subject
    assert "FI_EFA_USE_DEVICE_RDMA" in mine.body and escalation.get_absolute_url() in mine.body
    assert set(NotificationDelivery.objects.values_list("event_kind", flat=True)) == {"interaction.escalation_answered"}


def test_without_a_requester_every_lead_sa_of_the_organization_hears_but_not_other_organizations(client, world):
    other_lead = MembershipFactory(user=UserFactory(username="lead_a2"), organization=world.org_a,
                                   role="lead_sa").user
    interaction = InteractionFactory(organization=world.org_a)
    escalation = services.raise_escalation(interaction, None, target("frameworks"), "who?")
    mail.outbox.clear()
    assert _answer(client, escalation, specialist("fw_specialist", "frameworks")).status_code == 302
    _deliver_all()
    assert sorted(to for m in mail.outbox for to in m.to) == sorted([world.lead_a.email, other_lead.email])


def test_other_transitions_tell_nobody(client, world):
    interaction = InteractionFactory(organization=world.org_a)
    escalation = services.raise_escalation(interaction, world.lead_a, target("frameworks"), "who?")
    NotificationDelivery.objects.all().delete()
    client.force_login(specialist("fw_specialist", "frameworks"))
    client.post(reverse("engagement:escalation_transition", args=[escalation.pk, "accept"]))
    assert not NotificationDelivery.objects.exists()


def test_another_team_cannot_answer_and_nobody_is_told(client, world):
    interaction = InteractionFactory(organization=world.org_a)
    escalation = services.raise_escalation(interaction, world.lead_a, target("frameworks"), "who?")
    NotificationDelivery.objects.all().delete()
    response = _answer(client, escalation, specialist("ec2_specialist", "ec2"))
    assert response.status_code in (302, 403, 404)
    escalation.refresh_from_db()
    assert escalation.state in ("requested", "accepted") and not NotificationDelivery.objects.exists()
