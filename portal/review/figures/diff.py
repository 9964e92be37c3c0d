"""What changed between two overview snapshots (a frozen week and the one before it)."""
from __future__ import annotations

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

WEEK_LABELS = {
    "new": _("This week: new"),
    "resolved": _("This week: resolved"),
    "open": _("This week: open"),
    "launches": _("This week: launches"),
    "failures": _("This week: failures"),
    "faults": _("This week: faults"),
}
CLUSTER_LABELS = {
    "scheduled": _("Clusters scheduled"),
    "creating": _("Clusters creating"),
    "ready": _("Clusters ready"),
    "failed": _("Clusters failed"),
    "deleting": _("Clusters deleting"),
    "deleted": _("Clusters deleted"),
}


def diff(before: dict | None, after: dict) -> list[dict]:
    """What changed between two snapshots: program figures, then per organization, as
    ``{"label", "before", "after", "delta"}`` for every number that differs."""
    if not before:
        return []
    changes: list[dict] = []

    def add(label: str, old, new) -> None:
        old, new = old or 0, new or 0
        if old != new:
            changes.append({"label": label, "before": old, "after": new, "delta": new - old})

    for key, label in WEEK_LABELS.items():
        add(str(label), before.get("week", {}).get(key), after.get("week", {}).get(key))
    bt, at = before.get("totals", {}), after.get("totals", {})
    add(gettext("Validated clusters"), bt.get("validated_clusters"), at.get("validated_clusters"))
    for state in sorted(set(bt.get("clusters", {})) | set(at.get("clusters", {}))):
        add(str(CLUSTER_LABELS.get(state, f"Clusters {state}")), bt.get("clusters", {}).get(state), at.get("clusters", {}).get(state))
    old_types = {t["instance_type"]: t for t in bt.get("by_type", [])}
    new_types = {t["instance_type"]: t for t in at.get("by_type", [])}
    for name in sorted(set(old_types) | set(new_types)):
        add(gettext("%(type)s used") % {"type": name}, old_types.get(name, {}).get("used"), new_types.get(name, {}).get("used"))
        add(gettext("%(type)s quota") % {"type": name}, old_types.get(name, {}).get("quota"), new_types.get(name, {}).get("quota"))
    old_orgs = {o["slug"]: o for o in before.get("organizations", [])}
    for org in after.get("organizations", []):
        prev = old_orgs.get(org["slug"], {})
        add(gettext("%(org)s: open interactions") % {"org": org["name"]}, prev.get("open_total"), org.get("open_total"))
        add(gettext("%(org)s: clusters") % {"org": org["name"]}, prev.get("clusters_total"), org.get("clusters_total"))
        add(gettext("%(org)s: quota used") % {"org": org["name"]}, prev.get("quota_used"), org.get("quota_used"))
    return changes
