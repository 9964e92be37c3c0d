"""What AWS could sell: EC2 ``DescribeCapacityBlockOfferings`` and SageMaker ``SearchTrainingPlanOfferings``.

moto answers neither. The award of a call asks both, through the program's role, whether the capacity it gives out
can really be had. Here each account and region has a supply per instance type (``DEFAULT_SUPPLY`` instances unless
:func:`set_supply` says otherwise, in the server's process); a request for at most that many instances gets one
offering (in the region's first availability zone, starting when asked, for the hours asked), a larger one gets
none, as AWS answers an empty list when nothing fits. Capacity already recorded as bought (a Capacity Block from
:mod:`sandbox.aws.moto_ec2`) is not subtracted: offerings are what the market has, not what the account holds.

Used only by the embedded endpoint; :func:`apply` is called by ``sandbox.aws.moto_install.install``.
"""
from __future__ import annotations

import datetime
import hashlib
from typing import Any

from moto.core.responses import ActionResult
from moto.ec2.models import ec2_backends
from moto.ec2.responses import EC2Response
from moto.sagemaker.responses import SageMakerResponse

DEFAULT_SUPPLY = 64
SAGEMAKER_PREFIX = "ml."
# What an accelerator-hour of each family costs up front in the emulation (USD), so offerings carry a fee.
HOURLY_FEE = {"p5": 31.464, "p5e": 34.608, "p5en": 36.184, "p4d": 11.57, "p4de": 14.5, "p6-b200": 45.0,
              "trn1": 10.7, "trn2": 24.0}


def _supply(account_id: str, region: str) -> dict[tuple[str, str], int]:
    """One account and region's supply per (service, instance type), kept on moto's EC2 backend so a reset
    empties it."""
    return ec2_backends[account_id][region].__dict__.setdefault("geniac_offering_supply", {})


def set_supply(account_id: str, region: str, instance_type: str, instances: int, *, service: str = "") -> None:
    """Say how many instances of ``instance_type`` (EC2 or SageMaker name) AWS could sell in the region, as
    Capacity Blocks (``service="ec2"``), training plans (``"sagemaker"``) or both (empty)."""
    for name in ((service,) if service else ("ec2", "sagemaker")):
        _supply(account_id, region)[(name, instance_type.removeprefix(SAGEMAKER_PREFIX))] = instances


def available(account_id: str, region: str, instance_type: str, service: str) -> int:
    return _supply(account_id, region).get((service, instance_type.removeprefix(SAGEMAKER_PREFIX)), DEFAULT_SUPPLY)


def _start(value: Any) -> datetime.datetime:
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo else value.replace(tzinfo=datetime.UTC)
    if value:
        try:
            return datetime.datetime.fromtimestamp(float(value), datetime.UTC)
        except ValueError:
            return datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return datetime.datetime.now(datetime.UTC).replace(minute=0, second=0, microsecond=0)


def _offering_id(prefix: str, *parts: Any) -> str:
    return prefix + hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:17]


def _fee(instance_type: str, count: int, hours: int) -> str:
    family = instance_type.removeprefix(SAGEMAKER_PREFIX).split(".")[0]
    return f"{HOURLY_FEE.get(family, 20.0) * count * hours:.2f}"


def describe_capacity_block_offerings(self: EC2Response) -> ActionResult:
    instance_type = self._get_param("InstanceType") or ""
    count = int(self._get_param("InstanceCount") or 1)
    hours = int(self._get_param("CapacityDurationHours"))
    start = _start(self._get_param("StartDateRange"))
    offerings = []
    if instance_type and count <= available(self.current_account, self.region, instance_type, "ec2"):
        offerings.append({
            "CapacityBlockOfferingId": _offering_id("cb-", self.region, instance_type, count, hours, start),
            "InstanceType": instance_type, "AvailabilityZone": f"{self.region}a", "InstanceCount": count,
            "StartDate": start, "EndDate": start + datetime.timedelta(hours=hours),
            "CapacityBlockDurationHours": hours, "CapacityBlockDurationMinutes": 0,
            "UpfrontFee": _fee(instance_type, count, hours), "CurrencyCode": "USD", "Tenancy": "default",
        })
    return ActionResult({"CapacityBlockOfferings": offerings})


def search_training_plan_offerings(self: Any) -> ActionResult:
    instance_type = self._get_param("InstanceType") or ""
    count = int(self._get_param("InstanceCount") or 1)
    hours = int(self._get_param("DurationHours") or 24)
    start = _start(self._get_param("StartTimeAfter"))
    targets = self._get_param("TrainingPlanTargetResources") or self._get_param("TargetResources") or ["training-job"]
    offerings = []
    if instance_type and count <= available(self.current_account, self.region, instance_type, "sagemaker"):
        offerings.append({
            "TrainingPlanOfferingId": _offering_id("tpo-", self.region, instance_type, count, hours, start),
            "TargetResources": targets, "RequestedStartTimeAfter": start, "DurationHours": hours,
            "DurationMinutes": 0, "UpfrontFee": _fee(instance_type, count, hours), "CurrencyCode": "USD",
            "ReservedCapacityOfferings": [{
                "InstanceType": instance_type, "InstanceCount": count, "AvailabilityZone": f"{self.region}a",
                "DurationHours": hours, "DurationMinutes": 0, "StartTime": start,
                "EndTime": start + datetime.timedelta(hours=hours)}],
        })
    return ActionResult({"TrainingPlanOfferings": offerings})


def apply() -> None:
    EC2Response.describe_capacity_block_offerings = describe_capacity_block_offerings
    SageMakerResponse.search_training_plan_offerings = search_training_plan_offerings
