"""How the launch form names CloudFormation parameters for people: "Compute instance type", not
``ComputeInstanceType`` (the parameter's own name stays in the help text, for those who know the template).

Also the availability zones offered for ``AWS::EC2::AvailabilityZone::Name`` parameters: the zones of the
program's regions, grouped by region, so a zone is picked rather than typed.
"""
from __future__ import annotations

import re

# Where splitting the CamelCase name would not read well.
OVERRIDES = {
    "Os": "Operating system",
    "LustreThroughputPerTiB": "Lustre throughput per TiB (MB/s)",
    "LustreStorageCapacity": "Lustre storage capacity (GiB)",
    "HomeStorageCapacity": "Home file system capacity (GiB)",
    "HomeThroughputCapacity": "Home file system throughput (MB/s)",
    "CapacityReservationId": "Capacity reservation",
    "CapacityType": "Capacity type",
    "ComputeMinCount": "Minimum compute nodes",
    "ComputeMaxCount": "Maximum compute nodes",
    "WorkerCount": "Worker nodes",
    "CreateHomeFileSystem": "Create a home file system",
    "VpcCidr": "VPC address range (CIDR)",
    "PublicSubnetCidr": "Public subnet address range (CIDR)",
    "PrivateSubnetCidr": "Private subnet address range (CIDR)",
    "KeyName": "SSH key pair",
    "EfaSecurityGroup": "EFA security group",
    "ParallelClusterVersion": "ParallelCluster version",
}
ACRONYMS = {"vpc": "VPC", "efa": "EFA", "cidr": "CIDR", "ssh": "SSH", "fsx": "FSx", "s3": "S3", "id": "ID",
            "arn": "ARN", "url": "URL", "dns": "DNS", "zfs": "ZFS", "os": "OS", "tib": "TiB", "gib": "GiB"}
WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

# Zones of the program's regions that offer accelerated instances (ap-northeast-1b is not offered to new accounts).
ZONES = {
    "ap-northeast-1": ("a", "c", "d"),
    "ap-northeast-3": ("a", "b", "c"),
    "us-east-1": ("a", "b", "c", "d", "e", "f"),
    "us-east-2": ("a", "b", "c"),
    "us-west-2": ("a", "b", "c", "d"),
    "eu-north-1": ("a", "b", "c"),
}


def parameter_label(name: str) -> str:
    """'ComputeInstanceType' → 'Compute instance type'; 'EfaIngressFromSelf' → 'EFA ingress from self'."""
    if name in OVERRIDES:
        return OVERRIDES[name]
    words = [ACRONYMS.get(w.lower(), w.lower()) for w in WORDS.findall(name)] or [name]
    first = words[0]
    words[0] = first if first.isupper() or first in ACRONYMS.values() else first.capitalize()
    return " ".join(words)


def zone_choices() -> list:
    """Zones grouped by region, for a <select> with <optgroup>s."""
    from portal.choices import REGIONS

    return [("", "Choose a zone")] + [
        (label, [(f"{code}{z}", f"{code}{z}") for z in ZONES.get(code, ("a", "b", "c"))]) for code, label in REGIONS
    ]
