"""Sign-in, sign-out and lockout signals into the audit trail."""
from __future__ import annotations

from axes.signals import user_locked_out
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.dispatch import receiver

from portal.core.audit.models import AuditKind
from portal.core.audit.recording import customer_organization_id, record


def _method(user) -> str:
    if getattr(user, "sso_method", ""):
        return user.sso_method
    backend = getattr(user, "backend", "") or ""
    return "password" if backend.endswith(("Backend",)) else backend


@receiver(user_logged_in, dispatch_uid="audit_sign_in")
def signed_in(sender, request, user, **kwargs):
    record(AuditKind.SIGN_IN, request=request, user=user, organization_id=customer_organization_id(user),
           method=_method(user), outcome="ok")


@receiver(user_logged_out, dispatch_uid="audit_sign_out")
def signed_out(sender, request, user, **kwargs):
    if user is not None:
        record(AuditKind.SIGN_OUT, request=request, user=user, organization_id=customer_organization_id(user))


@receiver(user_login_failed, dispatch_uid="audit_sign_in_failed")
def sign_in_failed(sender, credentials, request=None, **kwargs):
    # Only the name that was tried, never the password (Django already masks it in ``credentials``).
    name = str((credentials or {}).get("username", ""))
    turned_off = getattr(request, "password_refused_by", None)  # portal.core.sso.backends.REFUSED_BY
    record(AuditKind.SIGN_IN_FAILED, request=request, actor_name=name, method="password",
           outcome="passwords turned off" if turned_off is not None else "refused",
           organization_id=turned_off.organization_id if turned_off is not None else None)


@receiver(user_locked_out, dispatch_uid="audit_locked_out")
def locked_out(sender, request, username, ip_address, **kwargs):
    record(AuditKind.LOCKED_OUT, request=request, actor_name=str(username or ""), method="password",
           outcome="locked")
