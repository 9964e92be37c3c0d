"""The abstract model every background job's row extends, with the one claim, finish, fail and release.

A job's row is written first and its task sent after commit (``portal.core.jobs.dispatch``). ``dispatched_at`` says
when the broker took the message (empty while it could not: the sweep sends it); ``attempts`` numbers the sends
where the kind's messages carry that number, so a message from before the latest send claims nothing and an older
chain of polls ends; ``lease_until`` keeps two deliveries from working on one row at once and ``heartbeat`` says
when a worker last touched it, so the sweep finds rows whose worker died. Each kind keeps its own status field
(its own choices; ``STATUS_FIELD`` names it where a kind calls it ``state``) and its own created and finished
timestamps (``CREATED_FIELD``, ``FINISHED_FIELD``). A kind with a lifecycle declares its legal moves
(``TRANSITIONS``, ``portal.core.jobs.states``) and moves with ``move``. Every transition here is one conditional UPDATE.
"""
from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from portal.core.jobs.states import Lifecycle


class Job(Lifecycle, models.Model):
    """A row of background work: dispatch time, send number, lease, heartbeat and error."""

    dispatched_at = models.DateTimeField(null=True, blank=True,
                                         help_text=_("When the broker took the task; empty until it did."))
    attempts = models.PositiveIntegerField(default=0)
    lease_until = models.DateTimeField(null=True, blank=True)
    heartbeat = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    STATUS_FIELD = "status"
    CREATED_FIELD = "created"
    FINISHED_FIELD = "finished_at"
    # The statuses a worker may claim the row in; empty: any row not finished yet.
    CLAIMABLE: tuple[str, ...] = ()
    # The statuses a finish or a fail may move a row from; empty: the claimable ones.
    OPEN: tuple[str, ...] = ()
    # The setting holding the lease's seconds.
    LEASE_SETTING = ""

    class Meta:
        abstract = True

    @property
    def dispatched(self) -> bool:
        """Whether the broker took the row's latest send."""
        return self.dispatched_at is not None

    @classmethod
    def claimable(cls) -> Q:
        if cls.CLAIMABLE:
            return Q(**{f"{cls.STATUS_FIELD}__in": cls.CLAIMABLE})
        return Q(**{f"{cls.FINISHED_FIELD}__isnull": True})

    @classmethod
    def open(cls) -> Q:
        return Q(**{f"{cls.STATUS_FIELD}__in": cls.OPEN}) if cls.OPEN else cls.claimable()

    @classmethod
    def lease_free(cls, now) -> Q:
        return Q(lease_until__isnull=True) | Q(lease_until__lt=now)

    @classmethod
    def lease_seconds(cls) -> int:
        return getattr(settings, cls.LEASE_SETTING)

    @classmethod
    def claim(cls, pk: int, attempt: int | None = None, *, seconds: int | None = None, **fields) -> bool:
        """Take the row's lease (one conditional UPDATE): claimable, no lease held, and, when ``attempt`` (the send
        number the message carries) is given, no later send made. ``fields`` are written with the lease."""
        now = timezone.now()
        rows = cls._default_manager.filter(cls.claimable() & cls.lease_free(now), pk=pk)
        if attempt is not None:
            rows = rows.filter(attempts__lte=attempt)
        lease = now + timedelta(seconds=cls.lease_seconds() if seconds is None else seconds)
        return bool(rows.update(lease_until=lease, heartbeat=now, **fields))

    @classmethod
    def finish(cls, pk: int, status: str, *, allowed=None, **fields) -> bool:
        """Move the row to the final ``status`` (compare-and-set from ``allowed``, by default the open statuses),
        stamp its finish and drop its lease; False when it had left those statuses already."""
        now = timezone.now()
        where = Q(**{f"{cls.STATUS_FIELD}__in": tuple(allowed)}) if allowed is not None else cls.open()
        fields.setdefault(cls.FINISHED_FIELD, now)
        return bool(cls._default_manager.filter(where, pk=pk).update(
            **{cls.STATUS_FIELD: status}, lease_until=None, heartbeat=now, **fields))

    @classmethod
    def fail(cls, pk: int, error: str, *, status: str = "failed", allowed=None, **fields) -> bool:
        """Finish the row as failed with ``error`` (compare-and-set, as :meth:`finish`)."""
        return cls.finish(pk, status, allowed=allowed, error=error, **fields)

    @classmethod
    def release(cls, pk: int, *, if_open: bool = False, **fields) -> bool:
        """Drop the row's lease and beat, writing ``fields`` with it; with ``if_open``, ``fields`` only while it is
        still open (a step never writes over a verdict reached while it ran: then only the lease goes, and the
        answer is False)."""
        rows = cls._default_manager.filter(pk=pk)
        if not if_open:
            return bool(rows.update(lease_until=None, heartbeat=timezone.now(), **fields))
        if rows.filter(cls.open()).update(lease_until=None, heartbeat=timezone.now(), **fields):
            return True
        rows.update(lease_until=None)
        return False

    @classmethod
    def number(cls, pk: int) -> int:
        """Count one more send of the row and answer its number (under the row's lock)."""
        with transaction.atomic():
            attempt = cls._default_manager.select_for_update().values_list("attempts", flat=True).get(pk=pk) + 1
            cls._default_manager.filter(pk=pk).update(attempts=attempt)
        return attempt

    @classmethod
    def mark_dispatched(cls, pk: int, ok: bool, **where) -> None:
        """Record whether the broker took the row's send (``where`` narrows the rows, e.g. still pending)."""
        cls._default_manager.filter(pk=pk, **where).update(dispatched_at=timezone.now() if ok else None)
