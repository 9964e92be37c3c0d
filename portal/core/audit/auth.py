"""API token authentication that records a token's first use each day in the audit trail.

A process remembers (in the cache) that it recorded today's use, so a busy client costs one look-up per process and
day, not one per request; two processes may each record the first use once."""
from __future__ import annotations

from django.core.cache import cache
from django.utils import timezone
from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from knox.auth import TokenAuthentication

from portal.core.audit.models import AuditEvent, AuditKind
from portal.core.audit.recording import customer_organization_id, record


def token_label(token) -> str:
    return f"token {getattr(token, 'token_key', '')}"


class AuditedTokenAuthentication(TokenAuthentication):
    def authenticate(self, request):
        result = super().authenticate(request)
        if result is not None:
            note_use(request, *result)
        return result


class AuditedTokenScheme(KnoxTokenScheme):
    """The API schema describes the audited authentication exactly as knox's own (the same header and name)."""

    target_class = "portal.core.audit.auth.AuditedTokenAuthentication"


def note_use(request, user, token) -> None:
    today = timezone.localdate()
    key = f"audit:token-used:{getattr(token, 'digest', '')[:32]}:{today.isoformat()}"
    if cache.get(key):
        return
    label = token_label(token)
    start = timezone.make_aware(timezone.datetime.combine(today, timezone.datetime.min.time()))
    if not AuditEvent.objects.filter(kind=AuditKind.TOKEN_USED, actor=user, method=label,
                                     occurred_at__gte=start).exists():
        record(AuditKind.TOKEN_USED, request=request, user=user, organization_id=customer_organization_id(user),
               method=label, target=request.path[:500], outcome="ok")
    cache.set(key, 1, 24 * 3600)
