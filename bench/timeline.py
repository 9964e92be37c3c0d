"""Timeline first page at 100,000 entries: query count and server time against a floor.

Seeds one organization with N timeline entries (bulk_create) in a throw-away test database, then
requests the organization's timeline page through Django's test client as a lead SA and as a
customer. The floor is the page's own SQL (the one query that fetches the first page) run alone;
the ratio says what the page adds on top of its data.

    DJANGO_SETTINGS_MODULE=portal.settings.test DATABASE_URL=postgres://postgres@127.0.0.1:5432/portal_x \
        python bench/timeline.py [--entries 100000] [--repeat 15]
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings.test")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        run(args, connection, CaptureQueriesContext)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


CURSOR_RE = re.compile(r"cursor=([A-Za-z0-9_-]+)")


def run(args, connection, CaptureQueriesContext) -> None:  # noqa: N803
    from django.test import Client
    from django.test.utils import setup_test_environment, teardown_test_environment
    from django.urls import reverse
    from django.utils import timezone

    from portal.core.models import Membership, Organization, TimelineEntry, User

    org = Organization.objects.create(name="Bench Org", slug="bench-org", aws_account_id="999999999999")
    other = Organization.objects.create(name="Other Org", slug="other-org", aws_account_id="999999999998")
    lead = User.objects.create(username="bench-lead")
    customer = User.objects.create(username="bench-customer")
    Membership.objects.create(user=lead, organization=org, role="lead_sa")
    Membership.objects.create(user=customer, organization=org, role="customer")
    now = timezone.now()
    kinds = ["interaction", "workload", "quota", "launch", "cluster", "fault", "validation"]
    started = time.perf_counter()
    batch = []
    for i in range(args.entries):
        batch.append(TimelineEntry(
            organization=org if i % 10 else other, occurred_at=now - timedelta(seconds=37 * i), kind=kinds[i % 7],
            title=f"Entry {i}", visibility="internal" if i % 3 == 0 else "shared", severity="",
            tags=["nccl-configuration"] if i % 5 == 0 else [],
        ))
        if len(batch) == 5000:
            TimelineEntry.objects.bulk_create(batch)
            batch = []
    TimelineEntry.objects.bulk_create(batch)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE portal_timelineentry")
    print(f"database: {connection.vendor}; seeded {args.entries:,} entries "
          f"({TimelineEntry.objects.filter(organization=org).count():,} in the organization) "
          f"in {time.perf_counter() - started:.1f} s")

    url = reverse("portal:timeline", args=[org.slug])
    for user in (lead, customer):
        client = Client()
        client.force_login(user)
        client.get(url)  # warm caches, templates
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(url)
        page_queries = len(ctx.captured_queries)
        assert response.status_code == 200 and len(response.context["entries"]) == 50
        page_sql = [q["sql"] for q in ctx.captured_queries if "portal_timelineentry" in q["sql"]]
        assert len(page_sql) == 1, page_sql
        # Timing without the test environment's template instrumentation (it records every context).
        teardown_test_environment()
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            client.get(url)
            times.append(time.perf_counter() - t0)
        floor = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            with connection.cursor() as cursor:
                cursor.execute(page_sql[0])
                cursor.fetchall()
            floor.append(time.perf_counter() - t0)
        page_ms, floor_ms = statistics.median(times) * 1000, statistics.median(floor) * 1000
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("EXPLAIN " + page_sql[0])
                plan = [row[0].strip() for row in cursor.fetchall()]
            print(f"{'':<15} plan: {' / '.join(line for line in plan if 'Scan' in line)[:200]}")
        print(f"{user.username:<15} queries per page: {page_queries}; "
              f"first page median {page_ms:.1f} ms; floor (the page's entry query alone) {floor_ms:.2f} ms; "
              f"ratio {page_ms / floor_ms:.1f}")
        # Deep in the feed costs the same: follow the cursor 20 pages.
        cursor_value = response.context["next_cursor"]
        for _ in range(20):
            deeper = client.get(url, {"cursor": cursor_value}, headers={"HX-Request": "true"})
            cursor_value = CURSOR_RE.search(deeper.content.decode()).group(1)
        with CaptureQueriesContext(connection) as ctx:
            t0 = time.perf_counter()
            client.get(url, {"cursor": cursor_value}, headers={"HX-Request": "true"})
            deep_ms = (time.perf_counter() - t0) * 1000
        deep_queries = len(ctx.captured_queries)
        print(f"{'':<15} page 22 (htmx, by cursor): {deep_queries} queries, {deep_ms:.1f} ms")
        setup_test_environment()


if __name__ == "__main__":
    main()
