"""The sentences of the overview's figures, written in the reader's language when they are shown.

A snapshot stores facts, not sentences: an organization's health as ``health_facts`` (open faults, the worst
verdict, whether its clusters report, nodes not reporting) and its validation as ``validation_facts`` (clusters
passed, ready). A frozen review is read in the language of whoever opens it, months later, from the same facts.
Reviews frozen before the facts were kept have only the English sentence (``health``, ``validation``), shown as
it was written.
"""
from __future__ import annotations

from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from clusters.health.current import nodes_text

VERDICT_LABELS = {"degraded": _("degraded"), "reset_gpu": _("reset GPU"), "reboot": _("reboot node"),
                  "replace": _("replace node")}


def verdict_text(open_faults: int, worst: str | None, reporting: bool) -> str | None:
    """"healthy", "3 open faults (worst: replace node)", or None when the organization's clusters never reported."""
    if open_faults:
        faults = ngettext("%(count)s open fault", "%(count)s open faults", open_faults) % {"count": open_faults}
        if worst and worst != "healthy":
            return gettext("%(faults)s (worst: %(verdict)s)") % {"faults": faults, "verdict": VERDICT_LABELS.get(worst, worst)}
        return faults
    return gettext("healthy") if reporting else None


def health_of(facts: dict) -> str | None:
    """The health sentence of ``facts`` (``open_faults``, ``worst``, ``reporting``, ``not_reporting``)."""
    verdict = verdict_text(facts.get("open_faults") or 0, facts.get("worst"), bool(facts.get("reporting")))
    silent = facts.get("not_reporting") or 0
    if silent:
        return f"{verdict or gettext('no report yet')} · {nodes_text(silent)}"
    return verdict


def validation_of(facts: dict) -> str:
    """"1 of 2 ready clusters validated"."""
    return ngettext("%(passed)s of %(ready)s ready cluster validated", "%(passed)s of %(ready)s ready clusters validated",
                    facts["ready"]) % {"passed": facts["passed"], "ready": facts["ready"]}


def health_text(organization: dict) -> str | None:
    """An overview row's health in the active language (a review frozen before facts were kept: as stored)."""
    facts = organization.get("health_facts")
    return organization.get("health") if facts is None else health_of(facts)


def validation_text(organization: dict) -> str | None:
    """An overview row's validation in the active language (a review frozen before facts were kept: as stored)."""
    facts = organization.get("validation_facts")
    return organization.get("validation") if facts is None else validation_of(facts)
