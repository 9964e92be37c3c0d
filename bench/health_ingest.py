"""Full health ingestion of one 2,000-node scrape against prometheus_client's parser alone.

Builds the scrape of ``bench/health_ingest_parse.py`` (2,000 p5.48xlarge nodes: 16,000 GPUs with
dcgm-exporter's default counters plus the health ones, 32 EFA devices per node), then times, in the
same process and interleaved:

- the floor: ``prometheus_client``'s text parser alone, consuming every family and sample;
- the portal's ingestion exactly as the push API runs it once the body is read: ``services.ingest``
  (parse, summarize against the previous report's state, store the report and 2,000 node rows,
  reconcile faults, timeline entry) on a real database: PostgreSQL when ``DATABASE_URL`` is set,
  else a temporary SQLite file.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/portal_health python bench/health_ingest.py [--nodes 2000] [--runs 1]

On the shared 2-core machine one floor run takes over a minute, so the default is one run of each.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def setup_django() -> str:
    if not os.environ.get("DATABASE_URL"):
        path = Path(tempfile.mkdtemp()) / "bench.sqlite3"
        os.environ["DATABASE_URL"] = f"sqlite:///{path}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings.test")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from django.db import connection

    return connection.vendor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    vendor = setup_django()

    from django.conf import settings
    from django.db import connection, reset_queries
    from health_ingest_parse import build, floor

    from clusters.health.ingest import service as services
    from clusters.health.models import GpuFault, HealthReport, NodeHealth
    from clusters.models import Cluster
    from portal.core.models import Organization

    start = time.perf_counter()
    text = build(args.nodes)
    body = text.encode()
    print(f"database: {vendor}; built {len(body) / 1e6:.0f} MB for {args.nodes} nodes in "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    org, _ = Organization.objects.get_or_create(slug="bench-org", defaults={"name": "Bench"})
    cluster, _ = Cluster.objects.get_or_create(organization=org, name="bench-p5",
                                               defaults={"instance_type": "p5.48xlarge", "node_count": args.nodes,
                                                         "state": "ready"})
    floors, ingests, queries = [], [], []
    ingested = None
    settings.DEBUG = True  # count queries
    for _ in range(args.runs):
        gc.collect()
        t = time.perf_counter()
        samples = floor(text)
        floors.append(time.perf_counter() - t)
        print(f"floor run: {floors[-1]:.2f} s ({samples:,} samples)", flush=True)
        gc.collect()
        reset_queries()
        t = time.perf_counter()
        ingested = services.ingest(cluster, body, "push")
        ingests.append(time.perf_counter() - t)
        queries.append(len(connection.queries))
        print(f"ingest run: {ingests[-1]:.2f} s, {queries[-1]} queries", flush=True)
    base, mine = statistics.median(floors), statistics.median(ingests)
    report = ingested.report
    print(f"prometheus_client parser alone: {base:.2f} s (runs: {', '.join(f'{t:.2f}' for t in floors)})")
    print(f"full ingestion (service):       {mine:.2f} s (runs: {', '.join(f'{t:.2f}' for t in ingests)})")
    print(f"ratio: {mine / base:.3f} (goal <= 1.5)")
    print(f"queries per ingestion: {queries}")
    print(f"report: {report.node_count} nodes, {report.gpus_seen}/{report.gpus_expected} GPUs, "
          f"{report.fault_count} faults, verdicts {ingested.summary.verdict_counts}; stored rows: "
          f"{HealthReport.objects.count()} reports, {NodeHealth.objects.count()} node rows, "
          f"{GpuFault.objects.count()} faults")


if __name__ == "__main__":
    main()
