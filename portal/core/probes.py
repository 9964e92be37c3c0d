"""What /healthz reports: the database, the broker and whether any worker answers."""
from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from portal.celery import app


def _database() -> tuple[bool, str]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return True, connection.vendor
    except Exception as exc:  # any driver error means "down", reported as such
        return False, str(exc)[:200]


def _broker() -> tuple[bool, str]:
    try:
        with app.connection_for_write() as conn:
            # One try, bounded by the broker's socket timeouts (portal/celery.py): a monitor gets its answer
            # within about a second when Redis is stopped or hung.
            conn.ensure_connection(max_retries=0, timeout=1)
            return True, conn.transport_cls if isinstance(conn.transport_cls, str) else conn.transport.driver_name
    except Exception as exc:  # the broker library raises many kinds
        return False, str(exc)[:200]


def _workers() -> tuple[bool, str]:
    try:
        replies = app.control.ping(timeout=1.0)
    except Exception as exc:
        return False, str(exc)[:200]
    return bool(replies), f"{len(replies)} worker(s) answered"


@require_safe
@never_cache
@login_not_required
def healthz(request):
    """200 while the database answers (the portal can serve). Anyone (a load balancer, a monitor) gets
    the status; which part is degraded, and the error text, only staff (error text names hosts,
    drivers and versions)."""
    db_ok, db_detail = _database()
    broker_ok, broker_detail = _broker()
    workers_ok, workers_detail = _workers() if broker_ok else (False, "broker unreachable")
    status = "ok" if db_ok and broker_ok and workers_ok else ("degraded" if db_ok else "down")
    body = {"status": status}
    if getattr(request.user, "is_authenticated", False) and request.user.is_staff:
        body.update(
            database={"ok": db_ok, "detail": db_detail},
            broker={"ok": broker_ok, "detail": broker_detail},
            workers={"ok": workers_ok, "detail": workers_detail},
        )
    return JsonResponse(body, status=200 if db_ok else 503)
