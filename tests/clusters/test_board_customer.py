"""A customer's launch-day board measures their own organization's clusters against their own quota (the
program's 127 is the program manager's); counts are pluralized."""
from __future__ import annotations

import pytest
from django.urls import reverse

from clusters.choices import ClusterState
from tests.health.factories_health import ClusterFactory
from tests.workloads.factories_workloads import InstanceQuotaFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def day(world, settings):
    settings.LAUNCH_DAY_TARGET = "p5.48xlarge=127,trn1.32xlarge=24"
    InstanceQuotaFactory(organization=world.org_a, instance_type_name="p5.48xlarge", count=16)
    InstanceQuotaFactory(organization=world.org_a, instance_type_name="p5.48xlarge", count=8,
                         region="us-east-1")
    InstanceQuotaFactory(organization=world.org_b, instance_type_name="p5.48xlarge", count=64)
    ClusterFactory(organization=world.org_a, name="a-p5", node_count=16, state=ClusterState.READY)
    ClusterFactory(organization=world.org_b, name="b-p5", node_count=40, state=ClusterState.READY)


def test_a_customer_sees_their_clusters_against_their_quota(client, world, day):
    client.force_login(world.customer_a)
    response = client.get(reverse("clusters:launch_day"))
    by_type = {r["instance_type"]: r for r in response.context["by_type"]}
    assert set(by_type) == {"p5.48xlarge"}  # no program target for types they hold no quota of
    assert (by_type["p5.48xlarge"]["ready"], by_type["p5.48xlarge"]["target"], by_type["p5.48xlarge"]["percent"]) \
        == (16, 24, 67)
    html = response.content.decode()
    assert "against your quota" in html and "16 of 24 instances ready" in html
    assert "127" not in html and "Beta Works" not in html
    assert "1 cluster " in html and "1 clusters" not in html


def test_the_program_manager_and_leads_keep_the_programs_target(client, world, day):
    for who in (world.pm, world.lead_a):
        client.force_login(who)
        html = client.get(reverse("clusters:launch_day")).content.decode()
        assert "of 127 instances ready" in html and "the day's target" in html
    client.force_login(world.pm)
    assert "2 clusters" in client.get(reverse("clusters:launch_day")).content.decode()


def test_another_organizations_quota_is_never_counted(client, world, day):
    client.force_login(world.customer_b)
    html = client.get(reverse("clusters:launch_day")).content.decode()
    assert "40 of 64 instances ready" in html and "Alpha Labs" not in html
