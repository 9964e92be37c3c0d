"""The idle and stall thresholds of each organization: its ``AccountingSettings`` row where its lead SAs set one,
the ``ACCOUNTING_*`` settings otherwise (10 % busy for 24 h; 15 minutes stalled)."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings

from clusters.accounting.models import AccountingSettings


@dataclass(frozen=True)
class Thresholds:
    idle_busy_share: Decimal  # 0..1
    idle_hours: int
    stall_minutes: int


def defaults() -> Thresholds:
    return Thresholds(Decimal(str(settings.ACCOUNTING_IDLE_BUSY_SHARE)), settings.ACCOUNTING_IDLE_HOURS,
                      settings.ACCOUNTING_STALL_MINUTES)


def of_row(row: AccountingSettings) -> Thresholds:
    return Thresholds(Decimal(row.idle_busy_percent) / 100, row.idle_hours, row.stall_minutes)


def for_organizations(organization_ids=None) -> dict[int, Thresholds]:
    """The organizations' own thresholds (one query); an organization absent from the answer uses
    :func:`defaults`. ``None``: every organization with a row."""
    rows = AccountingSettings.objects.all()
    if organization_ids is not None:
        rows = rows.filter(organization_id__in=list(organization_ids))
    return {row.organization_id: of_row(row) for row in rows}


def for_organization(organization_id: int) -> Thresholds:
    return for_organizations([organization_id]).get(organization_id) or defaults()


def stall_minutes(organization_id: int) -> int:
    """The organization's stall window in minutes (provided to health's stall check, ``stalls.STALL_MINUTES``)."""
    return for_organization(organization_id).stall_minutes
