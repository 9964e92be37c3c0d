"""Recording audit events: one writer, :func:`record`, and the request it happens in.

The middleware keeps the current request in a context variable so that code with no request at hand (a botocore
hook, a signal) still records who and from where. Exports are recorded here by construction: every download the
portal serves is an attachment, so any response with ``Content-Disposition: attachment`` is an export.
"""
from __future__ import annotations

import contextvars
import logging

from django.db import DatabaseError
from django.utils import timezone

from portal.core import access
from portal.core.audit.models import AuditEvent, AuditKind

logger = logging.getLogger(__name__)
_request: contextvars.ContextVar = contextvars.ContextVar("audit_request", default=None)

# AWS operations that only read: not recorded as actions in a customer's account.
READ_PREFIXES = ("Describe", "List", "Get", "Search", "Head", "Validate", "Check", "Lookup", "Estimate", "Preview",
                 "Batch" + "Get", "Select", "Query", "Scan", "AssumeRole")
WORKER = "portal worker"


def client_address(request) -> str | None:
    address = (request.META.get("REMOTE_ADDR") or "").strip()
    return address or None


def customer_organization_id(user) -> int | None:
    """The organization a customer belongs to, when exactly one: their sign-ins and exports are that
    organization's to read. AWS staff (lead SAs, program managers, specialists) belong to the program."""
    if not getattr(user, "is_authenticated", False):
        return None
    roles = access.roles_of(user)
    customers = roles.get(access.CUSTOMER, frozenset())
    if len(customers) == 1 and not roles.get(access.LEAD_SA):
        return next(iter(customers))
    return None


def record(kind: str, *, request=None, user=None, organization_id: int | None = None, actor_name: str = "",
           method: str = "", target: str = "", outcome: str = "") -> AuditEvent | None:
    """Append one event. A failure to record is logged, never raised: an audit write must not undo the action
    it describes (the action has happened)."""
    request = request if request is not None else _request.get()
    if user is None and request is not None:
        user = getattr(request, "user", None)
    if user is not None and not getattr(user, "is_authenticated", False):
        user = None
    event = AuditEvent(
        occurred_at=timezone.now(), kind=kind, actor=user,
        actor_name=(actor_name or (user.get_username() if user is not None else ""))[:150],
        organization_id=organization_id, method=method[:120], target=target[:500], outcome=outcome[:120],
    )
    if request is not None:
        event.ip_address = client_address(request)
        event.user_agent = (request.META.get("HTTP_USER_AGENT") or "")[:300]
    try:
        event.save()
    except DatabaseError:
        logger.exception("could not record the audit event %s", kind)
        return None
    return event


class AuditMiddleware:
    """Keeps the request for :func:`record` and records every export (an attachment served to a person)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = _request.set(request)
        try:
            response = self.get_response(request)
        finally:
            _request.reset(token)
        disposition = response.get("Content-Disposition", "") if hasattr(response, "get") else ""
        user = getattr(request, "user", None)
        if (response.status_code == 200 and disposition.lower().startswith("attachment")
                and getattr(user, "is_authenticated", False)):
            filename = disposition.partition("filename=")[2].strip('"')
            record(AuditKind.EXPORT, request=request, organization_id=customer_organization_id(user),
                   method=filename, target=request.get_full_path(), outcome="ok")
        return response


def is_action(operation: str) -> bool:
    return not operation.startswith(READ_PREFIXES)


def aws_call_recorder(organization_id: int, service: str):
    """A botocore ``after-call`` handler recording each action (not a read) made in an organization's account."""

    def after_call(http_response=None, parsed=None, model=None, **kwargs):
        operation = getattr(model, "name", "")
        if not operation or not is_action(operation):
            return
        status = getattr(http_response, "status_code", 0) or 0
        error = (parsed or {}).get("Error", {}) if isinstance(parsed, dict) else {}
        outcome = "ok" if status < 300 else (error.get("Code") or f"HTTP {status}")
        request = _request.get()
        record(AuditKind.AWS_ACTION, request=request, organization_id=organization_id,
               actor_name="" if request is not None else WORKER, method=f"{service}:{operation}",
               target=_target(kwargs.get("context") or {}, parsed), outcome=outcome)

    return after_call


def _target(context: dict, parsed) -> str:
    """What was acted on, when the answer names it (a stack, an instance, a command): the first id found."""
    if not isinstance(parsed, dict):
        return ""
    for key in ("StackId", "ClusterArn", "CommandId", "CaseId", "InstanceId", "NodeId"):
        value = parsed.get(key) or (parsed.get("Command") or {}).get(key)
        if isinstance(value, str):
            return value
    return ""
