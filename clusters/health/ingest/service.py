"""Ingesting health scrapes and storing validation runs: the one code path behind the API, the
pages, the pull task, the demo and the benchmark.

Everything that can fail on the input (parsing, an unknown instance type) happens before the
transaction that stores the report, so bad input leaves nothing half-stored and the previous
summary stays the latest one.
"""
from __future__ import annotations

import logging
import zlib
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Min, Q
from django.urls import reverse
from django.utils import timezone

from clusters.health import current
from clusters.health.choices import RunVerdict
from clusters.health.faults import service as faults
from clusters.health.faults import stalls
from clusters.health.ingest import timeline_texts as texts
from clusters.health.models import (
    ClusterHealthConfig,
    ClusterHealthState,
    GpuFault,
    HealthReport,
    NodeHealth,
    ValidationRun,
)
from clusters.health.readers import nccl, runs
from clusters.health.readers.exposition import parse
from clusters.health.readers.prometheus import ParseError, Scrape
from clusters.health.readers.summary import HealthSummary, summarize
from clusters.models import Cluster
from portal.core import instance_types, timeline
from portal.core.choices import VERDICT_RANK, Severity, Visibility
from portal.core.notifications import Event, notify
from portal.core.stored_text import message

logger = logging.getLogger(__name__)

CHUNK = 1 << 20


class TooLarge(ValueError):
    """The input is over the configured limit (answered with 413): a body read by ``read_body`` or stored by
    ``pushes.store_body``, an uploaded run."""


@dataclass
class Ingested:
    report: HealthReport
    summary: HealthSummary
    reconciled: faults.Reconciled


def read_body(stream, max_bytes: int, gzipped: bool) -> bytes:
    """Read a request body in chunks, decompressing gzip on the fly; ``TooLarge`` past ``max_bytes``
    (of decompressed text: a small gzip bomb is refused as soon as it inflates past the cap)."""
    parts: list[bytes] = []
    total = 0
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS) if gzipped else None
    while True:
        chunk = stream.read(CHUNK) if stream is not None else b""
        if not chunk:
            break
        if inflater is None:
            total += len(chunk)
            if total > max_bytes:
                raise TooLarge(f"the body is over {max_bytes:,} bytes")
            parts.append(chunk)
            continue
        data = chunk
        while data:
            try:
                out = inflater.decompress(data, max_bytes - total + 1)
            except zlib.error as exc:
                raise ParseError(f"the body is not valid gzip: {exc}") from None
            total += len(out)
            if total > max_bytes:
                raise TooLarge(f"the decompressed body is over {max_bytes:,} bytes")
            parts.append(out)
            data = inflater.unconsumed_tail
    if inflater is not None:
        if not inflater.eof:
            raise ParseError("the gzip stream is truncated")
        tail = inflater.flush()
        total += len(tail)
        if total > max_bytes:
            raise TooLarge(f"the decompressed body is over {max_bytes:,} bytes")
        parts.append(tail)
    return b"".join(parts)


def config_for(cluster) -> ClusterHealthConfig:
    config, _ = ClusterHealthConfig.objects.get_or_create(cluster=cluster)
    return config


def rotate_token(cluster) -> str:
    """A new ingestion token for ``cluster`` (the old one stops working); shown once."""
    with transaction.atomic():
        config = ClusterHealthConfig.objects.select_for_update().filter(cluster=cluster).first() or config_for(cluster)
        token = config.rotate_token()
        config.save(update_fields=["token_hash", "token_hint", "token_rotated_at", "updated"])
    return token


def config_for_token(token: str) -> ClusterHealthConfig | None:
    """The ingestion settings a token belongs to (compared in constant time on its hash), or None."""
    cluster_id = ClusterHealthConfig.cluster_id_of(token)
    if cluster_id is None:
        return None
    config = ClusterHealthConfig.objects.select_related("cluster__organization").filter(cluster_id=cluster_id).first()
    if config is None or not config.token_matches(token):
        return None
    return config


def _instance_type(cluster) -> str | None:
    itype = instance_types.find(cluster.instance_type)
    return itype.name if itype else None


def ingest(cluster, text: str | bytes | Scrape, source: str, *, received_at=None, scope: str = current.NODES) -> Ingested:
    """Summarize one scrape and merge it into the cluster's current health: store the report, replace
    the node rows it covers and apply the fault changes, in one transaction. Raises ``ParseError``
    for unusable text (before anything is written).

    Ingestions of one cluster are serialized by a lock on the cluster row: each one reads the
    counter baselines, node rows and open faults the previous one left, so concurrent pushes make
    one fault, one timeline entry and one notification, never several (the partial unique
    constraint on open faults holds the same line in the database)."""
    if scope not in current.SCOPES:
        raise ValueError(f"unknown report scope {scope!r}: use one of {', '.join(current.SCOPES)}")
    scrape = text if isinstance(text, Scrape) else parse(text)
    itype = _instance_type(cluster)
    replace_at = settings.HEALTH_UNCORRECTABLE_ROWS_REPLACE_AT
    with transaction.atomic():
        list(Cluster.objects.select_for_update().filter(pk=cluster.pk).values_list("pk"))
        health, _ = ClusterHealthState.objects.get_or_create(cluster_id=cluster.pk)
        summary = summarize(scrape, itype, health.state or None, uncorrectable_rows_replace_at=replace_at,
                            release=True)  # the readings go as each node is judged; the counts stay
        now = received_at or timezone.now()
        figures = current.node_figures(summary)
        covered = set(figures)
        nodes = NodeHealth.objects.filter(cluster_id=cluster.pk)
        replaced = nodes if scope == current.FULL else nodes.filter(hostname__in=covered)
        if scope == current.FULL or not health.totals:
            totals = current.empty_totals()
            if scope != current.FULL:  # first report since the node rows gained figures: count the others
                current.apply(totals, nodes.exclude(hostname__in=covered).values_list("verdict", "figures"), 1)
        else:
            totals = current.apply(dict(health.totals), replaced.values_list("verdict", "figures"), -1)
        current.apply(totals, ((n.verdict, figures[n.hostname]) for n in summary.nodes), 1)
        data = summary.to_dict()
        data.pop("nodes")
        data["scope"], data["nodes_reported"] = scope, len(summary.nodes)
        data["utilization"] = summary.utilization
        report = HealthReport.objects.create(
            cluster_id=cluster.pk, received_at=now, source=source, instance_type=summary.instance_type or "",
            node_count=totals["node_count"], gpus_expected=totals["gpus_expected"], gpus_seen=totals["gpus_seen"],
            samples=scrape.samples, healthy_gpu_share=current.healthy_gpu_share(totals),
            fault_count=len(summary.faults), summary=data,
            **{key: totals[key] for key, _ in HealthReport.PANELS},
            **{f"nodes_{verdict}": totals[f"nodes_{verdict}"] for verdict in VERDICT_RANK},
        )
        replaced.delete()
        NodeHealth.objects.bulk_create(
            [NodeHealth(report=report, cluster_id=cluster.pk, seen_at=now, figures=figures[n.hostname],
                        hostname=n.hostname[:255], verdict=n.verdict, rank=VERDICT_RANK[n.verdict],
                        reasons=n.reasons, expected_gpus=n.expected_gpus, gpus_seen=n.gpus_seen,
                        missing_gpus=n.missing_gpus, efa_devices_seen=n.efa_devices_seen,
                        model=(n.model or "")[:100]) for n in summary.nodes],
            batch_size=2000,
        )
        reconciled = faults.reconcile(report, summary.faults, covered=None if scope == current.FULL else covered)
        stall = stalls.check(cluster, report, maybe_open=bool(health.open_faults))
        open_faults = GpuFault.objects.filter(cluster_id=cluster.pk, cleared_at__isnull=True).aggregate(
            n=Count("pk"), critical=Count("pk", filter=Q(severity="critical")))
        health.last_report, health.last_report_at = report, now
        health.totals, health.nodes_known, health.worst_rank = totals, totals["node_count"], current.worst_rank(totals)
        health.open_faults, health.critical_faults = open_faults["n"], open_faults["critical"]
        health.oldest_seen = nodes.aggregate(oldest=Min("seen_at"))["oldest"]
        health.state = current.merge_state(health.state, summary.state, covered, scope)
        health.save()
        new_critical = reconciled.new_critical + ([stall] if stall else [])
        if new_critical:
            _announce(cluster, report, new_critical)
    return Ingested(report, summary, reconciled)


def _announce(cluster, report: HealthReport, new_critical: list) -> None:
    """One timeline entry and one notification for the critical faults first seen in this report."""
    said, told = texts.found(cluster, new_critical)
    title, body = said.english(), told.english()  # the notification's words; the entry is read in each language
    url = reverse("health:cluster_health", kwargs={"pk": cluster.pk})
    timeline.record(cluster.organization_id, "fault", said, body=told, visibility=Visibility.SHARED,
                    severity=Severity.CRITICAL, tags=["health", cluster.name], url=url, occurred_at=report.received_at)
    event = Event(kind="health_fault", title=title, organization_id=cluster.organization_id, severity=Severity.CRITICAL,
                  body=body, url=url, extra={"cluster": cluster.pk, "report": report.pk,
                                             "faults": [f.pk for f in new_critical[:50]]})
    transaction.on_commit(lambda: notify(event))


# --- validation runs ------------------------------------------------------------------------------

def parse_validation(cluster, text: str | bytes, collective: str | None = None, nodes: int | None = None):
    """Parse and judge an nccl-tests or nccom-test run for ``cluster`` (raises ``NcclParseError``)."""
    if isinstance(text, (bytes, bytearray)) and len(text) > settings.HEALTH_VALIDATION_MAX_BYTES:
        raise TooLarge(f"the upload is over {settings.HEALTH_VALIDATION_MAX_BYTES:,} bytes")
    if isinstance(text, str) and len(text) > settings.HEALTH_VALIDATION_MAX_BYTES:
        raise TooLarge(f"the upload is over {settings.HEALTH_VALIDATION_MAX_BYTES:,} characters")
    return runs.parse_run(text, collective=collective or None, instance_type=_instance_type(cluster),
                          nodes=nodes or None)


def store_validation(cluster, text: str | bytes, result: nccl.NcclResult, user=None, notes: str = "",
                     job=None) -> ValidationRun:
    """Store a parsed run (of ``job`` when a validation job posted it); a passing run validates the cluster
    (timeline entry)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    limit = settings.HEALTH_VALIDATION_RAW_MAX
    data = result.to_dict()
    rows = data.pop("rows")
    run = ValidationRun(
        cluster=cluster, job=job, uploaded_by=user if getattr(user, "is_authenticated", False) else None,
        collective=result.collective, instance_type=result.instance_type or "", nodes=result.nodes,
        ranks=result.ranks, hosts=result.hosts[:512], rows=rows, peak_busbw=result.peak_busbw,
        avg_busbw=result.avg_busbw, large_message_busbw=result.large_message_busbw, plateau_busbw=result.plateau_busbw,
        expected_busbw=result.expected_busbw, transport=result.transport or "",
        nccl_version=(result.nccl_version or "")[:64], ofi_version=(result.ofi_version or "")[:64],
        verdict=result.verdict, diagnosis=result.diagnosis, result=data, notes=notes,
        raw_text=text[:limit], raw_truncated=len(text) > limit,
    )
    with transaction.atomic():
        run.save()
        after_validation(run, user)
    return run


RUN_SEVERITY = {RunVerdict.PASS: "", RunVerdict.NONE: "", RunVerdict.WARN: Severity.NORMAL, RunVerdict.FAIL: Severity.HIGH}


def after_validation(run: ValidationRun, user=None) -> None:
    """Timeline entry for a run (inside the saving transaction)."""
    cluster = run.cluster
    tool = "Neuron" if run.result.get("tool") == "nccom-test" else "NCCL"
    timeline.record(
        cluster.organization_id, "validation",
        message(texts.RUN_ENDED[run.verdict], cluster=cluster.name, tool=tool, collective=run.collective),
        source=run, body=run.diagnosis, visibility=Visibility.SHARED,
        severity=RUN_SEVERITY[run.verdict], tags=["nccl", cluster.name], actor=user,
    )
