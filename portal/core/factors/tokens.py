"""API tokens made and confirmed in the browser, for people whose second factor an API client cannot present.

A passkey answers only to the browser that asks for it, so an API client of a person whose only factor is a
passkey could give no ``otp`` and no ``X-Second-Factor`` but a recovery code. Instead the person confirms their
passkey (or any factor) in the browser and then, on the API tokens page, creates a token or confirms one they
have: a confirmed token counts as a recent second factor for protected API requests for as long as a confirmed
session would (``policy.max_age``: hours for most actions, minutes for the most destructive). Each creation,
confirmation and revocation is recorded in the audit trail. Every query is of the signed-in person's own tokens.
"""
from __future__ import annotations

from django.db.models import Q
from django.utils import timezone
from knox.models import get_token_model
from knox.settings import knox_settings

from portal.core.audit.auth import token_label
from portal.core.audit.models import AuditKind
from portal.core.audit.recording import customer_organization_id, record
from portal.core.factors import policy
from portal.core.factors.models import TokenConfirmation


def issue(user, request, *, method: str = "password"):
    """A new API token for ``user`` (its oldest give way past the limit), recorded; returns (row, token text)."""
    limit = knox_settings.TOKEN_LIMIT_PER_USER
    model = get_token_model()
    if limit is not None:
        # The oldest tokens give way, so a client that signs in often never locks itself out.
        keep = model.objects.filter(user=user).order_by("-created").values_list("pk", flat=True)[: limit - 1]
        model.objects.filter(user=user).exclude(pk__in=list(keep)).delete()
    instance, token = model.objects.create(user=user, expiry=knox_settings.TOKEN_TTL)
    record(AuditKind.TOKEN_CREATED, request=request, user=user, organization_id=customer_organization_id(user),
           method=token_label(instance), target=method, outcome="ok")
    return instance, token


def own_tokens(user):
    live = Q(expiry__isnull=True) | Q(expiry__gt=timezone.now())
    return (get_token_model().objects.filter(live, user=user)
            .select_related("confirmation").order_by("-created"))


def own_token(user, token_key: str):
    return own_tokens(user).filter(token_key=token_key).first()


def confirm(token, request) -> TokenConfirmation:
    """The person confirmed a second factor in this session: ``token`` counts as confirmed from now."""
    row, _created = TokenConfirmation.objects.update_or_create(
        token=token, defaults={"confirmed_at": timezone.now(), "method": "browser session"})
    record(AuditKind.SECOND_FACTOR, request=request, organization_id=customer_organization_id(request.user),
           method="token confirmation", target=token_label(token), outcome="verified")
    return row


def satisfies(token, level: str) -> bool:
    """Whether ``token`` was confirmed in the browser recently enough for an action of ``level``."""
    if token is None or not getattr(token, "pk", None):
        return False
    since = timezone.now() - policy.max_age(level)
    return TokenConfirmation.objects.filter(token_id=token.pk, confirmed_at__gte=since).exists()


def revoke(token, request) -> None:
    record(AuditKind.TOKEN_REVOKED, request=request, organization_id=customer_organization_id(request.user),
           method=token_label(token), target="api tokens page", outcome="ok")
    token.delete()
