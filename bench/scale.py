"""The program at ten times its size: do the pages cost the same, and does a 2,000-node push leave the
web worker at once?

On PostgreSQL (``DATABASE_URL``; the database is recreated and its name must end with ``_bench``):

1. Seeds 12 organizations with proportional data (per organization: clusters with their current
   health and node rows, interactions with tags, open and cleared GPU faults, timeline entries,
   health reports, a year of accelerator-hours) in one database, and the same 12 plus 108 more (120 in all, ten times everything)
   in a second one (``<name>_large_bench``); times each page and its API counterpart as a program
   manager (median of R requests through Django's test client), the two sizes taking turns request by
   request so both see the same load on a shared machine. Prints each page's ratio (120 / 12) and last
   ``worst ratio R`` (goal: R <= 2).
2. Builds a 2,000-node p5 scrape (``bench/health_ingest_parse.py``), times prometheus_client's parser
   alone on it (the floor), POSTs it to the push endpoint (answer time / floor, goal <= 0.25); a real
   Celery worker on the health queue (started here, prefork as in compose, one process) takes the job
   from Redis: its processing time (the push's started..finished) / floor (the mean of the parse timed
   before and after the worker, as the load of a shared machine drifts), goal <= 0.1, and the peak
   memory (VmHWM) the worker process logs for the push, goal <= the idle worker + 30 MB.
3. Sustained throughput: 20 pushes of 512 nodes (20 clusters) queued at once; nodes per second of the
   one worker process, from the first push's start to the last one's finish.

``--storage s3`` keeps the bodies in S3 (the embedded endpoint, started here) instead of the local directory.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/portal_scale_bench python bench/scale.py [--runs 5] [--nodes 2000]
        [--skip-pages | --skip-push] [--storage local|s3] [--queued 20] [--queued-nodes 512] [--reuse]

On this shared 2-core machine the 2,000-node parse alone took 9.4 minutes under load (about two without it).
"""
from __future__ import annotations

import argparse
import datetime
import gc
import os
import random
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from harness import fresh_database

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/portal_scale_bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings.test")

# Per organization (x12, then x120): a moderate volume that still shows how costs grow.
CLUSTERS, NODES_PER_CLUSTER, INTERACTIONS, FAULTS, OPEN_FAULTS, TIMELINE, REPORTS = 20, 8, 300, 100, 20, 100, 2
TAGS = ("nccl-config", "efa-networking", "fsx-throughput", "capacity", "checkpointing")


def seed(first: int, count: int, rng: random.Random, leads) -> list:
    """Organizations ``first`` .. ``first + count - 1`` with their share of everything (bulk inserts)."""
    from django.utils import timezone

    from clusters.health import current
    from clusters.health.models import ClusterHealthState, GpuFault, HealthReport, NodeHealth
    from clusters.models import Cluster
    from portal.core.models import Membership, Organization, TimelineEntry
    from portal.core.weeks import week_of
    from portal.review import tallies
    from workloads.interactions.models import Interaction

    now = timezone.now()
    orgs = Organization.objects.bulk_create([
        Organization(name=f"Scale Org {i:03d}", slug=f"scale-{i:03d}", aws_account_id=f"{400000000000 + i}")
        for i in range(first, first + count)])
    Membership.objects.bulk_create([Membership(user=leads[i % len(leads)], organization=o, role="lead_sa")
                                    for i, o in enumerate(orgs)])
    clusters = Cluster.objects.bulk_create([
        Cluster(organization=o, name=f"c{j}", instance_type="p5.48xlarge", node_count=NODES_PER_CLUSTER,
                state=rng.choice(["ready"] * 6 + ["creating", "failed", "deleting"]))
        for o in orgs for j in range(CLUSTERS)], batch_size=2000)
    reports = HealthReport.objects.bulk_create([
        HealthReport(cluster=c, received_at=now - datetime.timedelta(minutes=5 * (REPORTS - k)), source="push",
                     node_count=NODES_PER_CLUSTER, nodes_healthy=NODES_PER_CLUSTER - (c.pk % 3 == 0),
                     nodes_reboot=int(c.pk % 3 == 0), gpus_expected=8 * NODES_PER_CLUSTER,
                     gpus_seen=8 * NODES_PER_CLUSTER)
        for c in clusters for k in range(REPORTS)], batch_size=5000)
    latest = {r.cluster_id: r for r in reports}
    nodes = []
    for c in clusters:
        for n in range(NODES_PER_CLUSTER):
            bad = c.pk % 3 == 0 and n == 0
            seen = now - datetime.timedelta(minutes=60 if (c.pk % 11 == 0 and n == 1) else 2)  # a few silent nodes
            nodes.append(NodeHealth(report=latest[c.pk], cluster=c, hostname=f"ip-10-{c.pk % 250}-{n}-1",
                                    verdict="reboot" if bad else "healthy", rank=3 if bad else 0, seen_at=seen,
                                    gpus_seen=8, expected_gpus=8, figures={"gpus_expected": 8, "gpus_seen": 8}))
    NodeHealth.objects.bulk_create(nodes, batch_size=5000)
    ClusterHealthState.objects.bulk_create([
        ClusterHealthState(cluster=c, last_report=latest[c.pk], last_report_at=latest[c.pk].received_at,
                           nodes_known=NODES_PER_CLUSTER, worst_rank=3 if c.pk % 3 == 0 else 0,
                           open_faults=0, critical_faults=0,
                           oldest_seen=now - datetime.timedelta(minutes=60 if c.pk % 11 == 0 else 2),
                           totals=current.empty_totals())
        for c in clusters], batch_size=5000)
    faults = []
    for o_index in range(len(orgs)):
        mine = clusters[o_index * CLUSTERS:(o_index + 1) * CLUSTERS]
        for k in range(FAULTS):
            seen = now - datetime.timedelta(minutes=rng.randint(0, 60 * 24 * 90))
            faults.append(GpuFault(
                cluster=mine[k % CLUSTERS], hostname=f"ip-{k}", gpu=str(k % 8), kind="xid", xid=79,
                severity="critical", severity_rank=2, verdict="reboot", meaning="XID 79", action="reboot",
                first_seen=seen, first_week=week_of(seen), last_seen=seen, cleared_at=None if k < OPEN_FAULTS else seen))
    GpuFault.objects.bulk_create(faults, batch_size=5000)
    ChallengeTag = Interaction.tags.field.related_model
    tags = list(ChallengeTag.objects.all()) or ChallengeTag.objects.bulk_create(
        [ChallengeTag(slug=s, name=s.title()) for s in TAGS])
    interactions = []
    for o in orgs:
        for k in range(INTERACTIONS):
            occurred = now - datetime.timedelta(minutes=rng.randint(60, 60 * 24 * 180))
            resolved_at = occurred + datetime.timedelta(hours=rng.randint(1, 400))
            resolved = rng.random() < 0.85 and resolved_at < now  # nothing is resolved in the future
            interactions.append(Interaction(
                organization=o, summary=f"inquiry {k}", occurred_at=occurred,
                status="resolved" if resolved else rng.choice(["open", "waiting_customer", "waiting_aws"]),
                resolved_at=resolved_at if resolved else None,
                severity=rng.choice(["low", "normal", "high", "critical"]), visibility="shared",
                owner=leads[k % len(leads)]))
    created = Interaction.objects.bulk_create(interactions, batch_size=5000)
    Through = Interaction.tags.through
    Through.objects.bulk_create([Through(interaction_id=it.pk, challengetag_id=rng.choice(tags).pk)
                                 for it in created if rng.random() < 0.7], batch_size=10000)
    # bulk_create sends no signal: count and copy the tags as a back-fill does
    tallies.rebuild(organization_ids=[o.pk for o in orgs])
    TimelineEntry.objects.bulk_create([
        TimelineEntry(organization=o, kind="interaction", title=f"entry {k}", visibility="shared",
                      occurred_at=now - datetime.timedelta(minutes=rng.randint(0, 60 * 24 * 180)))
        for o in orgs for k in range(TIMELINE)], batch_size=5000)
    seed_accounting(orgs, rng)
    return orgs


def seed_accounting(orgs, rng: random.Random) -> None:
    """A year of accelerator-hours per cluster as the accounting keeps it (hourly rows for its recent weeks,
    daily rows before), a reservation per organization, some idle clusters; then the organizations' day rows."""
    from django.db import connection
    from django.utils import timezone

    from clusters.accounting import services
    from clusters.accounting.compute import floor_hour
    from clusters.accounting.models import IdleNotice
    from clusters.models import Cluster
    from workloads.models import CapacityReservation

    now = timezone.now()
    today = timezone.localdate(now)
    cutoff = services.hourly_cutoff(now)
    ids = [o.pk for o in orgs]
    sql = """
        INSERT INTO accounting_acceleratorusage (cluster_id, organization_id, start, granularity, held, healthy,
                                                 busy, measured, reports, computed_at)
        SELECT c.id, c.organization_id, t, %s, 64 * %s, (64 - 8 * (c.id %% 2)) * %s,
               (64 - 8 * (c.id %% 2)) * %s * (c.id %% 10) / 10.0, (64 - 8 * (c.id %% 2)) * %s, 12 * %s, now()
        FROM clusters_cluster c CROSS JOIN generate_series(%s::timestamptz, %s::timestamptz, %s::interval) t
        WHERE c.organization_id = ANY(%s)"""
    with connection.cursor() as cursor:
        cursor.execute(sql, ["hour", 1, 1, 1, 1, 1, cutoff, floor_hour(now) - datetime.timedelta(hours=1),
                             "1 hour", ids])
        cursor.execute(sql, ["day", 24, 24, 24, 24, 24, services.midnight(today - datetime.timedelta(days=365)),
                             cutoff - datetime.timedelta(days=1), "1 day", ids])
    services.summarize(today - datetime.timedelta(days=366), today)
    CapacityReservation.objects.bulk_create([
        CapacityReservation(organization=o, reservation_id=f"cr-{o.pk:017x}", instance_type_name="p5.48xlarge",
                            count=CLUSTERS * NODES_PER_CLUSTER, region="ap-northeast-1",
                            availability_zone="ap-northeast-1a", start=today - datetime.timedelta(days=200),
                            end=today + datetime.timedelta(days=100)) for o in orgs])
    idle = Cluster.objects.filter(organization__in=orgs, name="c0")
    IdleNotice.objects.bulk_create([IdleNotice(cluster=c, organization_id=c.organization_id, notified_at=now,
                                               since=now - datetime.timedelta(hours=rng.randint(24, 96)), lost=500)
                                    for c in idle])


def pages(org) -> dict[str, str]:
    from django.urls import reverse

    return {
        "overview": reverse("review:overview"),
        "overview API": "/api/review/overview/",
        "program health": reverse("health:program_health"),
        "program health API": "/api/health/faults/?open=true",
        "organization page": reverse("portal:organization_detail", kwargs={"slug": org.slug}),
        "organization API": f"/api/portal/organizations/{org.pk}/",
        "cluster list": reverse("clusters:cluster_list"),
        "cluster list API": "/api/clusters/clusters/",
        "timeline": reverse("portal:timeline", kwargs={"slug": org.slug}),
        "timeline API": f"/api/portal/timeline/?organization={org.pk}",
        "cluster page": reverse("clusters:cluster_detail", kwargs={"pk": org.clusters.order_by("pk").first().pk}),
        "capacity CSV": reverse("review:overview_csv", kwargs={"table": "capacity"}),
        "forecast CSV": reverse("review:overview_csv", kwargs={"table": "forecast"}),
    }


def use_database(name: str) -> None:
    """Point the default connection at another of the benchmark's databases (connected, outside any timing)."""
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = name
    connection.ensure_connection()


def time_pages(sides: dict[int, tuple[str, object, object]], runs: int) -> dict[int, dict[str, float]]:
    """Median of ``runs`` requests per page at each size, the sizes taking turns request by request:
    on a machine shared with other work the load changes by the minute, and alternating makes both
    sizes see the same load (timing one size and then the other compares two different machines)."""
    samples = {size: defaultdict(list) for size in sides}
    paths = {size: pages(org) for size, (_, _, org) in sides.items()}
    for size, (name, client, _) in sides.items():  # warm up: templates, caches, the connection
        use_database(name)
        for page, path in paths[size].items():
            response = client.get(path)
            assert response.status_code == 200, (size, page, path, response.status_code)
    for _ in range(runs):
        for page in paths[next(iter(sides))]:
            for size, (name, client, _) in sides.items():
                use_database(name)
                start = time.perf_counter()
                client.get(paths[size][page])
                samples[size][page].append((time.perf_counter() - start) * 1000)
    return {size: {page: statistics.median(t) for page, t in by_page.items()} for size, by_page in samples.items()}


def start_health_worker(log_path: Path) -> subprocess.Popen:
    """A Celery worker on the health queue, as compose runs it (prefork, one child), logging to ``log_path``."""
    import redis

    redis.Redis.from_url(os.environ["REDIS_URL"]).delete("health")  # nothing queued by earlier runs
    log = log_path.open("w")
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "portal", "worker", "-Q", "health", "--concurrency", "1",
         "--loglevel", "INFO", "--without-mingle", "--without-gossip", "-n", f"scale-bench-{os.getpid()}@%h"],
        cwd=ROOT, env=os.environ, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while "ready." not in log_path.read_text():
        if worker.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the health worker did not start:\n{log_path.read_text()}")
        time.sleep(1)
    return worker


def _status_kb(field: str, pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def push_benchmark(nodes: int, queued: int, queued_nodes: int) -> None:
    import gzip

    from django.test import Client
    from health_ingest_parse import build, floor

    from clusters.health.ingest import service as services
    from clusters.health.models import HealthPush
    from clusters.models import Cluster
    from portal.core.models import Organization

    org = Organization.objects.create(name="Push Org", slug="push-org")
    cluster = Cluster.objects.create(organization=org, name="p5-2000", instance_type="p5.48xlarge",
                                     node_count=nodes, state="ready")
    token = services.rotate_token(cluster)
    text = build(nodes)
    body = text.encode()
    gc.collect()
    start = time.perf_counter()
    samples = floor(text)
    parse_s = time.perf_counter() - start
    print(f"scrape: {nodes} nodes, {len(body) / 1e6:.0f} MB, {samples:,} samples; "
          f"prometheus_client parse: {parse_s:.2f} s", flush=True)
    gc.collect()
    clusters = [Cluster.objects.create(organization=org, name=f"p5-{queued_nodes}-{i}", instance_type="p5.48xlarge",
                                       node_count=queued_nodes, state="ready") for i in range(queued)]
    tokens = [services.rotate_token(c) for c in clusters]
    log_path = Path(os.environ.get("BENCH_WORKER_LOG", f"/tmp/scale-bench-worker-{os.getpid()}.log"))
    worker = start_health_worker(log_path)
    idle_kb = _status_kb("VmHWM", worker.pid)  # the pool's parent; its child starts as a copy of it
    client = Client()
    start = time.perf_counter()
    response = client.post(f"/api/health/clusters/{cluster.pk}/metrics/", data=body, content_type="text/plain",
                           HTTP_AUTHORIZATION=f"Bearer {token}")
    answer_s = time.perf_counter() - start
    assert response.status_code == 202, response.content
    push_id = response.json()["push"]
    packed = gzip.compress(body[: 1 << 20])  # only to show the ratio a gzip-sending exporter gets
    del body
    print(f"push answer (plain text, 202): {answer_s:.2f} s = {answer_s / parse_s:.3f} of the parse (goal <= 0.25); "
          f"stored {HealthPush.objects.get(pk=push_id).compressed_bytes / 1e6:.0f} MB gzip "
          f"(exporter-side gzip of the first MB: {len(packed) / (1 << 20):.2f} of it)", flush=True)
    push = HealthPush.objects.get(pk=push_id)
    deadline = time.monotonic() + 3 * 3600
    while push.status not in ("done", "failed"):  # the real worker takes it from the broker
        if worker.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the health worker stopped or took too long:\n{log_path.read_text()[-3000:]}")
        time.sleep(2)
        push.refresh_from_db()
    assert push.status == "done" and push.report_id, (push.status, push.error)
    work_s = (push.finished_at - push.started_at).total_seconds()
    logged = re.search(rf"push {push_id} processed: report \d+; worker process (\d+) peak memory (\d+) kB",
                       log_path.read_text())
    assert logged, log_path.read_text()[-3000:]
    peak_kb, peak_pid = int(logged.group(2)), logged.group(1)
    throughput = queued_pushes(client, clusters, tokens, queued_nodes, worker, log_path)
    worker.terminate()
    worker.wait(timeout=60)
    # The parse again after the worker: the machine's load drifts, and the floor from both sides of the
    # worker's run compares like with like.
    start = time.perf_counter()
    floor(text)
    after_s = time.perf_counter() - start
    del text
    print(f"prometheus_client parse again after the worker: {after_s:.2f} s; floor = mean {(parse_s + after_s) / 2:.2f} s",
          flush=True)
    parse_s = (parse_s + after_s) / 2
    print(f"worker processing: {work_s:.2f} s = {work_s / parse_s:.3f} of the parse (goal <= 0.1); "
          f"report {push.report.node_count} nodes, {push.report.nodes_healthy} healthy", flush=True)
    print(f"worker peak memory {peak_kb / 1024:.0f} MB (VmHWM of worker process {peak_pid}) = idle worker process "
          f"{idle_kb / 1024:.0f} MB + {(peak_kb - idle_kb) / 1024:.0f} MB (goal <= idle + 30 MB)", flush=True)
    print(throughput, flush=True)


def queued_pushes(client, clusters, tokens, nodes: int, worker, log_path: Path) -> str:
    """``len(clusters)`` pushes of ``nodes`` nodes sent at once; the one worker process works through them."""
    from health_ingest_parse import build

    from clusters.health.models import HealthPush

    body = build(nodes).encode()
    ids = []
    for cluster, token in zip(clusters, tokens, strict=True):
        response = client.post(f"/api/health/clusters/{cluster.pk}/metrics/", data=body, content_type="text/plain",
                               HTTP_AUTHORIZATION=f"Bearer {token}")
        assert response.status_code == 202, response.content
        ids.append(response.json()["push"])
    del body
    deadline = time.monotonic() + 3 * 3600
    while HealthPush.objects.filter(pk__in=ids).exclude(status__in=("done", "failed")).exists():
        if worker.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the health worker stopped or took too long:\n{log_path.read_text()[-3000:]}")
        time.sleep(1)
    rows = list(HealthPush.objects.filter(pk__in=ids))
    failed = [(r.pk, r.error) for r in rows if r.status != "done"]
    assert not failed, failed
    span = (max(r.finished_at for r in rows) - min(r.started_at for r in rows)).total_seconds()
    busy = sum((r.finished_at - r.started_at).total_seconds() for r in rows)
    total = nodes * len(rows)
    return (f"sustained: {len(rows)} pushes of {nodes} nodes queued at once, {total:,} nodes in {span:.1f} s = "
            f"{total / span:.0f} nodes/s per worker process (busy {busy:.1f} s; one push every 15 s per "
            f"{nodes}-node cluster is {nodes / 15:.0f} nodes/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--skip-push", action="store_true")
    parser.add_argument("--skip-pages", action="store_true", help="only the push part")
    parser.add_argument("--storage", choices=("local", "s3"), default="local", help="where push bodies wait")
    parser.add_argument("--queued", type=int, default=20, help="pushes queued at once for the throughput line")
    parser.add_argument("--queued-nodes", type=int, default=512)
    parser.add_argument("--reuse", action="store_true",
                        help="time the pages on the two databases a previous run seeded (no reseeding)")
    args = parser.parse_args()
    os.environ["HEALTH_PUSH_STORAGE"] = args.storage
    if args.storage == "s3" and not os.environ.get("AWS_ENDPOINT_URL"):
        from sandbox.aws.embedded import start_server

        _server, os.environ["AWS_ENDPOINT_URL"] = start_server()  # the worker started later inherits it
        os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    small_url = os.environ["DATABASE_URL"]
    large_url = small_url.removesuffix("_bench") + "_large_bench"  # the 120-organization program's own database
    if not args.reuse:
        fresh_database(small_url)
        if not args.skip_pages:
            fresh_database(large_url)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    from portal.core.models import User

    setup_test_environment()
    sides = {}
    for total, url in (() if args.skip_pages else ((12, small_url), (120, large_url))):
        name = url.rsplit("/", 1)[1]
        use_database(name)
        if args.reuse:
            from portal.core.models import Organization

            client = Client()
            client.force_login(User.objects.get(username="scale-pm"))
            sides[total] = (name, client, Organization.objects.order_by("pk").last())
            continue
        call_command("migrate", verbosity=0)
        rng = random.Random(16)
        pm = User.objects.create(username="scale-pm", is_program_manager=True)
        leads = User.objects.bulk_create([User(username=f"scale-lead{i}") for i in range(10)])
        for first, count in ((0, 12), (12, 108)) if total == 120 else ((0, 12),):
            start = time.perf_counter()
            orgs = seed(first, count, rng, leads)
            print(f"{name}: seeded {count} organizations ({first + count} in all) in "
                  f"{time.perf_counter() - start:.1f} s", flush=True)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")  # as autovacuum leaves a database in use: index-only scans read no heap
        client = Client()
        client.force_login(pm)
        sides[total] = (name, client, orgs[-1])
    timings = time_pages(sides, args.runs) if sides else {}
    use_database(small_url.rsplit("/", 1)[1])
    if args.skip_pages:
        call_command("migrate", verbosity=0)
    small, large = timings.get(12, {}), timings.get(120, {})
    worst = 0.0
    print(f"{'page':<22}{'12 orgs ms':>12}{'120 orgs ms':>13}{'ratio':>8}")
    for name in small:
        ratio = large[name] / small[name]
        worst = max(worst, ratio)
        print(f"{name:<22}{small[name]:>12.1f}{large[name]:>13.1f}{ratio:>8.2f}")
    if not args.skip_push:
        push_benchmark(args.nodes, args.queued, args.queued_nodes)
    if small:
        print(f"worst ratio {worst:.2f}")


if __name__ == "__main__":
    main()
