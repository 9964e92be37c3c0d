"""How the launch form names CloudFormation parameters for people: "Compute instance type", not
``ComputeInstanceType`` (the parameter's own name stays in the help text, for those who know the template).

Also the availability zones offered for ``AWS::EC2::AvailabilityZone::Name`` parameters: the zones of the
program's regions, grouped by region, so a zone is picked rather than typed.
"""
from __future__ import annotations

import re

from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _

from portal.core.choices import REGIONS

# Where splitting the CamelCase name would not read well.
OVERRIDES = {
    "Os": _("Operating system"),
    "LustreThroughputPerTiB": _("Lustre throughput per TiB (MB/s)"),
    "LustreStorageCapacity": _("Lustre storage capacity (GiB)"),
    "HomeStorageCapacity": _("Home file system capacity (GiB)"),
    "HomeThroughputCapacity": _("Home file system throughput (MB/s)"),
    "CapacityReservationId": _("Capacity reservation"),
    "CapacityType": _("Capacity type"),
    "ComputeMinCount": _("Minimum compute nodes"),
    "ComputeMaxCount": _("Maximum compute nodes"),
    "WorkerCount": _("Worker nodes"),
    "CreateHomeFileSystem": _("Create a home file system"),
    "LustreDeletionPolicy": _("When the storage stack is deleted, the Lustre file system is"),
    "LustreEfaEnabled": _("Lustre over EFA"),
    "VpcCidr": _("VPC address range (CIDR)"),
    "PublicSubnetCidr": _("Public subnet address range (CIDR)"),
    "PrivateSubnetCidr": _("Private subnet address range (CIDR)"),
    "KeyName": _("SSH key pair"),
    "EfaSecurityGroup": _("EFA security group"),
    "ParallelClusterVersion": _("ParallelCluster version"),
}
# The labels derived from the blueprints' other parameter names, listed so the catalogue has them (a test fails
# when a blueprint parameter's label has no translation).
DERIVED = (
    gettext_noop("Accounting database password secret ARN"), gettext_noop("Accounting database uri"),
    gettext_noop("Accounting database user name"), gettext_noop("Alert endpoint URL"), gettext_noop("Availability zone"),
    gettext_noop("Bucket name"), gettext_noop("Cluster name"), gettext_noop("Compute instance type"),
    gettext_noop("Control plane subnet 1 CIDR"), gettext_noop("Control plane subnet 2 CIDR"),
    gettext_noop("Controller instance type"), gettext_noop("Custom ami"), gettext_noop("Data repository prefix"),
    gettext_noop("Deep health checks"), gettext_noop("Disable simultaneous multithreading"),
    gettext_noop("Flow log retention in days"), gettext_noop("Grafana authentication"),
    gettext_noop("Head node instance type"), gettext_noop("Home deployment type"),
    gettext_noop("Instance volume size in gb"), gettext_noop("Kubernetes version"), gettext_noop("Lustre DNS name"),
    gettext_noop("Lustre file system ID"), gettext_noop("Lustre mount name"), gettext_noop("On create script"),
    gettext_noop("Open ZFS root volume ID"), gettext_noop("Placement group name"), gettext_noop("Private subnet ID"),
    gettext_noop("Public subnet ID"), gettext_noop("Queue name"), gettext_noop("Security group ID"),
    gettext_noop("Training plan ARN"), gettext_noop("VPC ID"), gettext_noop("Worker instance type"),
    gettext_noop("Worker threads per core"), gettext_noop("Workspace alias"),
)
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
        return str(OVERRIDES[name])
    words = [ACRONYMS.get(w.lower(), w.lower()) for w in WORDS.findall(name)] or [name]
    first = words[0]
    words[0] = first if first.isupper() or first in ACRONYMS.values() else first.capitalize()
    label = " ".join(words)
    return gettext(label)  # translated when DERIVED lists it


def zone_choices(region: str = "") -> list:
    """Zones grouped by region, for a <select> with <optgroup>s: those of ``region`` alone once it is chosen
    (the launch form reloads them when the region changes), every region's before."""
    regions = [(code, label) for code, label in REGIONS if code == region] or list(REGIONS)
    return [("", gettext("Choose a zone"))] + [
        (label, [(f"{code}{z}", f"{code}{z}") for z in ZONES.get(code, ("a", "b", "c"))]) for code, label in regions
    ]
