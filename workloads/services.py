"""Quota change requests: submitted by a lead SA, decided by a program manager; the quota changes only on approval."""
from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from portal.core import access, locks, timeline
from portal.core.choices import TimelineKind
from portal.core.stored_text import message
from workloads import timeline_texts
from workloads.choices import RequestStatus
from workloads.models import InstanceQuota, QuotaChangeRequest


def describe_request(req: QuotaChangeRequest) -> str:
    """What the request asks, in English (``timeline_texts.describe`` is the same as a message)."""
    return timeline_texts.describe(req).english()


def after_submit(req: QuotaChangeRequest, user, created: bool) -> None:
    """Timeline entry for a new or edited request; call inside the saving transaction."""
    said = message(timeline_texts.REQUESTED if created else timeline_texts.EDITED, what=timeline_texts.describe(req))
    timeline.record(req.organization_id, TimelineKind.QUOTA, said,
                    source=req, body=req.justification, actor=user, tags=["quota-request"])


def stale_refusal(req: QuotaChangeRequest) -> str | None:
    """Why approving ``req`` would apply a change to a quota that moved since it was asked, or None.

    The request was made against ``current_count``; if the quota holds another figure now (another
    request was approved, or a program manager edited it), applying this one blindly would undo that.
    """
    if not req.quota_id:
        return None
    quota = InstanceQuota.objects.select_for_update().get(pk=req.quota_id)
    if quota.count != req.current_count:
        return (f"The quota is {quota.count} now, not the {req.current_count} this request was made against "
                f"({req.current_count} → {req.requested_count}); reject it and ask again from {quota.count}.")
    return None


def decide(req: QuotaChangeRequest, user, approve: bool, comment: str = "") -> QuotaChangeRequest:
    """Approve or reject a pending request. Approval applies the change to the quota, decided under the
    organization's quota lock (the one launches take), so the check that clusters still fit and the
    write happen together: two approvals at once cannot both pass on the same figures, and a request
    whose quota moved since it was asked is refused with the numbers. Raises PermissionDenied or
    ValidationError."""
    with transaction.atomic():
        req = QuotaChangeRequest.objects.select_for_update().get(pk=req.pk)
        if not access.can(user, access.APPROVE, req):
            raise PermissionDenied(gettext("Only program managers decide quota change requests."))
        if approve:
            locks.quota(req.organization_id)
        if req.status != RequestStatus.PENDING:
            raise ValidationError({"status": gettext("This request is already %(status)s.") % {"status": req.get_status_display().lower()}})
        if not approve and not comment.strip():
            raise ValidationError({"comment": gettext("Say why the request is rejected.")})
        if approve:
            stale = stale_refusal(req)
            if stale:
                raise ValidationError({"requested_count": stale})
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
            message(timeline_texts.DECIDED, status=req.status, what=timeline_texts.describe(req)),
            source=req, body=comment, actor=user, tags=["quota-request", req.status],
        )
    return req
