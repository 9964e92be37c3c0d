"""Slack captures that did not become interactions are shown to the lead SAs of the channel's organization on
their home page, with the reason the capturer was told; nobody else sees them there."""
from __future__ import annotations

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from portal.engagement.models import SlackCapture, SlackChannelLink
from tests.queries import assert_flat_queries

pytestmark = pytest.mark.django_db


def _capture(link, text, status, *, days_ago=0, user=None, error="Slack answered ratelimited five times"):
    capture = SlackCapture.objects.create(
        team_id="T0TEAM", slack_user_id="U0LEAD", channel_id=link.channel_id if link else "C0NOLINK",
        message_ts=f"{timezone.now().timestamp():.6f}", thread_ts="1.0", message={"text": text}, link=link,
        user=user, status=status, error=error if status in ("failed", "refused") else "")
    if days_ago:
        SlackCapture.objects.filter(pk=capture.pk).update(created=timezone.now() - datetime.timedelta(days=days_ago))
    return capture


@pytest.fixture
def links(world):
    return (SlackChannelLink.objects.create(channel_id="C0ALPHA", name="#geniac-alpha", organization=world.org_a),
            SlackChannelLink.objects.create(channel_id="C0BETA", name="#geniac-beta", organization=world.org_b))


def test_a_lead_sees_the_captures_of_their_organizations_that_did_not_log(client, world, links):
    alpha, beta = links
    _capture(alpha, "NCCL   falls back\nto sockets on 4 nodes", "failed", user=world.lead_a)
    _capture(alpha, "Refused one", "refused", error="This channel's organization has no lead SA you are")
    _capture(alpha, "Logged fine", "done")
    _capture(alpha, "Still waiting", "pending")
    _capture(alpha, "Long ago", "failed", days_ago=20)
    _capture(beta, "BETA-ONLY capture", "failed")
    _capture(None, "From a channel nobody linked", "refused")
    client.force_login(world.lead_a)
    page = client.get(reverse("home"), follow=True).content.decode()
    assert "Slack captures that were not logged" in page
    assert "NCCL falls back to sockets on 4 nodes" in page and "Slack answered ratelimited five times" in page
    assert "Refused one" in page and "has no lead SA" in page
    for hidden in ("Logged fine", "Still waiting", "Long ago", "BETA-ONLY", "nobody linked"):
        assert hidden not in page, hidden
    client.force_login(world.lead_b)
    page = client.get(reverse("home"), follow=True).content.decode()
    assert "BETA-ONLY capture" in page and "NCCL falls back" not in page


def test_no_section_without_failed_captures_and_customers_never_see_captures(client, world, links):
    alpha, _ = links
    _capture(alpha, "Logged fine", "done")
    client.force_login(world.lead_a)
    assert "Slack captures that were not logged" not in client.get(reverse("home"), follow=True).content.decode()
    _capture(alpha, "CUSTOMER-MUST-NOT-SEE", "failed")
    assert list(SlackCapture.objects.restrict(world.customer_a)) == []
    assert SlackCapture.objects.restrict(world.pm).count() == 2  # program managers read every organization's
    client.force_login(world.customer_a)
    assert "CUSTOMER-MUST-NOT-SEE" not in client.get(reverse("home"), follow=True).content.decode()


def test_the_section_costs_the_same_queries_however_many_captures(client, world, links):
    alpha, _ = links
    client.force_login(world.lead_a)

    def grow(n):
        for i in range(n):
            _capture(alpha, f"capture {i}", "failed")

    assert_flat_queries(client, reverse("portal:lead_home"), grow=grow, sizes=(2, 12))
