"""A customer opening the interaction form is told how to ask (their Slack channel, their lead SA by name)
with a 403, never another organization's; a cluster's trend with one report says so instead of an empty chart."""
from __future__ import annotations

import pytest
from django.urls import reverse

from clusters.health.ingest import service as services
from portal.engagement.models import SlackChannelLink
from tests.health.factories_health import ClusterFactory, sample

pytestmark = pytest.mark.django_db


def test_a_customer_is_told_how_to_ask_instead_of_a_bare_403(client, world):
    world.lead_a.first_name, world.lead_a.last_name = "Aiko", "Sato"
    world.lead_a.save()
    SlackChannelLink.objects.create(channel_id="C0A", name="#geniac-alpha", organization=world.org_a)
    SlackChannelLink.objects.create(channel_id="C0AI", name="#alpha-internal", organization=world.org_a,
                                    customer_facing=False)
    SlackChannelLink.objects.create(channel_id="C0B", name="#geniac-beta", organization=world.org_b)
    client.force_login(world.customer_a)
    response = client.get(reverse("interactions:interaction_add"))
    assert response.status_code == 403
    html = response.content.decode()
    assert "#geniac-alpha" in html and "Aiko Sato" in html and "lead_a@example.com" in html
    assert "#alpha-internal" not in html and "#geniac-beta" not in html and "lead_b" not in html
    assert client.post(reverse("interactions:interaction_add"), {"organization": world.org_a.pk}).status_code == 403


def test_leads_still_get_the_form(client, world):
    client.force_login(world.lead_a)
    assert client.get(reverse("interactions:interaction_add")).status_code == 200


def test_a_trend_with_one_report_says_so(client, world):
    cluster = ClusterFactory(organization=world.org_a)
    services.ingest(cluster, sample("dcgm_p5_healthy.prom"), "push")
    client.force_login(world.customer_a)
    url = reverse("health:cluster_health", kwargs={"pk": cluster.pk})
    html = client.get(url).content.decode()
    assert "One report so far" in html and 'id="health-trend-data"' not in html
    services.ingest(cluster, sample("dcgm_p5_healthy.prom"), "push")
    html = client.get(url).content.decode()
    assert "One report so far" not in html and 'id="health-trend-data"' in html
    client.force_login(world.customer_b)
    assert client.get(url).status_code == 404
