"""A refused or cancelled action's reason in the reader's language.

The action keeps its reason in English (``RemediationAction.refusal``, for the journal and the API) and, since
refusals carry their parameters, the rule's parameters in ``progress["refusal"]``: the words are written when they
are shown. An action refused before the parameters were kept shows its rule in the reader's language and its
stored detail as it was written."""
from __future__ import annotations

import re

from django.utils.translation import gettext, ngettext

from clusters.choices import ClusterState, Orchestrator
from clusters.remediation.choices import ActionKind
from clusters.remediation.rules import RULE_WORDS

CANCELLED_RULES = {"cycle_archived"}


def params(refusal) -> dict:
    """What ``progress`` keeps of a refusal of ``rules.refusal``."""
    return {"refusal": {"rule": refusal.rule, **refusal.params}}


def _detail(rule: str, kept: dict) -> str:
    if rule == "cluster_not_ready":
        return str(ClusterState(kept["state"]).label).lower()
    if rule == "kind_unsupported":
        return gettext("%(kind)s on %(orchestrator)s") % {
            "kind": str(ActionKind(kept["kind"]).label).lower(), "orchestrator": Orchestrator(kept["orchestrator"]).label}
    if rule == "unknown_node":
        return ", ".join(kept["nodes"])
    if rule == "node_busy":
        return ", ".join(gettext("%(node)s in action %(number)s") % {"node": host, "number": pk}
                         for host, pk in kept["busy"])
    if rule == "max_nodes":
        return ngettext("%(active)s in remediation, at most %(limit)s of %(count)s node at once",
                        "%(active)s in remediation, at most %(limit)s of %(count)s nodes at once",
                        kept["count"]) % {"active": kept["active"], "limit": kept["limit"], "count": kept["count"]}
    if rule == "cooldown":
        return gettext("%(nodes)s within %(hours)s h") % {"nodes": ", ".join(kept["nodes"]), "hours": kept["hours"]}
    return str(kept.get("why") or kept.get("cycle") or "")


def _stored_detail(text: str) -> str:
    """The detail in parentheses of a stored "Refused: <words> (<detail>)." ("" for none)."""
    found = re.search(r"\((.*)\)\.?$", text or "")
    return found.group(1) if found else ""


def shown(action) -> str:
    """The reason ``action`` was refused or cancelled, in the reader's language ("" for neither)."""
    rule = action.refused_rule
    if not action.refusal and not rule:
        return ""
    if rule not in RULE_WORDS:
        return action.refusal
    kept = (action.progress or {}).get("refusal")
    try:
        detail = _detail(rule, kept) if kept else _stored_detail(action.refusal)
    except (KeyError, TypeError, ValueError):  # parameters of another shape: the stored words' detail
        detail = _stored_detail(action.refusal)
    words = {"why": gettext(RULE_WORDS[rule]), "detail": detail}
    if rule in CANCELLED_RULES:
        return (gettext("Cancelled: %(why)s (%(detail)s).") if detail else gettext("Cancelled: %(why)s.")) % words
    return (gettext("Refused: %(why)s (%(detail)s).") if detail else gettext("Refused: %(why)s.")) % words
