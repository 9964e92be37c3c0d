"""Demo seed for cost: Cost Explorer answers built from the demo's own capacity, queued on the embedded endpoint,
then fetched as in production.

moto's Cost Explorer answers ``GetCostAndUsage`` with results queued through its own API
(``/moto-api/static/ce/cost-and-usage-results``, one queue per account). Each organization's day is what its
capacity that day costs at the prices of ``workloads.prices`` (one table, with its sources and date):
- its reservations in force, every hour whether used or not (a Capacity Block at its rate, an On-Demand Capacity
  Reservation or a training plan at the On-Demand rate), under EC2 or, for ``ml.`` types, SageMaker;
- the instance-hours its clusters held beyond those reservations, On-Demand (the accelerator-hours the
  accounting stored, divided by the accelerators of an instance);
- FSx for Lustre sized with what it held (1.2 TB per instance held) and an S3 bucket of its data set while it
  has capacity at all.
An organization without clusters or reservations is billed nothing. The seed
(``sandbox.costs``, which reads the stored accelerator-hours) runs after the accounting seeds
(``sandbox.program.DEMO_SEEDERS``) and fetches the overview's window (28 days) so every figure of a row covers the
same days. Without the embedded endpoint nothing is seeded. An organization that already has cost rows is left
alone.
"""
from __future__ import annotations

import datetime
import json
import urllib.request
from collections import defaultdict
from decimal import Decimal

from django.conf import settings
from django.utils import timezone

from portal.core import instance_types
from workloads import prices, spend
from workloads.models import CapacityReservation, CostDay

WINDOW_DAYS = 28  # the overview's default window (portal.review.figures.scope.DEFAULT_WINDOW)
EC2, SAGEMAKER = "Amazon Elastic Compute Cloud - Compute", "Amazon SageMaker"
FSX, S3 = "Amazon FSx", "Amazon Simple Storage Service"
FSX_GB_PER_INSTANCE = 1200
DATASET_GB = 20_000


def _queue(endpoint: str, account_id: str, result: dict) -> None:
    if not endpoint.startswith(("http://", "https://")):
        raise ValueError(f"not an endpoint URL: {endpoint!r}")
    body = json.dumps({"account_id": account_id, "results": [result]}).encode()
    url = f"{endpoint.rstrip('/')}/moto-api/static/ce/cost-and-usage-results"
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)  # noqa: S310 - scheme checked
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - scheme checked
        response.read()


def _service(instance_type: str) -> str:
    return SAGEMAKER if instance_type.startswith("ml.") else EC2


def day_costs(org, day: datetime.date, held_hours: dict[str, Decimal], reservations: list) -> dict[str, Decimal]:
    """What ``org``'s capacity costs on ``day``, per Cost Explorer service: ``held_hours`` are the accelerator-
    hours its clusters held that day per instance type, ``reservations`` its reservations (any days)."""
    costs: dict[str, Decimal] = defaultdict(Decimal)
    reserved_instances: dict[str, int] = defaultdict(int)
    for r in reservations:
        if r.start <= day <= r.end:
            try:
                costs[_service(r.instance_type_name)] += r.count * 24 * prices.reserved(
                    r.region, r.instance_type_name, r.kind)
            except KeyError:
                continue
            reserved_instances[prices.base_type(r.instance_type_name)] += r.count
    held_instances = Decimal(0)
    for instance_type, hours in held_hours.items():
        itype = instance_types.find(prices.base_type(instance_type))
        per_instance = itype.accelerator_count if itype else 0
        if not per_instance:
            continue
        instance_hours = Decimal(hours) / per_instance
        held_instances += instance_hours / 24
        beyond = max(Decimal(0), instance_hours - reserved_instances[prices.base_type(instance_type)] * 24)
        try:
            costs[_service(instance_type)] += beyond * prices.on_demand(org.home_region, instance_type)
        except KeyError:
            continue
    if held_instances:
        costs[FSX] += prices.storage_day(held_instances * FSX_GB_PER_INSTANCE,
                                         prices.FSX_LUSTRE_GB_MONTH[org.home_region])
    if costs:
        costs[S3] += prices.storage_day(DATASET_GB, prices.S3_STANDARD_GB_MONTH[org.home_region])
    return {service: amount for service, amount in costs.items() if amount}


def results(org, start: datetime.date, end: datetime.date,
            held: dict[datetime.date, dict[str, Decimal]]) -> dict:
    """Cost Explorer's answer for [start, end): each day's amount per service, from the accelerator-hours held
    per day and instance type (``held``, what the accounting stored) and the reservations (one query)."""
    reservations = list(CapacityReservation.objects.filter(organization=org, start__lt=end, end__gte=start))
    by_time = []
    day = start
    while day < end:
        groups = [{"Keys": [service], "Metrics": {"UnblendedCost": {"Amount": f"{amount:.6f}", "Unit": "USD"}}}
                  for service, amount in sorted(day_costs(org, day, held.get(day, {}), reservations).items())]
        by_time.append({"TimePeriod": {"Start": day.isoformat(), "End": (day + datetime.timedelta(days=1)).isoformat()},
                        "Total": {}, "Groups": groups, "Estimated": day >= end - datetime.timedelta(days=2)})
        day += datetime.timedelta(days=1)
    return {"ResultsByTime": by_time, "DimensionValueAttributes": []}


def seed_organization(org, held: dict[datetime.date, dict[str, Decimal]], today: datetime.date | None = None) -> bool:
    """Queue and fetch the window's cost of ``org`` (False: nothing done: no endpoint, no account, or cost rows
    already there)."""
    endpoint = settings.AWS_ENDPOINT_URL
    if not endpoint or not org.aws_account_id or CostDay.objects.filter(organization=org).exists():
        return False
    today = today or timezone.localdate()
    start = today - datetime.timedelta(days=WINDOW_DAYS)
    _queue(endpoint, org.aws_account_id, results(org, start, today, held))
    spend.fetch(org.pk, start, today)
    return True
