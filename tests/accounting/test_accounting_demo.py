"""The demo's accelerator-hours: one organization near full goodput, one idle for days (and notified once), one
whose run stalled (one open "training stalled?" fault)."""
from django.core.management import call_command

from clusters.accounting.demo_accounting import CLUSTERS
from clusters.accounting.models import AcceleratorUsage, IdleNotice
from clusters.health import stalls
from clusters.health.models import GpuFault
from clusters.models import Cluster


def test_demo_shows_a_busy_and_an_idle_organization(db):
    call_command("seed_demo")
    rows = AcceleratorUsage.objects.count()
    busy, idle_one, stalled = (Cluster.objects.get(name=name) for _, name, _, _ in CLUSTERS)
    for cluster, low, high in ((busy, 0.9, 1.0), (idle_one, 0.0, 0.05)):
        usage = list(AcceleratorUsage.objects.filter(cluster=cluster))
        assert len(usage) >= 4 * 24
        share = sum(r.busy for r in usage) / sum(r.healthy for r in usage)
        assert low <= share <= high, (cluster.name, share)
        assert all(r.held >= r.healthy >= r.busy for r in usage)
    assert list(GpuFault.objects.filter(kind=stalls.KIND, cleared_at__isnull=True).values_list("cluster", flat=True)) == [
        stalled.pk]
    notice = IdleNotice.objects.get(cluster=idle_one)
    assert notice.ended is None and notice.lost > 0
    call_command("seed_demo")
    assert IdleNotice.objects.count() == 1 and AcceleratorUsage.objects.count() >= rows
    assert GpuFault.objects.filter(kind=stalls.KIND).count() == 1
