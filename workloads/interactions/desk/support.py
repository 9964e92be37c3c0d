"""Keeping an interaction in step with its AWS Support case, and opening one (``CreateCase``) with its evidence.

AWS Support's API lives in us-east-1 and needs a Business or Enterprise support plan; the embedded
endpoint implements CreateCase, DescribeCases (with communications) and ResolveCase, not
DescribeCommunications, so communications come from ``DescribeCases(includeCommunications=True)``
(its ``recentCommunications``). Every failure is stored on the interaction and shown on its page.

Opening a case (``open_case``, run by the task ``services.request_support_case`` sends) happens once per
interaction: the interaction's row is locked around ``CreateCase`` and a case id already there is kept. Throttling
is retried by the task (``tasks.open_case_task``) with a doubling countdown; any other refusal (an account without
a Business or Enterprise support plan answers ``SubscriptionRequiredException``) is stored on the interaction as a
sync failure, in the portal's words.
"""
from __future__ import annotations

import hashlib
import logging
from datetime import UTC

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import strip_tags

from portal.core import aws
from portal.core.stored_text import message
from workloads.interactions import services
from workloads.interactions import timeline_texts as texts
from workloads.interactions.choices import AWS_CASE_STATUS, HistoryKind, SyncStatus
from workloads.interactions.models import Interaction, InteractionComment

logger = logging.getLogger(__name__)
SUPPORT_REGION = "us-east-1"
# Interaction severity → AWS Support severity code (an urgent case needs a Business plan, critical Enterprise).
CASE_SEVERITY = {"low": "low", "normal": "normal", "high": "high", "critical": "urgent"}


def _communication_id(case_id: str, item: dict) -> str:
    digest = hashlib.sha256(f"{item.get('timeCreated')}|{item.get('submittedBy')}|{item.get('body')}".encode())
    return f"{case_id}:{digest.hexdigest()[:24]}"


def sync_interaction(interaction_id: int) -> str:
    """Fetch the case, store its status and new communications; record failures. Returns the outcome."""
    interaction = Interaction.objects.select_related("organization").get(pk=interaction_id)
    if not interaction.support_case_id:
        return "no case"
    try:
        client = aws.client("support", organization=interaction.organization, region=SUPPORT_REGION)
        response = client.describe_cases(
            caseIdList=[interaction.support_case_id], includeResolvedCases=True, includeCommunications=True
        )
        cases = response.get("cases", [])
        if not cases:
            raise aws.AwsError(f"AWS Support has no case {interaction.support_case_id} in this account.",
                               code="CaseIdNotFound")
    except Exception as exc:  # noqa: BLE001 - every failure is recorded and shown, never dropped
        error = aws.translate(exc) if not isinstance(exc, aws.AwsError) else exc
        # An endpoint may answer an error page: keep its words, not its markup.
        message = " ".join(strip_tags(str(error)).split())[:2000]
        Interaction.objects.filter(pk=interaction.pk).update(
            sync_status=SyncStatus.FAILED, sync_error=message, synced_at=timezone.now()
        )
        logger.warning("support sync of interaction %s failed: %s", interaction.pk, error)
        return "failed"
    case = cases[0]
    with transaction.atomic():
        interaction = Interaction.objects.select_for_update().select_related("organization").get(pk=interaction_id)
        before = services.snapshot(interaction)
        aws_status = case.get("status", "")
        new = 0
        communications = (case.get("recentCommunications") or {}).get("communications") or []
        for item in communications:
            external_id = _communication_id(interaction.support_case_id, item)
            created_at = parse_datetime(item.get("timeCreated") or "") or timezone.now()
            if timezone.is_naive(created_at):
                created_at = timezone.make_aware(created_at, UTC)
            _, was_created = InteractionComment.objects.get_or_create(
                interaction=interaction, external_id=external_id,
                defaults={
                    "kind": HistoryKind.AWS, "body": item.get("body") or "",
                    "old_value": (item.get("submittedBy") or "")[:200], "created": created_at,
                    "internal": interaction.visibility != "shared",
                },
            )
            new += was_created
        portal_status = AWS_CASE_STATUS.get(aws_status)
        interaction.support_status = aws_status
        interaction.sync_status = SyncStatus.OK
        interaction.sync_error = ""
        interaction.synced_at = timezone.now()
        if portal_status and portal_status != interaction.status:
            interaction.status = portal_status
        interaction.save(update_fields=["support_status", "sync_status", "sync_error", "synced_at", "status", "updated"])
        if new or services.snapshot(interaction) != before:
            services.changed(interaction, before, actor=None)
    return f"ok, {new} new communication(s)"


def record_failure(interaction_id: int, error: aws.AwsError) -> None:
    words = ("AWS Support needs a Business or Enterprise support plan in this account to open a case."
             if "SubscriptionRequired" in (error.code or "") else
             "AWS Support slowed down the portal's requests; the case was not opened." if error.retryable else
             "AWS Support refused to open the case.")
    detail = " ".join(strip_tags(str(error)).split())[:1500]
    Interaction.objects.filter(pk=interaction_id).update(sync_status=SyncStatus.FAILED, synced_at=timezone.now(),
                                                         sync_error=f"{words} ({detail})")


def open_case(interaction_id: int, *, subject: str, body: str, service_code: str, category_code: str) -> str:
    """Open the interaction's AWS Support case with ``body`` as its first communication; ``AwsError`` leaves for
    the task to retry or record. Returns the case id (the one already there, if any)."""
    with transaction.atomic():
        interaction = Interaction.objects.select_for_update().select_related("organization").get(pk=interaction_id)
        if interaction.support_case_id:
            return interaction.support_case_id
        client = aws.client("support", organization=interaction.organization, region=SUPPORT_REGION)
        try:
            answer = client.create_case(subject=subject[:250], communicationBody=body[:8000],
                                        serviceCode=service_code, categoryCode=category_code, language="en",
                                        severityCode=CASE_SEVERITY.get(interaction.severity, "normal"),
                                        issueType="technical")
        except aws.AWS_EXCEPTIONS as exc:
            raise aws.translate(exc) from exc
        interaction.support_case_id, interaction.sync_status, interaction.sync_error = answer["caseId"], "", ""
        interaction.save(update_fields=["support_case_id", "sync_status", "sync_error", "updated"])
        said = message(texts.CASE_OPENED, case=answer["caseId"], subject=subject[:200])
        InteractionComment.objects.create(interaction=interaction, kind=HistoryKind.COMMENT, internal=True,
                                          body=said.english(), body_code=said.code, params=said.params)
    sync_interaction(interaction_id)
    return interaction.support_case_id
