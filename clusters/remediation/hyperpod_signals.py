"""HyperPod's own signals: the events it records on a cluster (``ListClusterEvents``, ``DescribeClusterEvent``),
read once a minute per ready HyperPod cluster (``remediation.poll_hyperpod_events``).

Each event is kept once (``HyperPodEvent``, unique per cluster and event id) and handled when it is first kept,
under the cluster's lock, so two polls at once, a poll repeated after a worker died, or events read again from the
cursor's overlap are never handled twice. The cursor (``HyperPodEventCursor.after``) is the last event's time; a
read asks from ``OVERLAP`` before it, since events can be recorded a little after their time.

What an event does:
- a node HyperPod replaced or rebooted on its own (automatic node recovery): the node's open faults seen before the
  event are closed, with the event as their evidence, and a proposed or approved action on the node that had not
  started is cancelled, so the portal never acts a second time on a node HyperPod already handled. An event of the
  portal's own action (one running on that node at the event's time) is left to that action's verification;
- a failed deep health check, and every event HyperPod marks ``Error``, is told on the organization's timeline;
- every event is kept, with the hostname the health reports use (``HyperPodEventCursor.instances``: the cluster's
  instances as last listed, so an instance HyperPod replaced still names its old hostname).

What an event says happened is read from its description, in the words of HyperPod's events reference
("Instance replacement in Cluster … and InstanceGroup … succeeded"): the model gives no event type.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from clusters.health.models import GpuFault
from clusters.models import Cluster
from clusters.remediation import journal, providers, rules, texts
from clusters.remediation.choices import ActionState, FaultOutcome, ProviderEventKind
from clusters.remediation.models import HyperPodEvent, HyperPodEventCursor, RemediationAction, RemediationNode
from portal.core import locks, timeline
from portal.core.aws import AwsError
from portal.core.choices import TimelineKind, Visibility
from portal.core.stored_text import message

OVERLAP = timedelta(minutes=5)
DESCRIBED = (ProviderEventKind.REPLACED, ProviderEventKind.REBOOTED, ProviderEventKind.CHECK_FAILED)
TOLD = (ProviderEventKind.REPLACED, ProviderEventKind.REBOOTED, ProviderEventKind.CHECK_FAILED)
OWN_ACTION_STATES = (ActionState.RUNNING, ActionState.VERIFYING, ActionState.DONE, ActionState.FAILED)

_OPERATIONS = (("replacement", "replace"), ("reboot", "reboot"), ("deep health check", "check"))
_ENDED = re.compile(r"\b(succeeded|completed|passed|failed)\s*\.?\s*$", re.IGNORECASE)
_STARTED = re.compile(r"\b(started|initiated|in progress)\s*\.?\s*$", re.IGNORECASE)
_KINDS = {("replace", "started"): ProviderEventKind.REPLACE_STARTED, ("replace", "ended"): ProviderEventKind.REPLACED,
          ("reboot", "started"): ProviderEventKind.REBOOT_STARTED, ("reboot", "ended"): ProviderEventKind.REBOOTED,
          ("check", "started"): ProviderEventKind.CHECK_STARTED, ("check", "passed"): ProviderEventKind.CHECK_PASSED,
          ("check", "failed"): ProviderEventKind.CHECK_FAILED}


def classify(summary: dict) -> str:
    """What an event says happened to its instance (``ProviderEventKind``), from its description; a replacement
    or reboot that failed is not one that happened (``other``: HyperPod marks it Error, and it is told)."""
    if summary.get("ResourceType") != "Instance":
        return ProviderEventKind.OTHER
    text = (summary.get("Description") or "").strip()
    operation = next((short for words, short in _OPERATIONS if words in text.lower()), "")
    if not operation:
        return ProviderEventKind.OTHER
    ended = _ENDED.search(text)
    if ended:
        word = ended.group(1).lower()
        if operation == "check":
            return _KINDS[("check", "failed" if word == "failed" else "passed")]
        return ProviderEventKind.OTHER if word == "failed" else _KINDS[(operation, "ended")]
    return _KINDS[(operation, "started")] if _STARTED.search(text) else ProviderEventKind.OTHER


@dataclass
class Polled:
    kept: list[HyperPodEvent] = field(default_factory=list)
    closed: int = 0
    cancelled: int = 0


def ready_clusters():
    return Cluster.objects.filter(orchestrator="hyperpod", state="ready")


def poll(cluster: Cluster) -> Polled:
    """Read the cluster's new events and handle each once. An AWS error is kept on the cursor (and raised)."""
    cursor, _ = HyperPodEventCursor.objects.get_or_create(cluster=cluster)
    provider = providers.HyperPod(cluster)
    try:
        if not cursor.instances:  # before the first events: the hostnames of the instances they may name
            cursor.instances = provider.instances()
        summaries = provider.events(cursor.after - OVERLAP if cursor.after else None)
        known = set(HyperPodEvent.objects.filter(cluster=cluster, event_id__in=[s["EventId"] for s in summaries])
                    .values_list("event_id", flat=True))
        fresh = [s for s in summaries if s["EventId"] not in known]
        kinds = {s["EventId"]: classify(s) for s in fresh}
        details = {s["EventId"]: provider.event(s["EventId"]) for s in fresh if kinds[s["EventId"]] in DESCRIBED}
        if any(s.get("InstanceId") and s["InstanceId"] not in cursor.instances for s in fresh):
            cursor.instances = {**cursor.instances, **provider.instances()}  # old ones kept: replaced instances
    except (AwsError, providers.Failed) as exc:
        HyperPodEventCursor.objects.filter(pk=cursor.pk).update(polled_at=timezone.now(), error=str(exc)[:500])
        raise
    with transaction.atomic():
        locks.hold("hyperpod-events", cluster.pk)
        known = set(HyperPodEvent.objects.filter(cluster=cluster, event_id__in=list(kinds))
                    .values_list("event_id", flat=True))  # again, under the lock: another poll may have kept some
        polled = Polled()
        for summary in fresh:
            if summary["EventId"] in known:
                continue
            event = _keep(cluster, cursor, summary, kinds[summary["EventId"]], details.get(summary["EventId"]))
            _handle(cluster, cursor, event, polled)
            polled.kept.append(event)
        latest = max((s["EventTime"] for s in summaries), default=None)
        cursor.after = max(filter(None, (cursor.after, latest)), default=None)
        cursor.polled_at, cursor.error = timezone.now(), ""
        cursor.save()
        _tell(cluster, [e for e in polled.kept if e.kind in TOLD or e.level == "Error"])
    return polled


def _keep(cluster, cursor, summary: dict, kind: str, detail: dict | None) -> HyperPodEvent:
    meta = ((detail or {}).get("EventDetails") or {}).get("EventMetadata", {}).get("Instance") or {}
    instance = cursor.instances.get(summary.get("InstanceId") or "", {})
    return HyperPodEvent.objects.create(
        cluster=cluster, event_id=summary["EventId"], event_time=summary["EventTime"], kind=kind,
        level=summary.get("EventLevel", ""), resource_type=summary.get("ResourceType", ""),
        instance_group=summary.get("InstanceGroupName", ""), instance_id=summary.get("InstanceId", ""),
        logical_id=meta.get("NodeLogicalId") or instance.get("logical", ""), hostname=instance.get("host", ""),
        description=summary.get("Description", ""), failure=meta.get("FailureMessage", ""))


def _hosts(cursor, event: HyperPodEvent) -> set[str]:
    """Every hostname the event's node went by: its instance's, and (a replacement) its logical id's before."""
    hosts = {event.hostname} - {""}
    if event.logical_id:
        hosts |= {i["host"] for i in cursor.instances.values() if i.get("logical") == event.logical_id and i["host"]}
    return hosts


def _handle(cluster, cursor, event: HyperPodEvent, polled: Polled) -> None:
    if event.kind not in (ProviderEventKind.REPLACED, ProviderEventKind.REBOOTED):
        return
    hosts = _hosts(cursor, event)
    own = (RemediationAction.objects.filter(cluster=cluster, node_rows__hostname__in=hosts,
                                            state__in=OWN_ACTION_STATES, started_at__lte=event.event_time)
           .exclude(finished_at__lt=event.event_time - OVERLAP).values_list("pk", flat=True).first())
    if own is not None:
        event.outcome = f"the portal's action {own}"
        event.save(update_fields=["outcome"])
        return
    evidence = {"hyperpod_event": {"id": event.event_id, "time": event.event_time.isoformat(),
                                   "instance": event.instance_id, "description": event.description[:300]}}
    now = timezone.now()
    faults = list(GpuFault.objects.select_for_update().filter(cluster=cluster, hostname__in=hosts,
                                                              cleared_at__isnull=True,
                                                              first_seen__lte=event.event_time))
    for fault in faults:
        fault.cleared_at = now
        fault.evidence = {**(fault.evidence or {}), **evidence}
    GpuFault.objects.bulk_update(faults, ["cleared_at", "evidence"])
    cancelled = []
    waiting = RemediationAction.objects.filter(
        cluster=cluster, state__in=(ActionState.PROPOSED, ActionState.APPROVED),
        pk__in=RemediationNode.objects.filter(cluster=cluster, hostname__in=hosts, active=True).values("action_id"))
    for action in waiting:
        action.transition(ActionState.CANCELLED, refused_rule="provider_acted",
                          refusal=f"Cancelled: {rules.RULE_WORDS['provider_acted']} ({event.instance_id}).")
        action.fault_rows.filter(outcome=FaultOutcome.REMEDIATING).update(outcome=FaultOutcome.CLEARED, settled_at=now)
        journal.record(action, message(texts.PROVIDER_ACTED, nodes=", ".join(sorted(hosts)), event=event.kind),
                       event.description)
        cancelled.append(action.pk)
    polled.closed += len(faults)
    polled.cancelled += len(cancelled)
    event.outcome = (f"closed {len(faults)} fault{'s' if len(faults) != 1 else ''}"
                     + (f"; cancelled action {', '.join(map(str, cancelled))}" if cancelled else ""))
    event.save(update_fields=["outcome"])


def _tell(cluster, events: list[HyperPodEvent]) -> None:
    """One timeline entry per poll for what HyperPod did to nodes (not one per event: a rack's worth of
    replacements is one entry)."""
    if not events:
        return
    lines = [f"{timezone.localtime(e.event_time):%Y-%m-%d %H:%M:%S} {e.hostname or e.instance_id}: {e.description}"
             + (f" ({e.outcome})" if e.outcome else "") + (f" {e.failure}" if e.failure else "") for e in events]
    worst = "high" if any(e.level == "Error" for e in events) else "low"
    timeline.record(cluster.organization_id, TimelineKind.FAULT,
                    message(texts.HYPERPOD_EVENT, cluster=cluster.name) if len(events) == 1
                    else message(texts.HYPERPOD_EVENTS, cluster=cluster.name, count=len(events)),
                    source=cluster, body="\n".join(lines)[:4000], visibility=Visibility.SHARED, severity=worst,
                    tags=["hyperpod", "remediation"])
