"""Demo accelerator-hours: four days of hourly health reports through the real ingestion service for three
clusters under reservations in force, one training near full goodput, one idle for days, one whose run stalls in
the last half hour (busy with its EFA traffic moving, then near zero with the traffic flat: a "training stalled?"
fault), then the hourly computation and the idle check as the beat runs them. Idempotent: a cluster that has
reports is left alone."""
from __future__ import annotations

import datetime
import re

from django.utils import timezone

from clusters.accounting import idle, services
from clusters.accounting.compute import HOUR, floor_hour
from clusters.health.choices import Source
from clusters.health.ingest import service as health
from clusters.health.models import HealthReport
from clusters.models import Cluster
from sandbox import clusters as demo_clusters
from sandbox.accelerator_history import move_launch
from sandbox.health import _sample
from workloads.models import CapacityReservation

DAYS = 4
# (organization, cluster, GPU utilization %, reservation id): one near full goodput, one idle for days, one
# whose run stalls (STALLED).
# Each runs within its organization's P5 quota of its home region (the demo obeys the quota rule it shows).
CLUSTERS = (("aozora-docs", "aozora-p5-longrun", 97, "cr-0acc00000000000a1"),
            ("tsubasa-robotics", "tsubasa-p5-idle", 2, "cr-0acc00000000000b2"),
            ("minato-medical", "minato-p5-stalled", 94, "cr-0acc00000000000c3"))
STALLED = "minato-p5-stalled"
_TRAFFIC = re.compile(r"^(node_amazonefa_(?:rdma_read_bytes|rdma_write_bytes|tx_bytes|rx_bytes)\{[^}]*\}) (\d+)$",
                      re.MULTILINE)
MOVING = 5_000_000_000 * 300  # bytes a device's counters move in five minutes of training
_UTIL = re.compile(r"^(DCGM_FI_DEV_GPU_UTIL\{[^}]*\}) \S+$", re.MULTILINE)
_ACTIVE = re.compile(r"^(DCGM_FI_PROF_GR_ENGINE_ACTIVE\{[^}]*\}) \S+$", re.MULTILINE)


def _scrape(cluster: Cluster, percent: int) -> str:
    """The healthy two-node P5 sample (as the health demo sends it) with every GPU at ``percent``."""
    one = _UTIL.sub(rf"\g<1> {percent}", _sample("dcgm_p5_healthy.prom"))
    one = _ACTIVE.sub(rf"\g<1> {percent / 100}", one)
    two = "".join(line for line in one.replace("ip-10-1-45-12", "ip-10-1-45-13").splitlines(keepends=True)
                  if not line.startswith("#"))
    return (one + two + _sample("efa_p5_two_nodes.prom")).replace("ip-10-1-45-", f"ip-10-{cluster.pk % 250}-46-")


def _moved(text: str, extra: int) -> str:
    return _TRAFFIC.sub(lambda m: f"{m.group(1)} {int(m.group(2)) + extra}", text)


def _stall(cluster: Cluster, percent: int, now: datetime.datetime) -> None:
    """Pulls every five minutes over the last hour: six busy with the EFA traffic moving, then five near zero with
    it flat (20 minutes: the stall fault opens at 15)."""
    start = now - datetime.timedelta(minutes=56)
    moved = 0
    for i in range(11):
        busy = i < 6
        if busy and i:
            moved += MOVING
        health.ingest(cluster, _moved(_scrape(cluster, percent if busy else 1), moved), Source.PULL, scope="full",
                      received_at=start + i * datetime.timedelta(minutes=5))


def seed(context: dict) -> dict:
    orgs = context.get("organizations", {})
    now = timezone.now()
    first = floor_hour(now) - DAYS * 24 * HOUR
    today = timezone.localdate(now)
    for slug, name, percent, reservation in CLUSTERS:
        org = orgs.get(slug)
        if org is None:
            continue
        CapacityReservation.objects.get_or_create(reservation_id=reservation, defaults={
            "organization": org, "instance_type_name": "p5.48xlarge", "count": 2, "region": org.home_region,
            "availability_zone": f"{org.home_region}a", "start": today - datetime.timedelta(days=DAYS + 1),
            "end": today + datetime.timedelta(days=30), "notes": "Demo: capacity accounting."})
        cluster = Cluster.objects.filter(organization=org, name=name).first()
        if cluster is None:
            # Launched as every demo cluster is (a ParallelCluster blueprint, wired to its reservation), then
            # running since before the history begins: its launch is moved back there.
            cluster, _job = demo_clusters.create(
                context, (slug, name, "parallelcluster", "p5.48xlarge", 2, f"{org.home_region}a"))
            demo_clusters.record_ready(cluster)
            move_launch(cluster, first - HOUR)
            cluster.refresh_from_db()
        if HealthReport.objects.filter(cluster=cluster, received_at__lt=now - HOUR).exists():
            continue
        text = _scrape(cluster, percent)
        hours = DAYS * 24 - (2 if name == STALLED else 0)
        for hour in range(hours):
            health.ingest(cluster, text, Source.PULL, scope="full",
                          received_at=first + hour * HOUR + datetime.timedelta(minutes=5))
        if name == STALLED:
            _stall(cluster, percent, now)
        else:  # reporting now, as its exporter does: not "2 nodes not reporting" when the demo starts
            health.ingest(cluster, text, Source.PULL, scope="full", received_at=now)
    services.store(first - HOUR, now)
    idle.check(now)
    return context
