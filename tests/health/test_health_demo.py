"""The health demo seed goes through the real ingestion service and is idempotent."""
from django.core.management import call_command

from clusters.health.models import GpuFault, HealthReport, NodeHealth, ValidationRun
from clusters.models import Cluster
from sandbox.accelerator_hours import CLUSTERS as ACCOUNTING_CLUSTERS
from sandbox.remediation import NAME as REMEDIATION_CLUSTER


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


def test_the_demos_exporters_push_a_cluster_whose_report_is_old(db, world):
    """``manage.py push_demo_health --once``: a ready cluster last reported 20 minutes ago reports again, every node
    of it; one reported a moment ago is left alone."""
    import datetime
    import io

    from django.utils import timezone

    from clusters.health import current
    from clusters.health.ingest import service as health
    from sandbox.health import nodes_scrape
    from tests.health.factories_health import ClusterFactory

    cluster = ClusterFactory(organization=world.org_a, name="old-p5", node_count=2, instance_type="p5.48xlarge",
                             state="ready")
    earlier = timezone.now() - datetime.timedelta(minutes=20)
    health.ingest(cluster, nodes_scrape(["ip-10-9-0-1", "ip-10-9-0-2"], {"ip-10-9-0-2"}), "push", received_at=earlier)
    assert current.not_reporting([cluster.pk]) == {cluster.pk: 2}
    out = io.StringIO()
    call_command("push_demo_health", "--once", stdout=out)
    assert "pushed 1 cluster report" in out.getvalue()
    assert current.not_reporting([cluster.pk]) == {cluster.pk: 0}
    assert GpuFault.objects.filter(cluster=cluster, hostname="ip-10-9-0-2", kind="xid", cleared_at=None).exists()
    out = io.StringIO()
    call_command("push_demo_health", "--once", stdout=out)
    assert out.getvalue() == ""
