"""The acceptance gate and each organization's readiness checklist.

A cluster is *validated* only after a passing NCCL run on it. An organization is ready when its
network and storage are in place, a cluster is ready, monitoring reports, and validation passed.
Network and storage come from the launch pipeline's stacks when that exists (``cluster.stacks``
with a ``role``); until then they are derived from the cluster's state, and the checklist says so.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.apps import apps
from django.utils import timezone

from clusters.choices import ClusterState
from clusters.health import conf
from clusters.health.choices import RunVerdict
from clusters.health.models import HealthReport, ValidationRun
from clusters.models import Cluster

COMPLETE_STATUSES = ("CREATE_COMPLETE", "UPDATE_COMPLETE", "complete", "COMPLETE")


@dataclass
class Item:
    key: str
    label: str
    ok: bool
    detail: str


def is_validated(cluster) -> bool:
    return ValidationRun.objects.filter(cluster=cluster, verdict=RunVerdict.PASS).exists()


def _stack_model():
    try:
        return apps.get_model("clusters", "Stack")
    except LookupError:
        return None


def _stacks_done(clusters: list, role: str) -> tuple[bool | None, str]:
    """Whether a stack with this role is complete for one of the clusters; None when stacks do not exist."""
    Stack = _stack_model()
    if Stack is None or not hasattr(Stack, "role"):
        return None, ""
    field_names = {f.name for f in Stack._meta.get_fields()}
    status_field = next((name for name in ("status", "stack_status", "state") if name in field_names), None)
    if status_field is None:
        return None, ""
    rows = Stack.objects.filter(cluster__in=clusters, role=role).values_list(status_field, flat=True)
    statuses = list(rows)
    if not statuses:
        return False, f"no {role} stack yet"
    done = any(str(s) in COMPLETE_STATUSES or str(s).endswith("_COMPLETE") and "ROLLBACK" not in str(s)
               and "DELETE" not in str(s) for s in statuses)
    return done, f"{role} stack {'complete' if done else 'not complete: ' + ', '.join(map(str, statuses))}"


def checklist(organization, clusters: list | None = None) -> list[Item]:
    """The five items for an organization (constant number of queries)."""
    if clusters is None:
        clusters = list(Cluster.objects.filter(organization=organization).exclude(state=ClusterState.DELETED))
    ready = [c for c in clusters if c.state == ClusterState.READY]
    items = []
    for role, label in (("network", "Network"), ("storage", "Storage")):
        done, detail = _stacks_done(clusters, role)
        if done is None:
            done = bool(ready)
            detail = ("derived from cluster state (no launch stacks recorded): "
                      + (f"{len(ready)} cluster(s) ready" if ready else "no cluster is ready"))
        items.append(Item(role, label, done, detail))
    items.append(Item("cluster", "Cluster ready", bool(ready),
                      ", ".join(c.name for c in ready) if ready else
                      (f"{len(clusters)} cluster(s), none ready" if clusters else "no cluster yet")))
    minutes = conf.get("HEALTH_MONITORING_FRESH_MINUTES")
    since = timezone.now() - datetime.timedelta(minutes=minutes)
    latest = (HealthReport.objects.filter(cluster__in=clusters).order_by("-received_at")
              .values_list("received_at", flat=True).first()) if clusters else None
    fresh = latest is not None and latest >= since
    items.append(Item("monitoring", "Monitoring reporting", fresh,
                      f"last report {timezone.localtime(latest):%Y-%m-%d %H:%M}" if latest else "no health report yet"))
    passed = (ValidationRun.objects.filter(cluster__in=clusters, verdict=RunVerdict.PASS)
              .select_related("cluster").order_by("-uploaded_at").first()) if clusters else None
    items.append(Item("validation", "Validation passed", passed is not None,
                      f"{passed.collective} on {passed.cluster.name}: {passed.large_message_busbw or passed.peak_busbw:g} GB/s"
                      if passed else "no passing NCCL run yet"))
    for item in items[3:4]:
        if not item.ok and latest:
            item.detail += f" (none in the last {minutes} minutes)"
    return items


def readiness_section(request, organization) -> dict:
    """The organization page's section (registered in apps.py)."""
    clusters = list(Cluster.objects.restrict(request.user).filter(organization=organization)
                    .exclude(state=ClusterState.DELETED))
    validated = set(ValidationRun.objects.filter(cluster__in=clusters, verdict=RunVerdict.PASS)
                    .values_list("cluster_id", flat=True).distinct()) if clusters else set()
    return {
        "items": checklist(organization, clusters),
        "clusters": [(c, c.pk in validated) for c in clusters],
    }
