"""AWS prices the demo's Cost Explorer figures are built from: one table, with where each figure comes from and
when it was read, so a demo cost can be checked by hand against the capacity that produced it.

These are list prices as AWS published them, not what any account is billed (enterprise discounts, credits and
taxes are not here), and they change: the demo only needs them to be of the right size, so that a cluster's cost
follows its instances, its reservations and its storage.

Sources (Linux, USD), dated 2024-12:
- EC2 Capacity Blocks for ML pricing page (aws.amazon.com/ec2/capacityblocks/pricing/), rates in effect until
  2025-01-01: p5.48xlarge 39.33 USD an instance-hour in US East. Where the page lists no rate for a region, a
  block is priced as an On-Demand Capacity Reservation (the On-Demand rate), which is what AWS bills for one.
- EC2 On-Demand list prices of 2024 (aws.amazon.com/ec2/pricing/on-demand/) for p5.48xlarge (98.32 USD in the US
  regions, before AWS's cut of June 2025) and trn1.32xlarge (21.50 USD); the Tokyo figures are that page's 2024
  Tokyo rates as noted then, not read again for this table: check them there before quoting any.
- Amazon FSx for Lustre (Persistent-2, 125 MB/s/TiB) and Amazon S3 Standard per GB-month, 2024 list prices.
"""
from __future__ import annotations

from decimal import Decimal

READ_ON = "2024-12"

# On-Demand, USD per instance-hour, by (region, instance type).
ON_DEMAND = {
    ("us-east-1", "p5.48xlarge"): Decimal("98.32"),
    ("us-east-2", "p5.48xlarge"): Decimal("98.32"),
    ("us-west-2", "p5.48xlarge"): Decimal("98.32"),
    ("ap-northeast-1", "p5.48xlarge"): Decimal("119.11"),
    ("us-east-1", "trn1.32xlarge"): Decimal("21.50"),
    ("us-east-2", "trn1.32xlarge"): Decimal("21.50"),
    ("us-west-2", "trn1.32xlarge"): Decimal("21.50"),
    ("ap-northeast-1", "trn1.32xlarge"): Decimal("28.46"),
}

# Capacity Blocks for ML, effective USD per instance-hour, where AWS lists one for the region.
CAPACITY_BLOCK = {
    ("us-east-1", "p5.48xlarge"): Decimal("39.33"),
    ("us-east-2", "p5.48xlarge"): Decimal("39.33"),
}

# Storage, USD per GB-month (a month of 730 hours, as AWS bills storage by the hour).
FSX_LUSTRE_GB_MONTH = {"us-east-1": Decimal("0.145"), "us-east-2": Decimal("0.145"), "us-west-2": Decimal("0.145"),
                       "ap-northeast-1": Decimal("0.174")}
S3_STANDARD_GB_MONTH = {"us-east-1": Decimal("0.023"), "us-east-2": Decimal("0.023"), "us-west-2": Decimal("0.023"),
                        "ap-northeast-1": Decimal("0.025")}
HOURS_PER_MONTH = Decimal(730)


def base_type(instance_type: str) -> str:
    """SageMaker's ``ml.`` names bill as the EC2 type under them (for the demo's purpose)."""
    return instance_type.removeprefix("ml.")


def on_demand(region: str, instance_type: str) -> Decimal:
    """USD per instance-hour On-Demand; KeyError for a type or region the table does not list (the demo then
    bills nothing rather than a guess)."""
    return ON_DEMAND[(region, base_type(instance_type))]


def reserved(region: str, instance_type: str, kind: str) -> Decimal:
    """USD per instance-hour of a reservation, used or not: a Capacity Block's effective rate where AWS lists
    one, otherwise the On-Demand rate (an On-Demand Capacity Reservation, or a training plan, bills as that)."""
    if kind == "capacity_block" and (region, base_type(instance_type)) in CAPACITY_BLOCK:
        return CAPACITY_BLOCK[(region, base_type(instance_type))]
    return on_demand(region, instance_type)


def storage_day(gb: Decimal | int, per_gb_month: Decimal) -> Decimal:
    """One day of ``gb`` stored at ``per_gb_month``."""
    return Decimal(gb) * per_gb_month * 24 / HOURS_PER_MONTH
