"""Quota change requests: submitted by a lead SA, decided by a program manager; the quota changes only on approval."""
from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from portal import access, timeline
from portal.choices import TimelineKind
from workloads.choices import RequestStatus
from workloads.models import QuotaChangeRequest


def describe_request(req: QuotaChangeRequest) -> str:
    what = f"{req.instance_type_name} in {req.region}"
    if req.quota_id:
        return f"{what}: {req.current_count} → {req.requested_count}"
    return f"new quota of {req.requested_count} × {what} ({req.start} → {req.end})"


def after_submit(req: QuotaChangeRequest, user, created: bool) -> None:
    """Timeline entry for a new or edited request; call inside the saving transaction."""
    verb = "requested" if created else "request edited"
    timeline.record(req.organization_id, TimelineKind.QUOTA, f"Quota change {verb}: {describe_request(req)}",
                    source=req, body=req.justification, actor=user, tags=["quota-request"])


def decide(req: QuotaChangeRequest, user, approve: bool, comment: str = "") -> QuotaChangeRequest:
    """Approve or reject a pending request. Approval applies the change to the quota (validated again:
    clusters may have grown since the request was made). Raises PermissionDenied or ValidationError."""
    with transaction.atomic():
        req = QuotaChangeRequest.objects.select_for_update().get(pk=req.pk)
        if not access.can(user, access.APPROVE, req):
            raise PermissionDenied("Only program managers decide quota change requests.")
        if req.status != RequestStatus.PENDING:
            raise ValidationError({"status": f"This request is already {req.get_status_display().lower()}."})
        if not approve and not comment.strip():
            raise ValidationError({"comment": "Say why the request is rejected."})
        if approve:
            quota = req.proposed_quota()
            quota.full_clean()
            quota.save()
            req.quota = quota
        req.status = RequestStatus.APPROVED if approve else RequestStatus.REJECTED
        req.decided_by = user
        req.decided_at = timezone.now()
        req.decision_comment = comment
        req._change_reason = f"{req.get_status_display()} by {user.display_name}"
        req.save()
        timeline.record(
            req.organization_id, TimelineKind.QUOTA,
            f"Quota change {req.get_status_display().lower()}: {describe_request(req)}",
            source=req, body=comment, actor=user, tags=["quota-request", req.status],
        )
    return req
