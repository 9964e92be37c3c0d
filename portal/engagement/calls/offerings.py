"""Whether AWS can supply what an award gives out: Capacity Block and training plan offerings.

For each instance type and region of the award (instances summed, the longest weeks), the program's role asks EC2
``DescribeCapacityBlockOfferings`` and, when EC2 has no block that holds them all, SageMaker
``SearchTrainingPlanOfferings`` (HyperPod capacity). A line is suppliable when either answers an offering of at
least that many instances from the next cycle's first day; the offering's id is kept with the award, as the
reservation to request. Requests follow botocore's shapes exactly (SageMaker's instance type is ``ml.``-prefixed
and one of its enum; its instance count is at most 256, so a larger line is not asked there).
"""
from __future__ import annotations

import datetime
from collections import defaultdict
from dataclasses import dataclass

from django.utils.translation import gettext

from portal.core import aws

SAGEMAKER_TYPES = frozenset({"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge",
                             "p6-b200.48xlarge", "trn1.32xlarge", "trn2.48xlarge"})
SAGEMAKER_MAX_COUNT = 256


@dataclass
class Supply:
    instance_type: str
    region: str
    count: int
    weeks: int
    source: str = ""  # "capacity_block" or "training_plan"; empty when AWS offered nothing
    offering_id: str = ""
    upfront_fee: str = ""
    error: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.offering_id)

    def refusal(self) -> str:
        if self.error:
            return gettext("AWS could not be asked about %(count)s × %(type)s in %(region)s: %(error)s") % {
                "count": self.count, "type": self.instance_type, "region": self.region, "error": self.error}
        return gettext("AWS offers no Capacity Block or training plan of %(count)s × %(type)s in %(region)s for "
                       "%(weeks)s weeks.") % {"count": self.count, "type": self.instance_type, "region": self.region,
                                              "weeks": self.weeks}


def grouped(rows) -> list[Supply]:
    """The award's lines per (type, region): instances summed, the longest weeks."""
    found: dict[tuple[str, str], Supply] = {}
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for r in rows:
        key = (r["instance_type"], r["region"])
        counts[key] += r["count"]
        weeks = max(r["weeks"], found[key].weeks if key in found else 0)
        found[key] = Supply(r["instance_type"], r["region"], counts[key], weeks)
    return [found[k] for k in sorted(found)]


def _start(day: datetime.date) -> datetime.datetime:
    return datetime.datetime.combine(day, datetime.time(), tzinfo=datetime.UTC)


def ask(supply: Supply, starts_on: datetime.date) -> Supply:
    """Ask AWS for ``supply`` (in place, answered too): EC2 Capacity Blocks first, then SageMaker training plans."""
    hours = supply.weeks * 7 * 24
    start = _start(starts_on)
    try:
        ec2 = aws.program_client("ec2", region=supply.region)
        answer = ec2.describe_capacity_block_offerings(
            InstanceType=supply.instance_type, InstanceCount=supply.count, CapacityDurationHours=hours,
            StartDateRange=start, EndDateRange=start + datetime.timedelta(days=7))
        for offer in answer.get("CapacityBlockOfferings", []):
            if offer.get("InstanceCount", 0) >= supply.count:
                supply.source, supply.offering_id = "capacity_block", offer["CapacityBlockOfferingId"]
                supply.upfront_fee = offer.get("UpfrontFee", "")
                return supply
        if supply.instance_type in SAGEMAKER_TYPES and supply.count <= SAGEMAKER_MAX_COUNT:
            sagemaker = aws.program_client("sagemaker", region=supply.region)
            answer = sagemaker.search_training_plan_offerings(
                InstanceType=f"ml.{supply.instance_type}", InstanceCount=supply.count, StartTimeAfter=start,
                DurationHours=hours, TargetResources=["hyperpod-cluster"])
            for offer in answer.get("TrainingPlanOfferings", []):
                held = sum(c.get("InstanceCount", 0) for c in offer.get("ReservedCapacityOfferings", []))
                if held >= supply.count:
                    supply.source, supply.offering_id = "training_plan", offer["TrainingPlanOfferingId"]
                    supply.upfront_fee = offer.get("UpfrontFee", "")
                    return supply
    except aws.AWS_EXCEPTIONS as exc:
        supply.error = str(aws.translate(exc))
    except aws.AwsError as exc:
        supply.error = str(exc)
    return supply


def check(rows, starts_on: datetime.date) -> list[Supply]:
    """Every (type, region) of ``rows``, asked of AWS."""
    return [ask(s, starts_on) for s in grouped(rows)]
