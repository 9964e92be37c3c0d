"""The migration that stores each fault's program week fills it in for the faults already stored."""
import datetime

import pytest
from django.utils import timezone

from portal.core.weeks import week_of
from tests.health.factories_health import ClusterFactory
from tests.migrations import migrate, rolled_back_to


@pytest.mark.django_db(transaction=True)
def test_faults_stored_before_get_their_week():
    cluster = ClusterFactory()  # only the health app's migrations are rolled back: the cluster is today's
    with rolled_back_to([("health", "0007_merge_0004_pull_status_0006_merge_20261201_2205")]) as old:
        Fault = old.get_model("health", "GpuFault")
        now = timezone.now()
        seen = [now - datetime.timedelta(days=d, hours=h) for d in (0, 3, 9, 40) for h in (0, 13)]
        for k, when in enumerate(seen):
            Fault.objects.create(cluster_id=cluster.pk, hostname=f"ip-{k}", kind="xid", severity="critical",
                                 verdict="reboot", meaning="m", action="a", first_seen=when, last_seen=when)
        migrate([("health", "0008_fault_first_week")])
        from clusters.health.models import GpuFault

        assert sorted(GpuFault.objects.values_list("first_seen", "first_week")) == sorted(
            (when, week_of(when)) for when in seen)
