"""Transaction-scoped locks for invariants that span rows (a quota and the clusters that use it).

A check and the write that depends on it must run under one lock, or two requests can both pass the
check. On PostgreSQL this is ``pg_advisory_xact_lock``: held until the transaction ends, so the next
holder sees everything the previous one committed. SQLite allows one writer at a time anyway, so
there the lock is a no-op (the test suite runs on both).
"""
from __future__ import annotations

from django.db import connection


def hold(*parts: object) -> None:
    """Lock the name made of ``parts`` until the current transaction ends. Call inside ``atomic``."""
    if not connection.in_atomic_block:
        raise RuntimeError("portal.core.locks.hold() needs an open transaction")
    if connection.vendor != "postgresql":
        return
    name = ":".join(str(p) for p in parts)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [name])


def quota(organization_id: int) -> None:
    """The lock every decision about an organization's quotas or the clusters holding them takes."""
    hold("quota", organization_id)

