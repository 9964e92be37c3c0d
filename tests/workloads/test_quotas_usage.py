"""The usage module: clusters' instances against quotas per type, region and date, in constant queries."""
import datetime

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from clusters.models import Cluster
from tests.clusters.factories_clusters import ClusterFactory
from tests.factories import OrganizationFactory
from tests.queries import assert_flat_queries, count_queries
from tests.workloads.factories_workloads import InstanceQuotaFactory
from workloads import usage

TODAY = timezone.localdate


def cluster(org, n, itype="p5.48xlarge", region="ap-northeast-1", state="ready", name=None):
    return ClusterFactory(organization=org, name=name or f"c{Cluster.objects.count()}", instance_type=itype,
                          region=region, node_count=n, state=state)


def test_held_counts_holding_states_and_sagemaker_names_together(world):
    cluster(world.org_a, 4)
    cluster(world.org_a, 2, itype="ml.p5.48xlarge", state="creating")
    cluster(world.org_a, 8, state="failed")
    cluster(world.org_a, 8, state="deleted")
    cluster(world.org_a, 3, region="us-east-1")
    cluster(world.org_b, 5)
    held = usage.held()
    assert held[(world.org_a.pk, "p5.48xlarge", "ap-northeast-1")] == 6
    assert held[(world.org_a.pk, "p5.48xlarge", "us-east-1")] == 3
    assert held[(world.org_b.pk, "p5.48xlarge", "ap-northeast-1")] == 5
    assert usage.held([world.org_b.pk]) == {(world.org_b.pk, "p5.48xlarge", "ap-northeast-1"): 5}
    assert usage.held_for(world.org_a, "ml.p5.48xlarge", "ap-northeast-1") == 6


def test_quota_left_on_a_date(world):
    today = TODAY()
    InstanceQuotaFactory(organization=world.org_a, count=16, start=today - datetime.timedelta(days=5),
                         end=today + datetime.timedelta(days=5))
    InstanceQuotaFactory(organization=world.org_a, count=8, start=today + datetime.timedelta(days=3),
                         end=today + datetime.timedelta(days=30))
    cluster(world.org_a, 10)
    assert usage.quota_left(world.org_a, "p5.48xlarge", "ap-northeast-1") == 6
    assert usage.quota_left(world.org_a, "p5.48xlarge", "ap-northeast-1", today + datetime.timedelta(days=4)) == 14
    assert usage.quota_left(world.org_a, "p5.48xlarge", "ap-northeast-1", today + datetime.timedelta(days=10)) == -2
    assert usage.quota_left(world.org_a, "trn1.32xlarge", "us-east-1") == 0


def test_usage_rows_and_program_totals_are_scoped(world):
    InstanceQuotaFactory(organization=world.org_a, count=16)
    InstanceQuotaFactory(organization=world.org_b, count=8)
    InstanceQuotaFactory(organization=world.org_b, instance_type_name="trn1.32xlarge", region="us-east-1", count=24)
    cluster(world.org_a, 4)
    cluster(world.org_b, 10)  # over quota
    rows = usage.usage_rows(world.pm)
    assert [(r.organization_id, r.instance_type_name, r.quota, r.used, r.left) for r in rows] == [
        (world.org_a.pk, "p5.48xlarge", 16, 4, 12),
        (world.org_b.pk, "p5.48xlarge", 8, 10, -2),
        (world.org_b.pk, "trn1.32xlarge", 0 + 24, 0, 24),
    ]
    assert rows[1].over and rows[1].percent == 100 and rows[0].percent == 25
    totals = {t.instance_type_name: (t.quota, t.used, t.organizations) for t in usage.program_totals(rows)}
    assert totals == {"p5.48xlarge": (24, 14, 2), "trn1.32xlarge": (24, 0, 1)}
    assert [r.organization_id for r in usage.usage_rows(world.customer_a)] == [world.org_a.pk]
    assert usage.usage_rows(world.customer_a, world.org_b) == []


def test_usage_rows_query_count_is_constant(world):
    assert count_queries(lambda: usage.usage_rows(world.lead_a)) == 4  # roles, organizations, quotas, clusters

    def grow(n):
        for _ in range(n):
            org = OrganizationFactory()
            InstanceQuotaFactory(organization=org)
            cluster(org, 2, name=f"x{org.pk}")

    # after the first call the roles are cached on the user: organizations, quotas, clusters
    small, large = assert_flat_queries(lambda: usage.usage_rows(world.pm), grow=grow, sizes=(1, 30), at_most=3)
    assert small == large == 3 and len(usage.usage_rows(world.pm)) == 30


def test_reducing_a_quota_below_what_clusters_hold_is_refused(world):
    quota = InstanceQuotaFactory(organization=world.org_a, count=16)
    cluster(world.org_a, 12)
    quota.count = 8
    with pytest.raises(ValidationError) as exc:
        quota.full_clean()
    assert exc.value.message_dict["count"] == [
        "Clusters of this organization hold 12 × p5.48xlarge in ap-northeast-1; this change would leave a quota of 8 "
        "today. Scale the clusters down first."
    ]
    quota.count = 12
    quota.full_clean()
    quota.refresh_from_db()
    quota.end = TODAY() - datetime.timedelta(days=1)
    with pytest.raises(ValidationError):
        quota.full_clean()


def test_an_overused_quota_may_still_grow(world):
    quota = InstanceQuotaFactory(organization=world.org_a, count=4)
    cluster(world.org_a, 12)
    quota.count = 8
    quota.full_clean()


@pytest.mark.parametrize(("changes", "field"), [
    ({"count": 0}, "count"), ({"count": -4}, "count"), ({"instance_type_name": "p99.large"}, "instance_type_name"),
    ({"region": "mars-north-1"}, "region"), ({"end": datetime.date(2020, 1, 1)}, "end"),
])
def test_quota_bad_input(world, changes, field):
    quota = InstanceQuotaFactory.build(organization=world.org_a, **changes)
    with pytest.raises(ValidationError) as exc:
        quota.full_clean()
    assert field in exc.value.message_dict
