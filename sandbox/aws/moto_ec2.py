"""EC2 capacity reservations, Capacity Blocks and placement groups for moto's server, which has none.

ParallelCluster's own validators read a queue's reservation (``DescribeCapacityReservations``) to
check its instance type, its availability zone against the queue's subnet, that a
``CAPACITY_BLOCK`` queue names a Capacity Block and that MaxCount fits in it. So that those checks
run against the embedded endpoint, this module keeps reservations per account and region and
answers ``CreateCapacityReservation`` (an ODCR), ``DescribeCapacityReservations`` and
``CancelCapacityReservation``, and ``GetCapacityReservationUsage`` (what capacity accounting cross-checks: the
instances running in a reservation, set in the server's process with :func:`set_reservation_usage`, as moto's
instances never consume a reservation). Capacity Blocks are bought from offerings on AWS; here
:func:`add_capacity_block` records one directly (in the server's process). Placement groups
created by the network blueprint are registered here too, so ``DescribePlacementGroups`` (which
ParallelCluster's placement group validator calls) sees them. Two more gaps ParallelCluster's
validators hit: instance store block device mappings, and AWS managed policies (``GetPolicy``).
"""
from __future__ import annotations

import datetime
import json
from typing import Any

from moto.core.responses import ActionResult
from moto.ec2.exceptions import EC2ClientError
from moto.ec2.models import ec2_backends
from moto.ec2.responses import EC2Response
from moto.ec2.responses.instances import InstanceResponse
from moto.iam.aws_managed_policies import aws_managed_policies_data
from moto.iam.models import AWSManagedPolicy, IAMBackend
from moto.moto_api._internal import mock_random


def _store(account_id: str, region: str, kind: str = "capacity_reservations") -> dict[str, dict[str, Any]]:
    """One account and region's reservations (or placement groups), kept on moto's EC2 backend so a reset empties them."""
    backend = ec2_backends[account_id][region]
    return backend.__dict__.setdefault(f"geniac_{kind}", {})


def register_placement_group(account_id: str, region: str, name: str, strategy: str) -> None:
    group_id = "pg-" + "".join(mock_random.choice("0123456789abcdef") for _ in range(17))
    _store(account_id, region, "placement_groups")[name] = {
        "GroupName": name, "GroupId": group_id, "State": "available", "Strategy": strategy,
        "GroupArn": f"arn:aws:ec2:{region}:{account_id}:placement-group/{name}"}


def forget_placement_group(account_id: str, region: str, name: str) -> None:
    _store(account_id, region, "placement_groups").pop(name, None)


def describe_placement_groups(self: EC2Response) -> ActionResult:
    known = _store(self.current_account, self.region, "placement_groups")
    names = self._get_param("GroupNames") or list(known)
    missing = [n for n in names if n not in known]
    if missing:
        raise EC2ClientError("InvalidPlacementGroup.Unknown", f"The Placement Group '{missing[0]}' is unknown.")
    return ActionResult({"PlacementGroups": [known[n] for n in names]})


class _NotFound(EC2ClientError):
    def __init__(self, reservation_id: str) -> None:
        super().__init__("InvalidCapacityReservationId.NotFound",
                         f"The capacity reservation ID '{reservation_id}' does not exist")


def _new_id() -> str:
    return "cr-" + "".join(mock_random.choice("0123456789abcdef") for _ in range(17))


def _record(account_id: str, region: str, *, instance_type: str, availability_zone: str, count: int,
            reservation_type: str, reservation_id: str | None = None, platform: str = "Linux/UNIX") -> dict[str, Any]:
    reservation_id = reservation_id or _new_id()
    now = datetime.datetime.now(datetime.UTC)
    reservation = {
        "CapacityReservationId": reservation_id,
        "OwnerId": account_id,
        "CapacityReservationArn": f"arn:aws:ec2:{region}:{account_id}:capacity-reservation/{reservation_id}",
        "InstanceType": instance_type,
        "InstancePlatform": platform,
        "AvailabilityZone": availability_zone,
        "Tenancy": "default",
        "TotalInstanceCount": count,
        "AvailableInstanceCount": count,
        "State": "active",
        "StartDate": now,
        "InstanceMatchCriteria": "targeted" if reservation_type == "capacity-block" else "open",
        "CreateDate": now,
        "ReservationType": reservation_type,
    }
    _store(account_id, region)[reservation_id] = reservation
    return reservation


def add_capacity_block(account_id: str, region: str, *, instance_type: str, availability_zone: str, count: int,
                       reservation_id: str | None = None) -> str:
    """Record a Capacity Block for ML as if it had been purchased; its id."""
    return _record(account_id, region, instance_type=instance_type, availability_zone=availability_zone, count=count,
                   reservation_type="capacity-block", reservation_id=reservation_id)["CapacityReservationId"]


def create_capacity_reservation(self: EC2Response) -> ActionResult:
    reservation = _record(
        self.current_account, self.region, instance_type=self._get_param("InstanceType"),
        availability_zone=self._get_param("AvailabilityZone"), count=int(self._get_param("InstanceCount")),
        reservation_type="default", platform=self._get_param("InstancePlatform") or "Linux/UNIX")
    return ActionResult({"CapacityReservation": reservation})


def describe_capacity_reservations(self: EC2Response) -> ActionResult:
    known = _store(self.current_account, self.region)
    ids = self._get_param("CapacityReservationIds") or list(known)
    missing = [i for i in ids if i not in known]
    if missing:
        raise _NotFound(missing[0])
    return ActionResult({"CapacityReservations": [known[i] for i in ids]})


def cancel_capacity_reservation(self: EC2Response) -> ActionResult:
    reservation_id = self._get_param("CapacityReservationId")
    known = _store(self.current_account, self.region)
    if reservation_id not in known:
        raise _NotFound(reservation_id)
    known[reservation_id]["State"] = "cancelled"
    return ActionResult({"Return": True})


def set_reservation_usage(account_id: str, region: str, reservation_id: str, in_use: int) -> None:
    """Say that ``in_use`` instances of the account run in the reservation (in the server's process)."""
    reservation = _store(account_id, region)[reservation_id]
    reservation["AvailableInstanceCount"] = max(0, reservation["TotalInstanceCount"] - in_use)


def get_capacity_reservation_usage(self: EC2Response) -> ActionResult:
    reservation_id = self._get_param("CapacityReservationId")
    known = _store(self.current_account, self.region)
    if reservation_id not in known:
        raise _NotFound(reservation_id)
    r = known[reservation_id]
    used = r["TotalInstanceCount"] - r["AvailableInstanceCount"]
    return ActionResult({
        "CapacityReservationId": reservation_id, "InstanceType": r["InstanceType"],
        "TotalInstanceCount": r["TotalInstanceCount"], "AvailableInstanceCount": r["AvailableInstanceCount"],
        "State": r["State"],
        "InstanceUsages": [{"AccountId": self.current_account, "UsedInstanceCount": used}] if used else []})


def _accept_instance_store_mappings() -> None:
    """``{"DeviceName": ..., "VirtualName": "ephemeral0"}`` maps an instance store volume; AWS takes it, moto wants Ebs."""
    original = InstanceResponse._validate_block_device_mapping

    def validate(device_mapping: dict[str, Any]) -> None:
        if device_mapping.get("VirtualName", "").startswith("ephemeral") and "Ebs" not in device_mapping:
            return
        original(device_mapping)

    InstanceResponse._validate_block_device_mapping = staticmethod(validate)


def _aws_managed_policies_on_demand() -> None:
    """``GetPolicy`` of an AWS managed policy answers from moto's copy of them, loading only that one.

    ParallelCluster checks that every policy a node role attaches exists; moto knows AWS's managed
    policies but loads all of them into every account only when told to, which makes each reset slow.
    """
    original = IAMBackend.get_policy
    published = json.loads(aws_managed_policies_data)

    def get_policy(self: Any, policy_arn: str) -> Any:
        name = policy_arn.rsplit("/", 1)[-1]
        if policy_arn not in self.managed_policies and policy_arn.split(":")[4:5] == ["aws"] and name in published:
            policy = AWSManagedPolicy.from_data(name, self.account_id, self.region_name, published[name])
            if policy.arn == policy_arn:
                self.managed_policies[policy_arn] = policy
        return original(self, policy_arn)

    IAMBackend.get_policy = get_policy


def apply() -> None:
    _accept_instance_store_mappings()
    _aws_managed_policies_on_demand()
    for handler in (create_capacity_reservation, describe_capacity_reservations, cancel_capacity_reservation,
                    get_capacity_reservation_usage, describe_placement_groups):
        setattr(EC2Response, handler.__name__, handler)
