"""SageMaker training plans for moto's server, which has none: ``DescribeTrainingPlan``.

Training plans are bought from offerings on AWS; here :func:`add_training_plan` records one directly (in the
server's process, like a Capacity Block in :mod:`sandbox.aws.moto_ec2`) and :func:`set_training_plan_usage` says
how many of its instances run. Capacity accounting reads ``TotalInstanceCount`` and ``InUseInstanceCount``.

Used only by the embedded endpoint; :func:`apply` is called by ``sandbox.aws.moto_install.install``.
"""
from __future__ import annotations

import datetime
from typing import Any

from moto.core.exceptions import JsonRESTError
from moto.core.responses import ActionResult
from moto.sagemaker.models import sagemaker_backends
from moto.sagemaker.responses import SageMakerResponse


def _store(account_id: str, region: str) -> dict[str, dict[str, Any]]:
    """One account and region's plans, kept on moto's SageMaker backend so a reset empties them."""
    return sagemaker_backends[account_id][region].__dict__.setdefault("geniac_training_plans", {})


def add_training_plan(account_id: str, region: str, *, name: str, instance_type: str, count: int,
                      days: int = 30, in_use: int = 0) -> str:
    """Record an active training plan as if it had been bought; its ARN."""
    arn = f"arn:aws:sagemaker:{region}:{account_id}:training-plan/{name}"
    start = datetime.datetime.now(datetime.UTC)
    _store(account_id, region)[name] = {
        "TrainingPlanArn": arn, "TrainingPlanName": name, "Status": "Active",
        "DurationHours": days * 24, "DurationMinutes": 0, "StartTime": start,
        "EndTime": start + datetime.timedelta(days=days), "UpfrontFee": "0", "CurrencyCode": "USD",
        "TotalInstanceCount": count, "AvailableInstanceCount": count - in_use, "InUseInstanceCount": in_use,
        "TargetResources": ["hyperpod-cluster"],
        # As SageMaker describes it: the capacity's own ARN, and the instance type with its "ml." prefix.
        "ReservedCapacitySummaries": [{
            "ReservedCapacityArn": f"arn:aws:sagemaker:{region}:{account_id}:reserved-capacity/{name}-1",
            "InstanceType": instance_type if instance_type.startswith("ml.") else f"ml.{instance_type}",
            "TotalInstanceCount": count, "Status": "Active"}],
    }
    return arn


def set_training_plan_usage(account_id: str, region: str, name: str, in_use: int) -> None:
    plan = _store(account_id, region)[name]
    plan["InUseInstanceCount"] = in_use
    plan["AvailableInstanceCount"] = max(0, plan["TotalInstanceCount"] - in_use)


def describe_training_plan(self: Any) -> ActionResult:
    name = self._get_param("TrainingPlanName") or ""
    plan = _store(self.current_account, self.region).get(name)
    if plan is None:
        raise JsonRESTError("ResourceNotFound", f"Training plan {name} does not exist.")
    return ActionResult(plan)


def apply() -> None:
    SageMakerResponse.describe_training_plan = describe_training_plan
