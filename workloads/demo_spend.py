"""Demo seed for cost: Cost Explorer answers queued on the embedded endpoint, then fetched as in production.

moto's Cost Explorer answers ``GetCostAndUsage`` with results queued through its own API
(``/moto-api/static/ce/cost-and-usage-results``, one queue per account). The seed queues two weeks of
daily figures per organization shaped like a GENIAC account (P5 or Trn1 instances, FSx for Lustre,
S3, some SageMaker) and runs the real fetch, so the rows the pages show came through boto3. Without the
embedded endpoint nothing is seeded. An organization that already has cost rows is left alone.
"""
from __future__ import annotations

import datetime
import json
import random
import urllib.request

from django.conf import settings

from workloads import spend
from workloads.models import CostDay, InstanceQuota

# On-demand hourly prices (us-east-1) the amounts are shaped on.
HOURLY = {"p5": 98.32, "trn1": 21.50}
SERVICES = (
    ("Amazon Elastic Compute Cloud - Compute", 1.0),
    ("Amazon FSx", 0.018),
    ("Amazon Simple Storage Service", 0.004),
    ("EC2 - Other", 0.011),
)


def _queue(endpoint: str, account_id: str, result: dict) -> None:
    if not endpoint.startswith(("http://", "https://")):
        raise ValueError(f"not an endpoint URL: {endpoint!r}")
    body = json.dumps({"account_id": account_id, "results": [result]}).encode()
    url = f"{endpoint.rstrip('/')}/moto-api/static/ce/cost-and-usage-results"
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)  # noqa: S310 - scheme checked
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - scheme checked
        response.read()


def results(instances: int, family: str, start: datetime.date, end: datetime.date, *, seed: int,
            sagemaker: bool) -> dict:
    """Cost Explorer's answer for [start, end): each day's amount per service."""
    rng = random.Random(seed)
    by_time = []
    day = start
    while day < end:
        busy = rng.uniform(0.85, 1.0)
        compute = instances * HOURLY[family] * 24 * busy
        groups = [{"Keys": [service], "Metrics": {"UnblendedCost": {"Amount": f"{compute * share:.6f}", "Unit": "USD"}}}
                  for service, share in SERVICES]
        if sagemaker:
            groups.append({"Keys": ["Amazon SageMaker"],
                           "Metrics": {"UnblendedCost": {"Amount": f"{rng.uniform(40, 160):.6f}", "Unit": "USD"}}})
        by_time.append({"TimePeriod": {"Start": day.isoformat(), "End": (day + datetime.timedelta(days=1)).isoformat()},
                        "Total": {}, "Groups": groups, "Estimated": day >= end - datetime.timedelta(days=2)})
        day += datetime.timedelta(days=1)
    return {"ResultsByTime": by_time, "DimensionValueAttributes": []}


def seed(context: dict) -> None:
    endpoint = settings.AWS_ENDPOINT_URL
    if not endpoint:
        return
    start, end = spend.default_window()
    for index, org in enumerate(context["organizations"].values()):
        if not org.aws_account_id or CostDay.objects.filter(organization=org).exists():
            continue
        quota = InstanceQuota.objects.filter(organization=org).order_by("-count").first()
        instances = quota.count if quota else 2
        family = "trn1" if quota and quota.instance_type_name.startswith("trn1") else "p5"
        _queue(endpoint, org.aws_account_id,
               results(instances, family, start, end, seed=index, sagemaker=index % 3 == 0))
        spend.fetch(org.pk)
