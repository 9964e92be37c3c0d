"""Seeding a program of any size for the review tests (bulk inserts: 120 organizations stay fast)."""
from __future__ import annotations

import datetime

import factory
from django.utils import timezone
from factory.django import DjangoModelFactory

from clusters.models import Cluster
from portal.core.models import Membership, Organization
from portal.review.models import WeeklyReview, week_start_of
from workloads.interactions.models import Interaction
from workloads.models import CapacityReservation, InstanceQuota


def program(n: int, *, lead=None, clusters: int = 3, interactions: int = 4, prefix: str = "org") -> list[Organization]:
    """``n`` organizations, each with a quota, a reservation ending in 5 days, ``clusters`` clusters in
    various states and (once interactions exist) ``interactions`` interactions, some open."""
    today = timezone.localdate()
    orgs = Organization.objects.bulk_create([
        Organization(name=f"{prefix.title()} {i:04d}", slug=f"{prefix}-{i:04d}", aws_account_id=f"{200000000000 + i}")
        for i in range(n)
    ])
    if lead is not None:
        Membership.objects.bulk_create([Membership(user=lead, organization=o, role="lead_sa") for o in orgs])
    InstanceQuota.objects.bulk_create([
        InstanceQuota(organization=o, instance_type_name="p5.48xlarge", region="ap-northeast-1", count=8,
                      start=today - datetime.timedelta(days=10), end=today + datetime.timedelta(days=60))
        for o in orgs
    ])
    CapacityReservation.objects.bulk_create([
        CapacityReservation(organization=o, reservation_id=f"cr-{prefix[:3]}{i:014x}", instance_type_name="p5.48xlarge",
                            count=4, region="ap-northeast-1", availability_zone="ap-northeast-1a",
                            start=today - datetime.timedelta(days=10), end=today + datetime.timedelta(days=5))
        for i, o in enumerate(orgs)
    ])
    states = ["ready", "creating", "failed", "deleted"]
    Cluster.objects.bulk_create([
        Cluster(organization=o, name=f"c{j}", instance_type="p5.48xlarge", node_count=2, state=states[j % len(states)])
        for o in orgs for j in range(clusters)
    ])
    if Interaction is not None and interactions:
        now = timezone.now()
        Interaction.objects.bulk_create([
            Interaction(organization=o, summary=f"question {j}", occurred_at=now - datetime.timedelta(days=j + 1),
                        status="open" if j % 2 == 0 else "resolved",
                        resolved_at=None if j % 2 == 0 else now - datetime.timedelta(hours=j),
                        severity=["low", "normal", "high", "critical"][j % 4], visibility="shared")
            for o in orgs for j in range(interactions)
        ])
    return orgs


def grow_program(**kw):
    """``grow(n)`` for ``assert_flat_queries``: ``n`` more organizations (``program``'s keywords), returned."""
    calls = iter(range(1_000))
    return lambda n: program(n, prefix=f"g{next(calls)}", **kw)


class WeeklyReviewFactory(DjangoModelFactory):
    """A frozen review, one a week going back from last week."""

    class Meta:
        model = WeeklyReview

    week_start = factory.Sequence(
        lambda n: week_start_of(timezone.localdate()) - datetime.timedelta(weeks=n + 1))
    figures = factory.LazyFunction(dict)
