"""Catalog of the accelerated EC2 instance types the program hands out.

The health parsers need to know how many GPUs a node *should* report (to find the
ones that fell off the bus) and how many EFA devices it has; the portal's forms need
a list to choose from. The figures are plain data copied from the AWS instance type
pages (https://aws.amazon.com/ec2/instance-types/p5/, /p4/, /trn1/, /trn2/, /g5/,
/g6e/) and the program's DOMAIN notes; correct them here, nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

SAGEMAKER_PREFIX = "ml."


class UnknownInstanceType(KeyError):
    """Raised for a name that is not in the catalog (a KeyError, so dict-style callers work)."""

    def __str__(self) -> str:
        return f"unknown instance type: {self.args[0]!r}" if self.args else "unknown instance type"


@dataclass(frozen=True)
class InstanceType:
    """One accelerated instance type.

    ``accelerator_count`` counts GPUs or Trainium chips; ``gpus`` is 0 for Trainium so
    that GPU health code never expects DCGM series from a Trainium node.
    """

    name: str
    accelerator: str
    accelerator_count: int
    gpus: int
    efa_devices: int
    network_gbps: int
    vcpus: int
    memory_gib: int
    accelerator_memory_gib: int

    @property
    def label(self) -> str:
        """Human label for select boxes, e.g. ``p5.48xlarge (8 × H100 80 GB)``."""
        unit = "chips" if self.gpus == 0 else "×"
        if self.gpus == 0:
            return f"{self.name} ({self.accelerator_count} {self.accelerator} {unit})"
        return f"{self.name} ({self.accelerator_count} {unit} {self.accelerator} {self.accelerator_memory_gib} GB)"


_CATALOG: tuple[InstanceType, ...] = (
    # P5: 8 × H100 80 GB, 32 EFA devices (EFAv2), 3,200 Gbps, 192 vCPU, 2 TiB.
    InstanceType("p5.48xlarge", "H100", 8, 8, 32, 3200, 192, 2048, 80),
    # P5e: same chassis as P5 with 8 × H200 141 GB.
    InstanceType("p5e.48xlarge", "H200", 8, 8, 32, 3200, 192, 2048, 141),
    # P5en: 8 × H200, EFAv3 with 16 devices still giving 3,200 Gbps, Sapphire Rapids CPUs.
    InstanceType("p5en.48xlarge", "H200", 8, 8, 16, 3200, 192, 2048, 141),
    # P6-B200: 8 × B200, 8 EFAv4 devices at 3,200 Gbps.
    InstanceType("p6-b200.48xlarge", "B200", 8, 8, 8, 3200, 192, 2048, 179),
    # P4d: 8 × A100 40 GB, 4 EFA devices, 400 Gbps, 96 vCPU, 1,152 GiB.
    InstanceType("p4d.24xlarge", "A100", 8, 8, 4, 400, 96, 1152, 40),
    # P4de: as P4d with A100 80 GB.
    InstanceType("p4de.24xlarge", "A100", 8, 8, 4, 400, 96, 1152, 80),
    # Trn1: 16 Trainium chips (32 NeuronCores), 8 EFA devices, 800 Gbps, 512 GiB.
    InstanceType("trn1.32xlarge", "Trainium", 16, 0, 8, 800, 128, 512, 32),
    # Trn1n: as Trn1 with 16 EFA devices and 1,600 Gbps.
    InstanceType("trn1n.32xlarge", "Trainium", 16, 0, 16, 1600, 128, 512, 32),
    # Trn2: 16 Trainium2 chips (96 GiB HBM each), 16 EFAv3 devices, 3,200 Gbps, 2 TiB.
    InstanceType("trn2.48xlarge", "Trainium2", 16, 0, 16, 3200, 192, 2048, 96),
    # G5: 8 × A10G 24 GB, 1 EFA device, 100 Gbps, 768 GiB.
    InstanceType("g5.48xlarge", "A10G", 8, 8, 1, 100, 192, 768, 24),
    # G6e: 8 × L40S 48 GB, 400 Gbps with EFA (4 network cards), 1,536 GiB.
    InstanceType("g6e.48xlarge", "L40S", 8, 8, 4, 400, 192, 1536, 48),
)

_BY_NAME: dict[str, InstanceType] = {item.name: item for item in _CATALOG}


def normalize(name: str) -> str:
    """Return the EC2 name for ``name``: SageMaker HyperPod spells the same machines ``ml.<type>``."""
    name = name.strip().lower()
    return name.removeprefix(SAGEMAKER_PREFIX)


def get(name: str) -> InstanceType:
    """Look up an instance type by EC2 or SageMaker name; raise ``UnknownInstanceType`` otherwise."""
    try:
        return _BY_NAME[normalize(name)]
    except (KeyError, AttributeError):
        raise UnknownInstanceType(name) from None


def find(name: str | None) -> InstanceType | None:
    """Like ``get`` but answer ``None`` for empty or unknown names (for optional inputs)."""
    if not name:
        return None
    try:
        return get(name)
    except UnknownInstanceType:
        return None


def all_types() -> tuple[InstanceType, ...]:
    """Every catalogued type, in catalog order."""
    return _CATALOG


def choices() -> list[tuple[str, str]]:
    """``(name, label)`` pairs for a Django ``ChoiceField``."""
    return [(item.name, item.label) for item in _CATALOG]
