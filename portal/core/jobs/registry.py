"""The kinds of background job, and the one recovery over them.

Each app registers its kinds where their tasks are defined (``register(JobKindSpec(...))``): the model (a
``portal.core.jobs.models.Job``), the task that works a row, whether its messages carry the send number, after how long
without a heartbeat an open row's worker counts as dead, and what its recovery does besides (``extra``: time-outs,
proposals, leftovers). The recovery (``recover_all``), every minute, runs each kind's ``extra`` and then sends, per
kind, the rows the broker never took and the rows whose worker died, in a fixed number of queries however many rows
wait: the rows are picked and numbered under their locks in one transaction, sent after it commits, and a send the
broker refuses leaves its row (and the ones after it) for the next recovery. Its task keeps the published name
``portal.jobs.sweep`` (and its metric ``portal_jobs_sweep_last_success_timestamp_seconds``): names that alert
rules, dashboards and queued messages already use. In the code, a sweep is the pairwise NCCL run only.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.module_loading import autodiscover_modules

from portal.core.jobs.dispatch import send

logger = logging.getLogger(__name__)

KINDS: dict[str, JobKindSpec] = {}


@dataclass(frozen=True)
class JobKindSpec:
    """One kind of background job, as the registry knows it (apart from the ``*Kind`` choices of a row's field).

    ``task``: the Celery task that works a row, or a function of the row answering it (a launch job's task depends
    on what it does). ``numbered``: messages carry the send number (``attempts``) and each send counts one.
    ``stuck_setting``: the setting whose seconds without a heartbeat make an open, unleased row's worker dead
    (empty: only rows the broker never took are sent again). ``only``: narrows the rows the sweep sends, given the
    time. ``waiting``: replaces the standard choice of rows to send, given the time. ``extra``: what the sweep does
    for this kind besides, first (``extra_last``: after the sends); it answers a count. ``limit``: rows sent per
    sweep."""

    name: str
    model: Any
    task: Any
    numbered: bool = True
    stuck_setting: str = ""
    only: Callable[[datetime], Q] | None = None
    waiting: Callable[[datetime], Q] | None = None
    extra: Callable[[], int] | None = None
    extra_last: bool = False
    limit: int = 500

    def task_for(self, row):
        return self.task if hasattr(self.task, "apply_async") else self.task(row)

    def rows_to_send(self, now: datetime) -> Q:
        if self.waiting is not None:
            return self.waiting(now)
        model = self.model
        send_again = Q(dispatched_at__isnull=True)
        if self.stuck_setting:
            stale = now - timedelta(seconds=getattr(settings, self.stuck_setting))
            silent = Q(heartbeat__lt=stale) | Q(heartbeat__isnull=True, **{f"{model.CREATED_FIELD}__lt": stale})
            send_again |= silent & model.lease_free(now)
        rows = model.claimable() & send_again
        return rows & self.only(now) if self.only is not None else rows


@dataclass(frozen=True)
class Recovered:
    extra: int = 0
    sent: int = 0


def register(kind: JobKindSpec) -> JobKindSpec:
    """Add (or replace, on a re-import) a kind of job."""
    KINDS[kind.name] = kind
    return kind


def kinds() -> list[JobKindSpec]:
    """Every registered kind, once every app's tasks module (where kinds register) is imported."""
    autodiscover_modules("tasks")
    return list(KINDS.values())


def kind_of(name: str) -> JobKindSpec:
    if name not in KINDS:
        autodiscover_modules("tasks")
    return KINDS[name]


def dispatch(kind: JobKindSpec | str, row) -> bool:
    """Send one row's task now, numbered when the kind's messages carry the send number; record whether the broker
    took it (the sweep sends it again if not)."""
    kind = kind_of(kind) if isinstance(kind, str) else kind
    args = [row.pk]
    if kind.numbered:
        row.attempts = kind.model.number(row.pk)
        args.append(row.attempts)
    ok = send(kind.task_for(row), *args)
    kind.model.mark_dispatched(row.pk, ok)
    row.dispatched_at = timezone.now() if ok else None
    return ok


def recover_kind(kind: JobKindSpec | str, now: datetime | None = None, *, extra: bool = True, limit: int | None = None) -> Recovered:
    """One kind's share of the recovery: its ``extra``, then up to ``limit`` (the kind's) rows to send (see the
    module's docstring)."""
    kind = kind_of(kind) if isinstance(kind, str) else kind
    run_extra = extra and kind.extra is not None
    done = kind.extra() if run_extra and not kind.extra_last else 0
    sent = _send_waiting(kind, now or timezone.now(), limit or kind.limit)
    if run_extra and kind.extra_last:
        done = kind.extra()
    return Recovered(done, sent)


def _send_waiting(kind: JobKindSpec, now: datetime, limit: int) -> int:
    model = kind.model
    with transaction.atomic():
        rows = list(model._default_manager.select_for_update(skip_locked=True).filter(kind.rows_to_send(now))
                    .order_by(model.CREATED_FIELD, "pk")[:limit])
        if not rows:
            return 0
        taken = {"dispatched_at": now, "heartbeat": now}
        if kind.numbered:
            taken["attempts"] = F("attempts") + 1
        model._default_manager.filter(pk__in=[row.pk for row in rows]).update(**taken)
    sent = 0
    for index, row in enumerate(rows):
        args = (row.pk, row.attempts + 1) if kind.numbered else (row.pk,)
        if send(kind.task_for(row), *args):
            sent += 1
            continue
        # The broker is down: this row and the ones not tried wait for the next recovery.
        model._default_manager.filter(pk__in=[r.pk for r in rows[index:]]).update(dispatched_at=None)
        if kind.numbered and rows[index + 1:]:
            model._default_manager.filter(pk__in=[r.pk for r in rows[index + 1:]]).update(
                attempts=F("attempts") - 1)
        break
    if sent:
        logger.info("recovery sent %d %s jobs", sent, kind.name)
    return sent


def recover_all(now: datetime | None = None) -> dict[str, Recovered]:
    """The recovery of every registered kind (the minute's task, published as ``portal.jobs.sweep``); one kind's
    failure does not stop the others."""
    done = {}
    for kind in kinds():
        try:
            done[kind.name] = recover_kind(kind, now)
        except Exception:
            logger.exception("the recovery of %s jobs failed", kind.name)
    return done
