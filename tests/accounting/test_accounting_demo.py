"""The demo's accelerator-hours: one organization near full goodput, one idle for days (and notified once), one
whose run stalled (one open "training stalled?" fault)."""
from django.core.management import call_command

from clusters.accounting.models import AcceleratorUsage, IdleNotice
from clusters.health.faults import stalls
from clusters.health.models import GpuFault
from clusters.models import Cluster
from sandbox.accelerator_hours import CLUSTERS
from workloads.models import CapacityReservation


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


def test_the_launched_demo_clusters_have_a_history_as_old_as_their_validation(db):
    """kotoba-p5-pretrain is made when the demo starts; its organization validated a cluster weeks ago: the seed
    moves its launch back to then and stores its hours, so the organization page does not read "reserved but not
    held" and 0 % goodput."""
    import datetime

    from django.utils import timezone

    from clusters.accounting import services
    from portal.engagement.models import Milestone

    call_command("seed_demo")
    cluster = Cluster.objects.get(name="kotoba-p5-pretrain")
    validated = Milestone.objects.get(organization=cluster.organization, kind="cluster_validated",
                                      cycle__status="active").reached_on
    reservation = CapacityReservation.objects.get(reservation_id=cluster.parameters["cluster"]["CapacityReservationId"])
    assert timezone.localtime(cluster.created).date() == max(validated - datetime.timedelta(days=1), reservation.start)
    usage = AcceleratorUsage.objects.filter(cluster=cluster)
    assert usage.filter(granularity="day").exists() and usage.filter(granularity="hour").count() >= 6 * 7 * 24 - 48
    assert all(r.held >= r.healthy >= r.busy for r in usage)
    now = timezone.now()
    week = services.organization_figures([cluster.organization_id], now - datetime.timedelta(days=7), now)
    figures = week[cluster.organization_id]
    assert figures["lost_unheld"] < 0.05 * figures["reserved"]  # its 16-node reservation is held
    assert 0.8 <= figures["goodput"] <= 0.95, figures
    shirakawa = Cluster.objects.get(name="shirakawa-p5-cpt")  # on a capacity block that began 20 days ago
    figures = services.organization_figures([shirakawa.organization_id], now - datetime.timedelta(days=28), now)
    assert figures[shirakawa.organization_id]["held"] <= figures[shirakawa.organization_id]["reserved"] * 1.05
    rows = usage.count()
    call_command("seed_demo")
    assert AcceleratorUsage.objects.filter(cluster=cluster).count() == rows
    assert Cluster.objects.get(pk=cluster.pk).created == cluster.created
