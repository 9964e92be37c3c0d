"""Demo accelerator-hours of the launched demo clusters (``sandbox.clusters.READY``): they are made when the
demo starts, while the milestones say their organizations validated a cluster weeks ago. So that an organization
page and the weekly review read figures consistent with those milestones, each ready one is taken as up since
the day before its organization's current-cycle "cluster validated" milestone (else since its reservation
began), and not before the reservation it was launched into began; its launch is moved back to then, and its
hours from then to the seed are stored as the hourly computation would have stored them: every accelerator
held, one node out for an hour now and then, and busy at the organization's own share (a pre-training run near
full, continued pre-training and Trainium lower). Then the roll-up and the day sums run as beat runs them.
Idempotent: a cluster with rows older than two days is left alone. The hourly task recomputes the last hours
from the health reports the demo keeps receiving."""
from __future__ import annotations

import datetime
import random
from decimal import Decimal

from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from clusters.accounting import services
from clusters.accounting.compute import HOUR, accelerators_per_node, floor_hour, q
from clusters.accounting.models import AcceleratorUsage, Granularity
from clusters.choices import ClusterState
from clusters.launches import capacity
from clusters.models import Cluster
from portal.core.models import TimelineEntry
from portal.engagement.models import Milestone
from sandbox.clusters import READY
from workloads.models import CapacityReservation

# Cluster name → the busy share of its healthy accelerators.
BUSY = {"kotoba-p5-pretrain": 0.88, "shirakawa-p5-cpt": 0.81, "sakura-trn1": 0.74, "minato-p5": 0.67}
FALLBACK_DAYS = 14


def up_since(cluster: Cluster, today: datetime.date) -> datetime.datetime:
    validated = (Milestone.objects.filter(organization=cluster.organization, kind="cluster_validated",
                                          cycle__status="active").order_by("-reached_on")
                 .values_list("reached_on", flat=True).first())
    wired = [value for name, value in ((cluster.parameters or {}).get("cluster") or {}).items()
             if name in capacity.PARAMETER_NAMES and value]
    began = (CapacityReservation.objects.filter(reservation_id__in=wired, start__lte=today)
             .values_list("start", flat=True).first())
    day = (validated - datetime.timedelta(days=1) if validated is not None
           else began or today - datetime.timedelta(days=FALLBACK_DAYS))
    if began is not None:  # capacity launched into a reservation runs from its start, not before
        day = max(day, began)
    return services.midnight(day) + datetime.timedelta(hours=9)


def move_launch(cluster: Cluster, since: datetime.datetime) -> None:
    """The cluster was made, and its state changes recorded, at ``since`` (a few minutes apart, as a launch goes)."""
    Cluster.objects.filter(pk=cluster.pk).update(created=since - datetime.timedelta(minutes=40))
    entries = (TimelineEntry.objects.filter(content_type=ContentType.objects.get_for_model(Cluster), object_id=cluster.pk)
               .order_by("occurred_at", "id"))
    count = entries.count()
    for index, entry in enumerate(entries):
        TimelineEntry.objects.filter(pk=entry.pk).update(
            occurred_at=since - datetime.timedelta(minutes=5 * (count - 1 - index)))


def rows(cluster: Cluster, since: datetime.datetime, until: datetime.datetime) -> list[AcceleratorUsage]:
    per_node = accelerators_per_node(cluster.instance_type)
    held = q(cluster.node_count * per_node)
    share = BUSY.get(cluster.name, 0.7)
    rng = random.Random(cluster.name)
    made, hour = [], floor_hour(since) + HOUR
    while hour < until:
        healthy = held - (per_node if rng.random() < 0.03 else 0)  # one node out for the hour now and then
        busy = min(healthy, q(Decimal(healthy) * Decimal(str(round(rng.uniform(share - 0.04, share + 0.04), 4)))))
        made.append(AcceleratorUsage(cluster=cluster, organization_id=cluster.organization_id, start=hour,
                                     granularity=Granularity.HOUR, held=held, healthy=q(healthy), busy=busy,
                                     measured=q(healthy), reports=12))
        hour += HOUR
    return made


def seed(context: dict) -> dict:
    now = timezone.now()
    today = timezone.localdate(now)
    names = [spec[1] for spec in READY]
    firsts = []
    for cluster in (Cluster.objects.filter(name__in=names, state=ClusterState.READY).select_related("organization")
                    .order_by("name")):
        if AcceleratorUsage.objects.filter(cluster=cluster, start__lt=now - datetime.timedelta(days=2)).exists():
            continue
        since = up_since(cluster, today)
        move_launch(cluster, since)
        made = rows(cluster, since, floor_hour(now))
        AcceleratorUsage.objects.bulk_create(
            made, batch_size=2000, update_conflicts=True, unique_fields=["cluster", "start"],
            update_fields=["organization", "granularity", "held", "healthy", "busy", "measured", "reports"])
        firsts.append(since)
    if firsts:
        services.roll_up(now)
        services.summarize(timezone.localtime(min(firsts)).date(), today)
    return context
