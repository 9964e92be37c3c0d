"""The health demo seed goes through the real ingestion service and is idempotent."""
from django.core.management import call_command

from clusters.accounting.demo_accounting import CLUSTERS as ACCOUNTING_CLUSTERS
from clusters.health.models import GpuFault, HealthReport, NodeHealth, ValidationRun
from clusters.models import Cluster
from clusters.remediation.demo import NAME as REMEDIATION_CLUSTER


def test_seed_twice_changes_nothing(db):
    call_command("seed_demo")
    counts = (HealthReport.objects.count(), ValidationRun.objects.count(), GpuFault.objects.count(),
              Cluster.objects.count())
    call_command("seed_demo")
    assert (HealthReport.objects.count(), ValidationRun.objects.count(), GpuFault.objects.count(),
            Cluster.objects.count()) == counts
    accounting = [name for _, name, _, _ in ACCOUNTING_CLUSTERS]  # four days of hourly reports each
    ready = Cluster.objects.filter(state="ready").exclude(name__in=accounting).count()
    # one report per ready cluster (a Trainium one from neuron-monitor's figures); launching and failed ones report
    # nothing
    assert HealthReport.objects.exclude(cluster__name__in=accounting).count() == ready >= 2
    assert sorted(ValidationRun.objects.values_list("verdict", "transport")) == [("fail", "socket"), ("pass", "efa")]
    faulty = NodeHealth.objects.filter(verdict="reboot").exclude(cluster__name=REMEDIATION_CLUSTER).get()
    assert faulty.missing_gpus == [5]
    assert set(GpuFault.objects.values_list("kind", flat=True)) >= {"xid", "missing_gpu"}
