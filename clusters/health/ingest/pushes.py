"""Health pushes as jobs: the request stores the body and answers 202, the health worker parses it.

A 2,000-node scrape is ~190 MB of text and a minute of parsing: no web worker can hold that, and
one cluster token must not be able to occupy the site. So the push endpoint only authenticates,
checks the size while it streams the body to its storage (``bodies``: a local directory or the
portal's S3 bucket; gzip-compressed, refusing an oversize body as soon as it passes the cap, compressed
or not), records a ``HealthPush`` row and sends ``process_push`` on commit. The worker reads the body
as a stream, in blocks, through the streaming reader (``reader.read``: never the whole text in memory)
and ingests the result.

A push is the "push" kind of ``portal.core.jobs`` (registered in ``clusters.health.tasks``): the row is committed
first, a down broker leaves it pending and the sweep sends it later; a claim is the jobs' compare-and-set with a
lease, so a second delivery of the same push does nothing and a killed worker's push is taken again once its
lease runs out.

Scope: ``full`` says the push is the whole cluster; otherwise it covers the nodes it contains.
``nodes`` names the nodes a push is for (declared); a newer push supersedes a queued older one of the
same cluster when it covers it (a full push covers everything, a declared list covers the same or
fewer declared nodes). Pushes that declare nothing are never superseded except by a full one, since
nobody can tell which nodes they carry before parsing them.
"""
from __future__ import annotations

import gzip
import logging
import resource
import zlib
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from clusters.health import current
from clusters.health.choices import Source
from clusters.health.ingest import bodies
from clusters.health.ingest import service as services
from clusters.health.models import HealthPush, PushStatus
from clusters.health.readers.exposition import parse_stream
from clusters.health.readers.prometheus import ParseError
from portal.core import jobs
from portal.core.jobs import registry
from portal.core.metrics import instruments
from portal.core.signals import Hook

logger = logging.getLogger(__name__)

# The pushes' kind of portal.core.jobs, with the task that processes one: the tasks module, which imports this one,
# registers it and the health app's ready() provides it here.
KIND = Hook("health: the pushes' kind of portal.core.jobs", provider="health")

CHUNK = 1 << 20
MAX_CLAIMS = 3
MAX_DECLARED_NODES = 5000


class StorageWait(Exception):
    """The push's body could not be read for a storage outage; the push is pending again and is read after
    ``countdown`` seconds (the task retries; the sweep sends it should that retry be lost)."""

    def __init__(self, countdown: int):
        super().__init__(f"read again in {countdown} s")
        self.countdown = countdown


def parse_scope(scope: str | None, nodes: str | None) -> tuple[str, list[str]]:
    """The declared scope (``full`` or ``nodes``) and node list; ``ValueError`` for nonsense."""
    scope = (scope or current.NODES).strip().lower()
    if scope not in current.SCOPES:
        raise ValueError(f"scope must be one of {', '.join(current.SCOPES)}, not {scope[:40]!r}")
    declared = sorted({n.strip() for n in (nodes or "").split(",") if n.strip()})
    if len(declared) > MAX_DECLARED_NODES or any(len(n) > 255 for n in declared):
        raise ValueError(f"at most {MAX_DECLARED_NODES} declared nodes of up to 255 characters")
    return scope, declared


def store_body(stream, max_bytes: int, gzipped: bool) -> tuple[str, int, int]:
    """Stream a request body to the push storage as gzip; answer (body name, compressed bytes, text bytes). The
    other reader of a body, ``services.read_body``, keeps it in memory (a validation output); both refuse the same
    way: ``services.TooLarge`` past ``max_bytes`` of text.

    A gzip body is written as it comes and inflated alongside only to count (and refuse a bomb the
    moment it passes ``max_bytes``); a plain body is compressed on the way (level 1: fast, ~5x)."""
    out = bodies.new_writer()
    total = 0
    try:
        if gzipped:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            while chunk := (stream.read(CHUNK) if stream is not None else b""):
                out.write(chunk)
                data = chunk
                while data:
                    try:
                        total += len(inflater.decompress(data, CHUNK))
                    except zlib.error as exc:
                        raise ParseError(f"the body is not valid gzip: {exc}") from None
                    if total > max_bytes:
                        raise services.TooLarge(f"the decompressed body is over {max_bytes:,} bytes")
                    data = inflater.unconsumed_tail
            if not inflater.eof:
                raise ParseError("the gzip stream is truncated" if total else "the body is empty")
        else:
            with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=1) as packed:
                while chunk := (stream.read(CHUNK) if stream is not None else b""):
                    total += len(chunk)
                    if total > max_bytes:
                        raise services.TooLarge(f"the body is over {max_bytes:,} bytes")
                    packed.write(chunk)
        if not total:
            raise ParseError("the body is empty")
        compressed = out.tell()
        name = out.close()
    except BaseException:
        out.abort()
        raise
    return name, compressed, total


def receive(cluster, stream, *, max_bytes: int, gzipped: bool, scope: str = current.NODES,
            declared: list[str] | None = None) -> HealthPush:
    """Store a pushed body and queue it for the health worker (sent once the row is committed)."""
    name, compressed, text_bytes = store_body(stream, max_bytes, gzipped)
    try:
        with transaction.atomic():
            push = HealthPush.objects.create(
                cluster=cluster, body=name, compressed_bytes=compressed, text_bytes=text_bytes, scope=scope,
                declared_nodes=declared or [], dispatched_at=timezone.now())
            superseded = supersede(push)
            transaction.on_commit(lambda: _delete_bodies(superseded))
            send_on_commit(push)
    except BaseException:
        bodies.delete(name)
        raise
    instruments.count_push_received(cluster.pk)
    return push


def send_on_commit(push: HealthPush) -> None:
    """Send the push's task once the row is committed; a broker that cannot take it leaves it for the sweep."""
    def left_for_sweep() -> None:
        HealthPush.mark_dispatched(push.pk, False, status=PushStatus.PENDING)

    jobs.send_on_commit(KIND.get().task, push.pk, on_failure=left_for_sweep)


def _covers(newer: HealthPush, older: HealthPush) -> bool:
    if newer.scope == current.FULL:
        return True
    return bool(newer.declared_nodes) and bool(older.declared_nodes) and older.scope != current.FULL and (
        set(older.declared_nodes) <= set(newer.declared_nodes))


def supersede(push: HealthPush) -> list[str]:
    """Mark the queued pushes of the cluster that ``push`` covers as superseded; answer their body paths.
    The status change is a compare-and-set, so a push the worker already took is left to finish."""
    if push.scope != current.FULL and not push.declared_nodes:
        return []
    queued = (HealthPush.objects.filter(cluster_id=push.cluster_id, status=PushStatus.PENDING,
                                        received_at__lte=push.received_at).exclude(pk=push.pk)
              .only("pk", "scope", "declared_nodes", "body"))
    covered = [older for older in queued if _covers(push, older)]
    if not covered:
        return []
    ids = [older.pk for older in covered]
    HealthPush.objects.filter(pk__in=ids, status=PushStatus.PENDING).update(
        status=PushStatus.SUPERSEDED, superseded_by=push, finished_at=timezone.now(),
        error=f"superseded by push {push.pk} before it was processed")
    return list(HealthPush.objects.filter(pk__in=ids, status=PushStatus.SUPERSEDED).values_list("body", flat=True))


def _delete_bodies(names) -> None:
    """Delete finished pushes' bodies; a body the storage could not delete stays named for the sweep."""
    deleted = [name for name in names if name and bodies.delete(name)]
    if deleted:
        HealthPush.objects.filter(body__in=deleted).exclude(status__in=(PushStatus.PENDING, PushStatus.PROCESSING)
                                                            ).update(body="")


def claim(push_id: int) -> bool:
    """Take a pending push, or one whose worker's lease ran out (the jobs' claim); each claim is counted."""
    return HealthPush.claim(push_id, status=PushStatus.PROCESSING, started_at=timezone.now(),
                            claims=F("claims") + 1)


def _finish(push: HealthPush, status: str, *, error: str = "", report=None) -> None:
    HealthPush.finish(push.pk, status, error=error[:2000], report=report)
    instruments.count_push_finished(push.cluster_id, status, push.received_at)
    _delete_bodies([push.body])


def process(push_id: int, outages: int = 0):
    """Parse and ingest one push (the worker's side). Answers the report, or None; raises :class:`StorageWait`
    when the storage is out (``outages``: how many times in a row it was, for the backoff)."""
    if not claim(push_id):
        return None  # done, superseded, or another delivery holds it
    push = HealthPush.objects.select_related("cluster__organization").get(pk=push_id)
    if push.claims > MAX_CLAIMS:
        _finish(push, PushStatus.FAILED, error=f"gave up after {MAX_CLAIMS} attempts (the worker stopped each time)")
        return None
    try:
        with bodies.open_body(push.body) as stored, gzip.GzipFile(fileobj=stored) as stream:
            scrape = parse_stream(stream)
        ingested = services.ingest(push.cluster, scrape, Source.PUSH, received_at=push.received_at, scope=push.scope)
    except ParseError as exc:
        _finish(push, PushStatus.FAILED, error=str(exc))
        return None
    except bodies.BodyMissing as exc:
        _finish(push, PushStatus.FAILED, error=f"{exc}: it was deleted or expired before the worker read it")
        return None
    except bodies.StorageUnavailable as exc:
        _wait_for_storage(push, exc, outages)
    except (OSError, EOFError, zlib.error) as exc:
        _finish(push, PushStatus.FAILED, error=f"the stored body cannot be read: {exc}")
        return None
    _finish(push, PushStatus.DONE, report=ingested.report)
    return ingested.report


def _wait_for_storage(push: HealthPush, exc: Exception, outages: int) -> None:
    """An outage is not the push's fault: put it back to pending (its claim not counted, since only workers
    that died count) and raise :class:`StorageWait` with the backoff, or fail it once it waited as long as a
    push may (``HEALTH_PUSH_MAX_WAIT_SECONDS``), saying why."""
    waited = (timezone.now() - push.received_at).total_seconds()
    if waited >= settings.HEALTH_PUSH_MAX_WAIT_SECONDS:
        _finish(push, PushStatus.FAILED, error=f"the push storage was unavailable for {int(waited)} s, longer than "
                                               f"a push may wait: {exc}")
        raise StorageWait(0) from None
    base = settings.HEALTH_PUSH_STORAGE_RETRY_SECONDS
    countdown = min(base * 2 ** min(outages, 10), base * 10)
    HealthPush.release(push.pk, if_open=True, status=PushStatus.PENDING, claims=F("claims") - 1,
                       started_at=None, dispatched_at=timezone.now(), error=f"waiting for the push storage: {exc}"[:2000])
    raise StorageWait(countdown) from None


def waiting(now) -> Q:
    """The pushes the sweep sends: pending ones nobody took (broker down, message lost: not dispatched, or
    dispatched ``HEALTH_PUSH_RESEND_SECONDS`` ago and still pending) and those whose worker died (lease run out)."""
    resend = now - timedelta(seconds=settings.HEALTH_PUSH_RESEND_SECONDS)
    return (Q(status=PushStatus.PENDING) & (Q(dispatched_at__isnull=True) | Q(dispatched_at__lt=resend))
            | Q(status=PushStatus.PROCESSING, lease_until__lt=now))


def delete_leftover_bodies() -> int:
    """The bodies finished pushes left behind (the storage was down when they finished): the recovery's part."""
    names = list(HealthPush.objects.exclude(body="").exclude(
        status__in=(PushStatus.PENDING, PushStatus.PROCESSING)).values_list("body", flat=True)[:500])
    _delete_bodies(names)
    return len(names)


def recover(now=None) -> int:
    """Recover the pushes alone (their share of the jobs' periodic ``portal.core.jobs.sweep``): send the ones a
    broker outage left pending or a dead worker held; answers how many it sent. (In health, a "sweep" is the
    pairwise NCCL run.)"""
    return registry.recover_kind(KIND.get(), now).sent


def peak_memory_kb() -> int:
    """This process's resident-memory high-water mark (VmHWM; ru_maxrss where /proc is missing)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
