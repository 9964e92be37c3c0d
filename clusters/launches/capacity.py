"""What a chosen reservation produces in a launch's stack parameters.

ParallelCluster takes an On-Demand Capacity Reservation as a targeted reservation
(``CapacityType: ONDEMAND`` + ``CapacityReservationTarget``) and a Capacity Block for ML as
``CapacityType: CAPACITY_BLOCK`` with the block's id, every node static (MinCount = MaxCount).
HyperPod takes neither: its reserved capacity is a SageMaker training plan on the instance group.
Both need the subnets in the reservation's availability zone, so a full-stack launch creates its
network there. Whether the reservation may be used at all (organization, instance type, region,
size, dates) is the launch validation's business; this module only wires it in.
"""
from __future__ import annotations

from typing import Any

# Blueprint kind → (the cluster parameter that names the reservation, the reservation kinds it takes)
PARAMETER = {
    "parallelcluster": ("CapacityReservationId", ("odcr", "capacity_block")),
    "hyperpod": ("TrainingPlanArn", ("training_plan",)),
    "hyperpod-eks": ("TrainingPlanArn", ("training_plan",)),
}
CAPACITY_TYPE = {"odcr": "ONDEMAND", "capacity_block": "CAPACITY_BLOCK"}
PARAMETER_NAMES = frozenset(name for name, _ in PARAMETER.values())


class WrongKind(ValueError):
    """A reservation the blueprint cannot use (an EC2 reservation for HyperPod, a training plan for ParallelCluster)."""


def parameter_for(blueprint_kind: str) -> str | None:
    return PARAMETER.get(blueprint_kind, (None, ()))[0]


def kinds_for(blueprint_kind: str) -> tuple[str, ...]:
    return PARAMETER.get(blueprint_kind, (None, ()))[1]


def wire(parameters: dict[str, dict[str, str]], reservation: Any, *, blueprint_kind: str) -> dict[str, dict[str, str]]:
    """A copy of ``parameters`` (keyed by stack role) with the reservation wired in."""
    name, kinds = PARAMETER.get(blueprint_kind, (None, ()))
    if name is None:
        raise WrongKind(f"a {blueprint_kind} stack takes no capacity reservation")
    if reservation.kind not in kinds:
        label = reservation.get_kind_display() if hasattr(reservation, "get_kind_display") else reservation.kind
        raise WrongKind(f"{reservation.reservation_id} is a {label}; a {blueprint_kind} cluster takes "
                        f"{' or '.join(kinds).replace('_', ' ')} capacity")
    wired = {role: dict(values) for role, values in parameters.items()}
    cluster = wired.setdefault("cluster", {})
    cluster[name] = reservation.reservation_id
    if blueprint_kind == "parallelcluster":
        cluster["CapacityType"] = CAPACITY_TYPE[reservation.kind]
        if reservation.kind == "capacity_block" and cluster.get("ComputeMaxCount"):
            cluster["ComputeMinCount"] = cluster["ComputeMaxCount"]  # a block runs every node it holds
    if "network" in wired:
        wired["network"]["AvailabilityZone"] = reservation.availability_zone
    return wired


def chosen(parameters: dict[str, dict[str, str]], blueprint_kind: str) -> str:
    """The reservation id the launch names, '' for none."""
    name = parameter_for(blueprint_kind)
    return (parameters.get("cluster") or {}).get(name or "", "") if name else ""
