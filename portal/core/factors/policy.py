"""Which actions need a second factor, and how recent it must be: one table, read by the middleware.

``SESSION``: verified in this session within ``SECOND_FACTOR_SESSION_HOURS``. ``FRESH``: within
``SECOND_FACTOR_FRESH_MINUTES`` (the most destructive: deleting a cluster, approving a node action, widening
consent, rotating a cluster's ingestion token). Only the writes of a route are protected; reading it never is.
"""
from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

SESSION = "session"
FRESH = "fresh"
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SESSION_KEY = "second_factor_at"

# route name -> (level, the methods it protects)
PROTECTED: dict[str, tuple[str, frozenset[str]]] = {
    # Launching, retrying and deleting clusters (pages and API).
    "clusters:launch": (SESSION, WRITES),
    "clusters:cluster_retry": (SESSION, WRITES),
    "clusters:cluster_delete": (FRESH, WRITES),
    "clusters-api:cluster-list": (SESSION, frozenset({"POST"})),
    "clusters-api:cluster-retry": (SESSION, WRITES),
    "clusters-api:cluster-detail": (FRESH, frozenset({"DELETE"})),
    # Node remediation: proposing (which starts at once under lead_sa or automatic consent) and approving.
    "remediation:action_propose": (SESSION, WRITES),
    "remediation:action_approve": (FRESH, WRITES),
    "remediation-api:remediationaction-list": (SESSION, frozenset({"POST"})),
    "remediation-api:remediationaction-approve": (FRESH, WRITES),
    # Consent: what the portal may do to an organization's nodes.
    "remediation:policy_edit": (FRESH, WRITES),
    "remediation:policy_change_approve": (FRESH, WRITES),
    "remediation-api:remediationpolicychange-approve": (FRESH, WRITES),
    # A cluster's ingestion token.
    "health:rotate_token": (FRESH, WRITES),
    "health-api:rotate-token": (FRESH, WRITES),
    # Who signs an organization's people in: its identity provider, and who may register it.
    "sso:provider_add": (FRESH, WRITES),
    "sso:provider_edit": (FRESH, WRITES),
    "sso:administrator_list": (FRESH, WRITES),
    "sso:administrator_remove": (FRESH, WRITES),
}
# Creating an API token is protected in its own view (it authenticates by password, not by session or token).
TOKEN_ROUTE = "api-token"


def requirement(view_name: str, method: str) -> str | None:
    entry = PROTECTED.get(view_name)
    if entry is None or method not in entry[1]:
        return None
    return entry[0]


def max_age(level: str) -> timedelta:
    if level == FRESH:
        return timedelta(minutes=settings.SECOND_FACTOR_FRESH_MINUTES)
    return timedelta(hours=settings.SECOND_FACTOR_SESSION_HOURS)


def verified_at(session) -> datetime | None:
    raw = session.get(SESSION_KEY) if session is not None else None
    if not raw:
        return None
    try:
        return datetime.fromisoformat(raw)
    except (TypeError, ValueError):
        return None


def session_satisfies(session, level: str) -> bool:
    at = verified_at(session)
    return at is not None and timezone.now() - at <= max_age(level)


def mark_verified(session) -> None:
    session[SESSION_KEY] = timezone.now().isoformat()
