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

from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from clusters import instance_types
from clusters.health import conf, faults, nccl, runs
from clusters.health.choices import RunVerdict
from clusters.health.models import ClusterHealthConfig, HealthReport, NodeHealth, ValidationRun
from clusters.health.prometheus import ParseError, Scrape, parse
from clusters.health.summary import HealthSummary, summarize
from portal import timeline
from portal.choices import Visibility
from portal.notifications import Event, notify
from portal.vocabulary import VERDICT_RANK, Severity

logger = logging.getLogger(__name__)

CHUNK = 1 << 20


class TooLarge(ValueError):
    """The input is over the configured limit (answered with 413)."""


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


def ingest(cluster, text: str | bytes | Scrape, source: str, *, received_at=None) -> Ingested:
    """Summarize one scrape against the previous report's state, then store the report, the node
    verdicts and the fault changes in one transaction. Raises ``ParseError`` for unusable text."""
    previous = (HealthReport.objects.filter(cluster=cluster).order_by("-received_at", "-pk")
                .values_list("pk", "state").first())
    scrape = text if isinstance(text, Scrape) else parse(text)
    summary = summarize(scrape, _instance_type(cluster), previous[1] if previous else None,
                        uncorrectable_rows_replace_at=conf.get("HEALTH_UNCORRECTABLE_ROWS_REPLACE_AT"))
    data = summary.to_dict()
    nodes = data.pop("nodes")
    panels, counts = summary.panels, data["verdict_counts"]
    samples = scrape.samples
    with transaction.atomic():
        report = HealthReport.objects.create(
            cluster=cluster, received_at=received_at or timezone.now(), source=source,
            instance_type=summary.instance_type or "", node_count=len(nodes), gpus_expected=summary.gpus_expected,
            gpus_seen=summary.gpus_seen, samples=samples, healthy_gpu_share=summary.healthy_gpu_share,
            fault_count=len(summary.faults), summary=data, state=summary.state,
            **{key: panels[key] for key, _ in HealthReport.PANELS},
            **{f"nodes_{verdict}": count for verdict, count in counts.items()},
        )
        NodeHealth.objects.bulk_create(
            [NodeHealth(report=report, hostname=n["hostname"][:255], verdict=n["verdict"],
                        rank=VERDICT_RANK[n["verdict"]], reasons=n["reasons"], expected_gpus=n["expected_gpus"],
                        gpus_seen=n["gpus_seen"], missing_gpus=n["missing_gpus"],
                        efa_devices_seen=n["efa_devices_seen"], model=(n["model"] or "")[:100]) for n in nodes],
            batch_size=2000,
        )
        if previous:
            # Node rows are kept for the latest report only; older reports keep their figures.
            NodeHealth.objects.filter(report__cluster=cluster, report_id__lt=report.pk).delete()
        reconciled = faults.reconcile(report, summary.faults)
        if reconciled.new_critical:
            _announce(cluster, report, reconciled.new_critical)
    return Ingested(report, summary, reconciled)


def _announce(cluster, report: HealthReport, new_critical: list) -> None:
    """One timeline entry and one notification for the critical faults first seen in this report."""
    first = new_critical[0]
    more = f" and {len(new_critical) - 1} more" if len(new_critical) > 1 else ""
    title = f"{cluster.name}: {first.hostname} {first.meaning}{more}"
    body = "\n".join(f"{f.hostname} {'GPU ' + f.gpu if f.gpu else f.device or 'node'}: {f.meaning} — {f.action}"
                     for f in new_critical[:50])
    url = reverse("health:cluster_health", kwargs={"pk": cluster.pk})
    timeline.record(cluster.organization_id, "fault", title, body=body, visibility=Visibility.SHARED,
                    severity=Severity.CRITICAL, tags=["health", cluster.name], url=url, occurred_at=report.received_at)
    event = Event(kind="health_fault", title=title, organization_id=cluster.organization_id, severity=Severity.CRITICAL,
                  body=body, url=url, extra={"cluster": cluster.pk, "report": report.pk,
                                             "faults": [f.pk for f in new_critical[:50]]})
    transaction.on_commit(lambda: notify(event))


# --- validation runs ------------------------------------------------------------------------------

def parse_validation(cluster, text: str | bytes, collective: str | None = None, nodes: int | None = None):
    """Parse and judge an nccl-tests or nccom-test run for ``cluster`` (raises ``NcclParseError``)."""
    if isinstance(text, (bytes, bytearray)) and len(text) > conf.get("HEALTH_VALIDATION_MAX_BYTES"):
        raise TooLarge(f"the upload is over {conf.get('HEALTH_VALIDATION_MAX_BYTES'):,} bytes")
    if isinstance(text, str) and len(text) > conf.get("HEALTH_VALIDATION_MAX_BYTES"):
        raise TooLarge(f"the upload is over {conf.get('HEALTH_VALIDATION_MAX_BYTES'):,} characters")
    return runs.parse_run(text, collective=collective or None, instance_type=_instance_type(cluster),
                          nodes=nodes or None)


def store_validation(cluster, text: str | bytes, result: nccl.NcclResult, user=None, notes: str = "") -> ValidationRun:
    """Store a parsed run; a passing run validates the cluster (timeline entry)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    limit = conf.get("HEALTH_VALIDATION_RAW_MAX")
    data = result.to_dict()
    rows = data.pop("rows")
    run = ValidationRun(
        cluster=cluster, uploaded_by=user if getattr(user, "is_authenticated", False) else None,
        collective=result.collective, instance_type=result.instance_type or "", nodes=result.nodes,
        ranks=result.ranks, hosts=result.hosts[:512], rows=rows, peak_busbw=result.peak_busbw,
        avg_busbw=result.avg_busbw, large_message_busbw=result.large_message_busbw,
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
    word = {RunVerdict.PASS: "passed", RunVerdict.WARN: "passed with warnings", RunVerdict.FAIL: "failed",
            RunVerdict.NONE: "stored, not judged"}[run.verdict]
    tool = "Neuron" if run.result.get("tool") == "nccom-test" else "NCCL"
    timeline.record(
        cluster.organization_id, "validation", f"{cluster.name}: {tool} {run.collective} validation {word}",
        source=run, body=run.diagnosis, visibility=Visibility.SHARED,
        severity=RUN_SEVERITY[run.verdict], tags=["nccl", cluster.name], actor=user,
    )
