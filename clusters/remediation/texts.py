"""What a remediation's journal and steps say, stored as codes with parameters (``portal.core.stored_text``) and read
in each reader's language: the timeline's entries ("Remediation 5 on c1: replace of ip-… started") and the
action page's steps ("The nodes run again: ip-…")."""
from __future__ import annotations

from django.utils.translation import gettext, gettext_noop

from clusters.remediation.choices import ActionKind, ProviderEventKind
from portal.core import provider_errors
from portal.core.stored_text import define, message


def kind_label(value) -> str:
    """'replace', 'reboot', 'drain': the kind in the middle of a sentence."""
    try:
        return str(ActionKind(value).label).lower()
    except ValueError:
        return str(value)


def failure_label(value) -> str:
    return provider_errors.remediation_failure(str(value))


KIND = {"kind": kind_label}

ENTRY = define("remediation.entry", gettext_noop("Remediation %(action)s on %(cluster)s: %(what)s"))
STARTED = define("remediation.started", gettext_noop("%(kind)s of %(nodes)s started"), KIND)
DRAINED = define("remediation.drained", gettext_noop("done: the nodes are drained"))
CHECKED = define("remediation.checked", gettext_noop("done: the nodes passed HyperPod's deep health checks"))
HYPERPOD_EVENT = define("remediation.hyperpod_event", gettext_noop("HyperPod on %(cluster)s: 1 node event"))
HYPERPOD_EVENTS = define("remediation.hyperpod_events", gettext_noop("HyperPod on %(cluster)s: %(count)s node events"))
CHECKS_PASSED = define("remediation.checks_passed", gettext_noop("HyperPod's deep health checks passed: %(nodes)s."))
PROVIDER_ACTED = define("remediation.provider_acted", gettext_noop("cancelled: HyperPod acted on %(nodes)s on its own (%(event)s)"),
                        {"event": lambda value: str(ProviderEventKind(value).label).lower()})
BACK = define("remediation.back", gettext_noop("the nodes are back; waiting for their next health report"))
CLEARED = define("remediation.cleared", gettext_noop("done: the nodes reported without the fault"))
FAILED = define("remediation.failed", gettext_noop("failed"))
REFUSED = define("remediation.refused", gettext_noop("%(kind)s of %(nodes)s refused"), KIND)
NO_NODE = define("remediation.no_node", gettext_noop("no node"))
PROPOSED_AUTOMATICALLY = define("remediation.proposed_automatically",
                                gettext_noop("%(kind)s of %(nodes)s proposed automatically"), KIND)
PROPOSED_BY = define("remediation.proposed_by", gettext_noop("%(kind)s of %(nodes)s proposed by %(person)s"), KIND)
APPROVED_BY_POLICY = define("remediation.approved_by_policy",
                            gettext_noop("approved under the organization's consent policy"))
APPROVED_BY = define("remediation.approved_by", gettext_noop("approved by %(person)s"))
DECLINED_BY = define("remediation.declined_by", gettext_noop("declined by %(person)s"))
CANCELLED_BY = define("remediation.cancelled_by", gettext_noop("cancelled by %(person)s"))
CANCELLED_ARCHIVED = define("remediation.cancelled_archived", gettext_noop("cancelled: %(cycle)s was archived"))

# Steps.
RETRY = define("remediation.step.retry", gettext_noop("%(note)s; retrying in %(seconds)s s (%(count)s in a row)."),
               {"note": gettext})
RETRY_NOTES = (gettext_noop("The AWS endpoint could not be reached"), gettext_noop("AWS slowed down the portal's requests"))
NODE_IS = define("remediation.node_is", gettext_noop("%(host)s is %(node)s"))
NODE_IS_NOW = define("remediation.node_is_now", gettext_noop("%(host)s is now %(node)s"))
MORE = define("remediation.more", gettext_noop("%(names)s and %(more)s more"))
LOCATED_HYPERPOD = define("remediation.step.located_hyperpod", gettext_noop("Found the nodes in HyperPod: %(found)s."))
ADOPTED_HYPERPOD = define("remediation.step.adopted_hyperpod", gettext_noop(
    "The provider had taken the request before the worker stopped; not sent again."))
SUBMITTED_HYPERPOD = define("remediation.step.submitted_hyperpod",
                            gettext_noop("HyperPod accepted the %(kind)s of %(nodes)s."), KIND)
REPLACED = define("remediation.step.replaced", gettext_noop("The nodes run again on new instances: %(nodes)s."))
REBOOTED = define("remediation.step.rebooted", gettext_noop("The nodes run again: %(nodes)s."))
LOCATED_SLURM = define("remediation.step.located_slurm", gettext_noop("Found the nodes in Slurm: %(found)s."))
ADOPTED_SLURM = define("remediation.step.adopted_slurm", gettext_noop(
    "The command had been sent before the worker stopped; not sent again."))
SUBMITTED_SLURM = define("remediation.step.submitted_slurm",
                         gettext_noop("Sent the %(kind)s of %(nodes)s to Slurm on the head node."), KIND)
RAN = define("remediation.step.ran", gettext_noop("The head node ran the command."))
STEP_FAILED = define("remediation.step.failed", "%(reason)s", {"reason": failure_label})


def listed(names, limit: int = 8):
    """Names for a step's summary, as a parameter: all of a few, the first ``limit`` and how many more of many."""
    names = list(names)
    return names if len(names) <= limit else message(MORE, names=names[:limit], more=len(names) - limit)
