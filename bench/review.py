"""What the program overview costs against the SQL that produces its figures.

Seeds (bulk inserts) 120 organizations, 5,000 clusters, 100,000 interactions with challenge tags and 50,000 GPU
faults (a third of them still open) into a fresh PostgreSQL database, then:

- server time: the median of R requests of the overview page (``review:overview``, as a program manager, through
  Django's test client: URL routing, middleware, the figures, template rendering);
- floor: the median of R replays of the very SQL statements the figures issue (captured from one request, minus
  the session and user look-ups), executed alone on the same connection and fully fetched.

It prints both and their ratio. The goal is a ratio of at most 3.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/portal_review_bench python bench/review.py [--runs 7]
"""
from __future__ import annotations

import argparse
import datetime
import os
import random
import sys
import time
from pathlib import Path

from harness import fresh_database, median_ms

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/portal_review_bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings.test")

ORGS, CLUSTERS, INTERACTIONS, FAULTS = 120, 5_000, 100_000, 50_000
TAGS = ("nccl-config", "efa-networking", "fsx-throughput", "capacity", "checkpointing", "container-image",
        "slurm-config", "neuron-sdk", "quota", "data-pipeline")


def seed(rng: random.Random) -> dict:
    from django.utils import timezone

    from clusters.health.models import GpuFault
    from clusters.models import Cluster
    from portal.core.models import Membership, Organization, User
    from workloads.interactions.models import Interaction
    from workloads.models import CapacityReservation, InstanceQuota

    now = timezone.now()
    today = timezone.localdate()
    seeded = {}
    pm = User.objects.create(username="bench-pm", is_program_manager=True)
    leads = User.objects.bulk_create([User(username=f"bench-lead{i}") for i in range(10)])
    orgs = Organization.objects.bulk_create([
        Organization(name=f"Bench Org {i:03d}", slug=f"bench-{i:03d}", aws_account_id=f"{300000000000 + i}")
        for i in range(ORGS)
    ])
    Membership.objects.bulk_create([Membership(user=leads[i % 10], organization=o, role="lead_sa")
                                    for i, o in enumerate(orgs)])
    InstanceQuota.objects.bulk_create([
        InstanceQuota(organization=o, instance_type_name=t, region="ap-northeast-1", count=rng.randint(8, 64),
                      start=today - datetime.timedelta(days=60), end=today + datetime.timedelta(days=rng.randint(1, 120)))
        for o in orgs for t in ("p5.48xlarge", "trn1.32xlarge")
    ])
    CapacityReservation.objects.bulk_create([
        CapacityReservation(organization=o, reservation_id=f"cr-{i:017x}", instance_type_name="p5.48xlarge", count=8,
                            region="ap-northeast-1", availability_zone="ap-northeast-1a",
                            start=today - datetime.timedelta(days=30), end=today + datetime.timedelta(days=rng.randint(1, 60)))
        for i, o in enumerate(orgs)
    ])
    seeded["organizations"] = ORGS
    states = ["ready"] * 5 + ["creating", "scheduled", "failed", "deleted", "deleting"]
    clusters = Cluster.objects.bulk_create([
        Cluster(organization=orgs[i % ORGS], name=f"c{i}", instance_type=rng.choice(["p5.48xlarge", "trn1.32xlarge"]),
                node_count=rng.randint(1, 16), state=rng.choice(states))
        for i in range(CLUSTERS)
    ], batch_size=2000)
    # Spread creation over the last 60 days (auto_now_add ignores values passed to bulk_create).
    for c in clusters:
        c.created = now - datetime.timedelta(minutes=rng.randint(0, 60 * 24 * 60))
    Cluster.objects.bulk_update(clusters, ["created"], batch_size=2000)
    seeded["clusters"] = CLUSTERS

    ChallengeTag = Interaction.tags.field.related_model
    # The curated taxonomy may come with the migrations; add the benchmark's own tags only when it does not.
    tags = list(ChallengeTag.objects.all()) or ChallengeTag.objects.bulk_create(
        [ChallengeTag(slug=s, name=s.replace("-", " ").title()) for s in TAGS])
    rows = []
    for i in range(INTERACTIONS):
        occurred = now - datetime.timedelta(minutes=rng.randint(60, 60 * 24 * 180))
        resolved = rng.random() < 0.8
        rows.append(Interaction(
            organization=orgs[i % ORGS], summary=f"inquiry {i}", occurred_at=occurred,
            status="resolved" if resolved else rng.choice(["open", "waiting_customer", "waiting_aws"]),
            resolved_at=occurred + datetime.timedelta(hours=rng.randint(1, 400)) if resolved else None,
            severity=rng.choice(["low", "normal", "normal", "high", "critical"]),
            visibility=rng.choice(["internal", "shared"]), owner=leads[i % 10],
            lesson="Check aws-ofi-nccl in the image" if i % 500 == 0 else "",
        ))
    created = Interaction.objects.bulk_create(rows, batch_size=5000)
    Through = Interaction.tags.through
    links = [Through(interaction_id=it.pk, challengetag_id=tag.pk)
             for it in created for tag in rng.sample(tags, rng.choice([0, 1, 1, 2]))]
    Through.objects.bulk_create(links, batch_size=10000)
    from portal.review import tallies

    tallies.rebuild()  # bulk_create sends no signal: count and copy the tags as a back-fill does
    seeded["interactions"] = INTERACTIONS
    seeded["interaction tags"] = len(links)

    seeded["faults"] = seed_faults(GpuFault, clusters, rng, now)
    return {"pm": pm, "seeded": seeded}


def seed_faults(GpuFault, clusters, rng, now) -> int:
    """XID faults as ingestion stores them (the catalogue's meaning, action, severity and verdict), a third still
    open; one per (cluster, node, GPU, code), as the one-open-fault constraint wants of the open ones."""
    from clusters.health.readers import xid
    from clusters.health.readers.summary import _verdict_for  # the verdict ingestion gives an XID
    from portal.core.choices import FAULT_SEVERITY_RANK
    from portal.core.weeks import week_of

    rows = []
    for i in range(FAULTS):
        seen = now - datetime.timedelta(minutes=rng.randint(0, 60 * 24 * 90))
        info = xid.describe(rng.choice([13, 31, 48, 79, 94]))
        rows.append(GpuFault(
            cluster=clusters[i % len(clusters)], hostname=f"ip-10-0-{i // 250 % 250}-{i % 250}", gpu=str(i % 8),
            kind="xid", xid=info.code, severity=info.severity, severity_rank=FAULT_SEVERITY_RANK[info.severity],
            verdict=_verdict_for(info), meaning=info.meaning[:300], action=info.action[:300],
            first_seen=seen, first_week=week_of(seen), last_seen=seen,
            cleared_at=None if i % 3 == 0 else seen + datetime.timedelta(hours=1),
        ))
    GpuFault.objects.bulk_create(rows, batch_size=5000)
    return FAULTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    url = os.environ["DATABASE_URL"]
    fresh_database(url)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment
    from django.urls import reverse

    setup_test_environment()
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    ctx = seed(random.Random(7))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"seeded in {time.perf_counter() - started:.1f} s: {ctx['seeded']}")

    client = Client()
    client.force_login(ctx["pm"])
    path = reverse("review:overview")
    assert client.get(path).status_code == 200  # warm caches and connections
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path)
    assert response.status_code == 200
    skip = ("django_session", '"portal_user"', '"portal_membership"."role", "portal_membership"."organization_id"')
    statements = [q["sql"] for q in captured.captured_queries if not any(s in q["sql"] for s in skip)]
    print(f"overview: {len(captured.captured_queries)} queries per request, {len(statements)} of them for the figures")

    def request():
        assert client.get(path).status_code == 200

    def floor():
        with connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)
                cursor.fetchall()

    floor_ms = median_ms(floor, args.runs)
    server_ms = median_ms(request, args.runs)
    print(f"floor (the figures' SQL alone): {floor_ms:.1f} ms")
    print(f"overview page (server time):    {server_ms:.1f} ms")
    print(f"ratio: {server_ms / floor_ms:.2f} (goal: at most 3)")


if __name__ == "__main__":
    main()
