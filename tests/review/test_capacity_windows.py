"""The accelerator-hours table's figures cover named days and add up: the cost per busy GPU-hour divides a cost by
the busy hours of the same days, the program's total is the sum of the rows shown, and a window in the past
counts the organizations that were in it even after a cycle started without them."""
from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from clusters.accounting.models import OrganizationDay
from portal.core.models import Cycle, CycleParticipation
from portal.review.figures import overview
from workloads.models import CostDay

pytestmark = pytest.mark.django_db


def _hours(org, days: int, busy: int) -> None:
    today = timezone.localdate()
    OrganizationDay.objects.bulk_create([
        OrganizationDay(organization=org, instance_type="p5.48xlarge", day=today - datetime.timedelta(days=d),
                        held=busy * 2, healthy=busy * 2, busy=busy, measured=busy * 2) for d in range(days)])


def _cost(org, days: int, amount: str, *, skip: int = 1) -> None:
    today = timezone.localdate()
    CostDay.objects.bulk_create([
        CostDay(organization=org, day=today - datetime.timedelta(days=d), service="Amazon Elastic Compute Cloud - Compute",
                amount_usd=Decimal(amount), fetched_at=timezone.now()) for d in range(skip, skip + days)])


def _row(figures, org):
    return next(o for o in figures["organizations"] if o["id"] == org.pk)


def test_cost_per_busy_gpu_hour_divides_the_cost_by_the_busy_hours_of_the_same_days(world):
    """28 days of busy hours, 14 days of cost (Cost Explorer's fetch): 14 × 1,000 USD over 14 × 100 busy hours is
    10 USD, not 5 (the 28 days' 2,800 hours); the row says which days the cost covers."""
    _hours(world.org_a, 28, 100)
    _cost(world.org_a, 14, "1000")
    figures = overview(world.pm)
    row = _row(figures, world.org_a)
    assert row["gpu_hours_busy"] == 2800.0
    assert (row["cost_usd"], row["cost_per_busy_gpu_hour"]) == (14000.0, 10.0)
    today = timezone.localdate()
    assert (row["cost_from"], row["cost_to"]) == ((today - datetime.timedelta(days=14)).isoformat(),
                                                  (today - datetime.timedelta(days=1)).isoformat())
    program = figures["capacity"]["program"]
    assert (program["cost_per_busy_gpu_hour"], program["cost_from"]) == (10.0, row["cost_from"])


def test_the_tables_total_is_the_sum_of_the_rows_it_shows(world, client):
    """An organization billed without hours is a row of the table, so the total it is counted in adds up."""
    _hours(world.org_a, 3, 100)
    _cost(world.org_a, 3, "1000")
    _cost(world.org_b, 2, "250.25")
    client.force_login(world.pm)
    response = client.get(reverse("review:overview"))
    figures = response.context["figures"]
    body = response.content.decode()
    assert figures["capacity"]["program"]["cost_usd"] == 3500.5 == sum(
        o["cost_usd"] or 0 for o in figures["organizations"])
    table = body[body.index('id="capacity-h"'):body.index("Week by week")]
    assert world.org_b.name in table and "500.50" in table
    assert "3,500.50 USD" in table  # grouped for the reader, not 3500.5


def test_a_past_window_still_counts_an_organization_that_left_when_a_cycle_started(world, client):
    _hours(world.org_a, 10, 100)
    _hours(world.org_b, 10, 50)
    _cost(world.org_b, 5, "100")
    Cycle.objects.filter(status="active").update(status="archived", ends_on=timezone.localdate() - datetime.timedelta(days=40))
    today = timezone.localdate()
    old = Cycle.objects.create(number=70, name="Cycle 70", status="archived",
                               starts_on=today - datetime.timedelta(days=60), ends_on=today - datetime.timedelta(days=3))
    new = Cycle.objects.create(number=71, name="Cycle 71", status="active", starts_on=today - datetime.timedelta(days=2))
    for org in (world.org_a, world.org_b):
        CycleParticipation.objects.create(cycle=old, organization=org)
    CycleParticipation.objects.create(cycle=new, organization=world.org_a)
    figures = overview(world.pm)
    assert world.org_b.pk not in {o["id"] for o in figures["organizations"]}  # the live program's rows
    (departed,) = figures["capacity"]["departed"]
    assert (departed["id"], departed["gpu_hours_busy"], departed["cost_usd"]) == (world.org_b.pk, 500.0, 500.0)
    assert figures["capacity"]["program"]["busy"] == 1500.0  # both organizations' hours, as before the switch
    client.force_login(world.pm)
    body = client.get(reverse("review:overview")).content.decode()
    assert world.org_b.name in body[body.index('id="capacity-h"'):body.index("Week by week")]
