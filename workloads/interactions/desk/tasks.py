"""Celery tasks of interactions: syncing AWS Support cases (one, or every open one on beat) and opening a case.

Until interactions had their own app label these tasks were named ``workloads.support.*``. Those names stay
registered beside the new ones for one release, so a message queued before an upgrade, or a beat row written
before it, still runs.
"""
from __future__ import annotations

import logging

from celery import shared_task

from portal.core import aws, jobs
from portal.core.jobs import registry
from workloads.interactions import services
from workloads.interactions.desk.support import open_case, record_failure, sync_interaction
from workloads.interactions.models import Interaction, SupportCaseRequest

logger = logging.getLogger(__name__)
OPEN_CASE_RETRIES = 5


@shared_task(name="interactions.support.sync_case", acks_late=True)
def sync_case(interaction_id: int) -> str:
    return sync_interaction(interaction_id)


@shared_task(name="interactions.support.sync_open_cases")
def sync_open_cases() -> int:
    """Sync every open interaction that has a support case (run periodically by beat)."""
    ids = list(Interaction.objects.open().exclude(support_case_id="").values_list("pk", flat=True))
    for pk in ids:
        jobs.send(sync_case, pk)
    return len(ids)


def _open_case(task, interaction_id: int, subject: str, body: str, service_code: str, category_code: str) -> str:
    try:
        return open_case(interaction_id, subject=subject, body=body, service_code=service_code,
                         category_code=category_code)
    except aws.AwsError as exc:
        if exc.retryable and task.request.retries < OPEN_CASE_RETRIES:
            raise task.retry(countdown=min(5 * 2 ** task.request.retries, 300)) from exc
        record_failure(interaction_id, exc)
        logger.warning("support case for interaction %s not opened: %s", interaction_id, exc)
        return "failed"


@shared_task(bind=True, name=services.OPEN_REQUESTED_CASE_TASK, acks_late=True, max_retries=OPEN_CASE_RETRIES)
def open_requested_case(self, request_id: int) -> str:
    """Open the case a ``SupportCaseRequest`` asks for; its row records the outcome (the sweep sends it again
    while it is pending and the broker never took it)."""
    row = SupportCaseRequest.objects.filter(pk=request_id, status=SupportCaseRequest.PENDING).first()
    if row is None:
        return "skipped"
    SupportCaseRequest.objects.filter(pk=row.pk).update(attempts=row.attempts + 1)
    outcome = _open_case(self, row.interaction_id, row.subject, row.body, row.service_code, row.category_code)
    if outcome == "failed":
        error = Interaction.objects.filter(pk=row.interaction_id).values_list("sync_error", flat=True).first()
        SupportCaseRequest.fail(row.pk, error or "AWS Support did not open the case.")
    else:
        SupportCaseRequest.finish(row.pk, SupportCaseRequest.DONE)
    return outcome


KIND = registry.register(registry.JobKindSpec(name="support case", model=SupportCaseRequest, task=open_requested_case,
                                       numbered=False))


@shared_task(bind=True, name=services.OPEN_CASE_TASK, acks_late=True, max_retries=OPEN_CASE_RETRIES)
def open_case_task(self, interaction_id: int, subject: str, body: str, service_code: str, category_code: str) -> str:
    return _open_case(self, interaction_id, subject, body, service_code, category_code)


# The names these tasks had under the workloads app label, kept as aliases for one release.


@shared_task(name="workloads.support.sync_case", acks_late=True)
def legacy_sync_case(interaction_id: int) -> str:
    return sync_case(interaction_id)


@shared_task(name="workloads.support.sync_open_cases")
def legacy_sync_open_cases() -> int:
    return sync_open_cases()


@shared_task(bind=True, name="workloads.support.open_case", acks_late=True, max_retries=OPEN_CASE_RETRIES)
def legacy_open_case_task(self, interaction_id: int, subject: str, body: str, service_code: str,
                          category_code: str) -> str:
    return _open_case(self, interaction_id, subject, body, service_code, category_code)
