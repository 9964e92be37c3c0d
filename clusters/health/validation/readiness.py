"""The acceptance gate and each organization's readiness checklist.

A cluster is *validated* only after a passing NCCL run on it. An organization is ready when its
network and storage are in place, a cluster is ready, monitoring reports, and validation passed.
Network and storage come from the launch pipeline's stacks; for clusters registered rather than
launched by the portal (no stacks) they are derived from the cluster's state, and the checklist says so.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from clusters.choices import ClusterState
from clusters.health.choices import RunVerdict
from clusters.health.models import HealthReport, ValidationRun
from clusters.models import Cluster, Stack
from portal.core.cycle_filter import in_active_cycle

COMPLETE_STATUSES = ("CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE")


@dataclass
class Item:
    key: str
    label: str
    ok: bool
    detail: str


def is_validated(cluster) -> bool:
    return ValidationRun.objects.filter(cluster=cluster, verdict=RunVerdict.PASS).exists()


def _stacks_done(clusters: list, role: str) -> tuple[bool | None, str]:
    """Whether a stack with this role is complete for one of the clusters.

    ``None`` when none of the clusters has any stack recorded (registered rather than launched by the
    portal): the caller then derives the item from the clusters' state and says so.
    """
    rows = list(Stack.objects.filter(cluster__in=clusters).values_list("role", "status"))
    if not rows:
        return None, ""
    statuses = [status for stack_role, status in rows if stack_role == role]
    if not statuses:
        return False, gettext("no %(role)s stack yet") % {"role": role}
    done = any(status in COMPLETE_STATUSES for status in statuses)
    return done, (gettext("%(role)s stack complete") % {"role": role} if done
                  else gettext("%(role)s stack not complete: %(statuses)s") % {"role": role, "statuses": ", ".join(statuses)})


def checklist(organization, clusters: list | None = None) -> list[Item]:
    """The five items for an organization (constant number of queries)."""
    if clusters is None:
        clusters = list(Cluster.objects.filter(organization=organization).exclude(state=ClusterState.DELETED))
    ready = [c for c in clusters if c.state == ClusterState.READY]
    items = []
    for role, label in (("network", _("Network")), ("storage", _("Storage"))):
        done, detail = _stacks_done(clusters, role)
        if done is None:
            done = bool(ready)
            detail = (gettext("derived from cluster state (the clusters were not launched by the portal): ")
                      + (ngettext("%(count)s cluster ready", "%(count)s clusters ready", len(ready)) % {"count": len(ready)} if ready
                         else gettext("no cluster is ready")))
        items.append(Item(role, str(label), done, detail))
    items.append(Item("cluster", gettext("Cluster ready"), bool(ready),
                      ", ".join(c.name for c in ready) if ready else
                      (ngettext("%(count)s cluster, none ready", "%(count)s clusters, none ready", len(clusters))
                       % {"count": len(clusters)} if clusters
                       else gettext("no cluster yet"))))
    minutes = settings.HEALTH_MONITORING_FRESH_MINUTES
    since = timezone.now() - datetime.timedelta(minutes=minutes)
    latest = (HealthReport.objects.filter(cluster__in=clusters).order_by("-received_at")
              .values_list("received_at", flat=True).first()) if clusters else None
    fresh = latest is not None and latest >= since
    items.append(Item("monitoring", gettext("Monitoring reporting"), fresh,
                      gettext("last report %(time)s") % {"time": f"{timezone.localtime(latest):%Y-%m-%d %H:%M}"} if latest
                      else gettext("no health report yet")))
    passed_ids = set(ValidationRun.objects.filter(cluster__in=ready, verdict=RunVerdict.PASS)
                     .values_list("cluster_id", flat=True)) if ready else set()
    untested = [c.name for c in ready if c.pk not in passed_ids]
    if not ready:
        detail = gettext("no ready cluster to validate")
    elif untested:
        detail = (gettext("%(validated)s of %(ready)s validated; not validated yet: %(names)s")
                  % {"validated": len(ready) - len(untested), "ready": len(ready), "names": ", ".join(untested)})
    else:
        detail = (gettext("%(validated)s of %(ready)s validated by a passing NCCL run: %(names)s")
                  % {"validated": len(ready), "ready": len(ready), "names": ", ".join(c.name for c in ready)})
    # Every ready cluster must pass: one unvalidated cluster is one a customer may train on untested.
    items.append(Item("validation", gettext("Ready clusters validated"), bool(ready) and not untested, detail))
    for item in items[3:4]:
        if not item.ok and latest:
            item.detail += gettext(" (none in the last %(minutes)s minutes)") % {"minutes": minutes}
    return items


def readiness_section(request, organization) -> dict:
    """The organization page's section (registered in apps.py): the active cycle's clusters."""
    clusters = list(in_active_cycle(Cluster.objects.restrict(request.user).filter(organization=organization))
                    .exclude(state=ClusterState.DELETED))
    validated = set(ValidationRun.objects.filter(cluster__in=clusters, verdict=RunVerdict.PASS)
                    .values_list("cluster_id", flat=True).distinct()) if clusters else set()
    return {
        "items": checklist(organization, clusters),
        "clusters": [(c, c.pk in validated) for c in clusters],
    }
