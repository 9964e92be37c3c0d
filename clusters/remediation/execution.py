"""One step of a remediation job, run by its Celery task: act on the provider, poll, verify, move the state on.

An action is the "remediation" kind of ``portal.core.jobs`` (registered in ``clusters.remediation.tasks``): one
conditional UPDATE claims the action, a message from an older send claims nothing, and a killed worker's action is
sent again by the one sweep once its lease runs out. Before the provider is asked to act, the node ids are written
as "submitting"; a step that finds them there (its predecessor died mid-call) looks at the nodes instead of asking
again, so a repeated delivery never reboots a node twice. Throttling is retried with a doubling countdown; every
other provider failure fails the action with its reason, kept for lead SAs and told to customers in the portal's
words.
"""
from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from clusters import provider_states
from clusters.choices import ClusterState, Orchestrator
from clusters.health.validation import headnode, slurm_names
from clusters.remediation import failure, journal, providers, texts, verification
from clusters.remediation.choices import ActionKind, ActionState, FaultOutcome, StepStatus
from clusters.remediation.models import RemediationAction, RemediationStep
from portal.core import provider_errors
from portal.core.aws import AwsError
from portal.core.jobs.runner import DONE, POLL, Runner
from portal.core.stored_text import Message, message
from portal.core.templatetags.portal_display import when

logger = logging.getLogger(__name__)
STEPPED = RemediationAction.CLAIMABLE  # approved, running, verifying: the states a worker steps


def countdown(action: RemediationAction) -> int:
    """Seconds to the next step: the poll interval, doubled for each throttled call in a row."""
    return min(settings.REMEDIATION_POLL_SECONDS * (2 ** action.aws_errors), 300)


listed = texts.listed


def add_step(action, name: str, summary: Message, detail: str = "", status: str = StepStatus.OK) -> None:
    """A step, its summary stored as a code with parameters (``texts``) and its English beside them."""
    RemediationStep.objects.create(action=action, name=name, summary=summary.english()[:300], detail=detail,
                                   status=status, code=summary.code, params=summary.params)
    journal.record(action, summary, step=True)


class RemediationRunner(Runner):
    """An action's step on ``portal.core.jobs.runner`` (claim, AWS-error budget, fail or release): a throttled call is
    noted as a waiting step, and the progress the step made is written with the release."""

    model = RemediationAction
    select_related = ("cluster__organization",)
    failures = (providers.Failed,)
    kept = ("polls", "aws_errors", "progress", "provider_nodes")

    def advance(self, action: RemediationAction) -> str:
        return _advance(action)

    def fail(self, action: RemediationAction, error: str, reason: str) -> str:
        return _fail(action, error, reason)

    def retrying(self, action: RemediationAction, exc: AwsError) -> None:
        add_step(action, "retry", message(texts.RETRY, note=provider_errors.aws_retry_note(exc),
                                          seconds=countdown(action), count=action.aws_errors),
                 str(exc), StepStatus.WAITING)

    def answer(self, action: RemediationAction, outcome: str) -> tuple[str, int]:
        return outcome, countdown(action)

    def refused(self) -> tuple[str, int]:
        return DONE, 0


RUNNER = RemediationRunner()


def step(action_id: int, attempt: int | None = None) -> tuple[str, int]:
    """Advance the action once; (POLL, seconds) asks the caller to come back after that countdown."""
    return RUNNER.step(action_id, attempt)


def _fail(action: RemediationAction, error: str, reason: str) -> str:
    """Fail the action: its faults go back to open (what still "remediating" they were), and a node the provider
    never acted on is marked untouched, which keeps it out of the cool-down (``rules.refusal``)."""
    with transaction.atomic():
        action.refresh_from_db(fields=["state"])
        if action.state not in STEPPED:
            return DONE
        if failure.untouched(action):
            action.progress["untouched"] = True
        action.transition(ActionState.FAILED, error=error[:5000], failure_reason=reason, progress=action.progress)
        action.fault_rows.filter(outcome=FaultOutcome.REMEDIATING).update(outcome=FaultOutcome.OPEN,
                                                                         settled_at=timezone.now())
        words = failure.told(action)
        said = message(texts.STEP_FAILED, reason=reason)
        RemediationStep.objects.create(action=action, name="failed", status=StepStatus.FAILED,
                                       summary=said.english()[:300], detail=error, code=said.code, params=said.params)
        journal.record(action, message(texts.FAILED), words, severity="high")
        if reason == "fault_returned":
            verification.after_return(action)
    return DONE


def _advance(action: RemediationAction) -> str:
    cluster = action.cluster
    if action.deadline is not None and timezone.now() > action.deadline:
        return _fail(action, f"Past the deadline ({when(action.deadline, True)}).",
                     "not_verified" if action.state == ActionState.VERIFYING else "deadline")
    if action.state in (ActionState.APPROVED, ActionState.RUNNING) and cluster.state != ClusterState.READY:
        return _fail(action, f"The cluster is {cluster.state}.", "cluster_deleting")
    if action.state == ActionState.APPROVED:
        with transaction.atomic():
            action.transition(ActionState.RUNNING, started_at=timezone.now(),
                              deadline=timezone.now() + timedelta(seconds=settings.REMEDIATION_EXECUTION_SECONDS))
            journal.record(action, message(texts.STARTED, kind=action.kind, nodes=list(action.nodes)))
        return POLL
    if action.state == ActionState.RUNNING:
        through_api = cluster.orchestrator == Orchestrator.HYPERPOD and action.kind != ActionKind.DRAIN
        executed = _hyperpod(action) if through_api else _slurm(action)  # a HyperPod drain is Slurm's (its agent)
        if not executed:
            return POLL
        with transaction.atomic():
            if action.kind in (ActionKind.DRAIN, ActionKind.CHECK):  # nothing a health report must confirm
                action.transition(ActionState.VERIFYING, executed_at=timezone.now())
                action.transition(ActionState.DONE)
                journal.record(action, message(texts.DRAINED) if action.kind == ActionKind.DRAIN
                               else message(texts.CHECKED))
                return DONE
            action.transition(ActionState.VERIFYING, executed_at=timezone.now(),
                              deadline=timezone.now() + timedelta(seconds=settings.REMEDIATION_VERIFY_SECONDS))
            journal.record(action, message(texts.BACK))
        return POLL
    verdict = verification.check(action)
    if verdict == verification.RETURNED:
        return _fail(action, "The fault was reported again after the action.", "fault_returned")
    if verdict == verification.CLEARED:
        with transaction.atomic():
            action.transition(ActionState.DONE)
            journal.record(action, message(texts.CLEARED))
        return DONE
    return POLL


def _hyperpod(action: RemediationAction) -> bool:
    provider = providers.HyperPod(action.cluster)
    progress = action.progress
    if not action.provider_nodes:
        action.provider_nodes = provider.locate(action.nodes)
        found = [message(texts.NODE_IS, host=host, node=node["id"]) for host, node in sorted(action.provider_nodes.items())]
        add_step(action, "locate", message(texts.LOCATED_HYPERPOD, found=found))
        return False
    ids = [action.provider_nodes[h]["id"] for h in action.nodes]
    if "submitted" not in progress:
        if "submitting" in progress and _acted(action, provider.statuses(action.provider_nodes)):
            progress["submitted"] = progress["submitting"]
            add_step(action, "adopt", message(texts.ADOPTED_HYPERPOD))
            return False
        progress["submitting"] = ids
        RemediationAction.objects.filter(pk=action.pk).update(progress=progress)  # before the call: see the docstring
        try:
            lines = provider.check([action.provider_nodes[h] for h in action.nodes]) \
                if action.kind == ActionKind.CHECK else provider.act(action.kind, ids)
        except (AwsError, providers.Failed):
            del progress["submitting"]  # the provider answered: it did not take the request
            progress["refused"] = True
            raise
        progress["submitted"] = ids
        progress.pop("refused", None)  # an earlier throttled attempt's
        progress["submitted_at"] = timezone.now().isoformat()
        add_step(action, "submit", message(texts.SUBMITTED_HYPERPOD, kind=action.kind, nodes=listed(action.nodes)),
                 "\n".join(lines))
        return False
    statuses = provider.statuses(action.provider_nodes)
    down = set(progress.get("seen_down", []))
    back = []
    for host, (status, instance) in statuses.items():
        meaning = provider_states.hyperpod_node(status)
        if meaning == provider_states.FAILED:
            raise providers.Failed(f"HyperPod reports {host} ({instance}) as {status}.",
                                   "check_failed" if action.kind == ActionKind.CHECK else "node_failed")
        if meaning == provider_states.GONE:
            raise providers.Failed(f"HyperPod reports {host} ({instance}) as {status}: it is leaving the cluster.",
                                   "node_not_found")
        if meaning != provider_states.UP:
            down.add(host)
        elif host in down and (action.kind != ActionKind.REPLACE or instance != action.provider_nodes[host]["id"]):
            back.append(host)
    progress["seen_down"] = sorted(down)
    if len(back) < len(action.nodes):
        return False
    if action.kind == ActionKind.CHECK:
        add_step(action, "checked", message(texts.CHECKS_PASSED, nodes=listed(sorted(back))))
    elif action.kind == ActionKind.REPLACE:
        progress["new_instances"] = {h: statuses[h][1] for h in back}
        add_step(action, "replaced", message(texts.REPLACED, nodes=listed(
            message(texts.NODE_IS_NOW, host=h, node=statuses[h][1]) for h in sorted(back))))
    else:
        add_step(action, "rebooted", message(texts.REBOOTED, nodes=listed(sorted(back))))
    return True


def _acted(action: RemediationAction, statuses: dict) -> bool:
    """Whether the provider took a request whose answer was lost: a node left Running, or has a new instance.
    A reboot that already came back looks untouched; it is not sent again (never twice beats at least once)."""
    if action.kind in (ActionKind.REBOOT, ActionKind.CHECK):
        return True
    return any(provider_states.hyperpod_node(status) != provider_states.UP or instance != action.provider_nodes[h]["id"]
               for h, (status, instance) in statuses.items())


def _locate_in_slurm(action: RemediationAction, provider) -> None:
    """Learn Slurm's names of the cluster's nodes from the head node (``slurm_names.COMMAND``) and map the
    action's hostnames to them: one step sends the listing, the next reads it."""
    progress = action.progress
    if "names_command" not in progress:
        progress["names_command"] = provider.send(headnode.listing())
        return
    status, stdout, stderr = provider.streams(progress["names_command"])
    if status in ("Pending", "InProgress", "Delayed"):
        return
    if status != "Success":
        raise providers.Failed(f"Listing Slurm's nodes ({slurm_names.COMMAND}) ended {status}: "
                               f"{(stderr or stdout).strip()[:2000]}", "command_failed")
    try:
        listing = slurm_names.parse(stdout)
    except ValueError as exc:
        raise providers.Failed(f"Slurm's node listing could not be read: {exc}", "command_failed") from exc
    slurm_names.store(action.cluster, listing)
    known = {host: name for host, (name, _address) in listing.items()}
    try:
        found = slurm_names.to_slurm(action.cluster, action.nodes, known)
    except slurm_names.Unknown as exc:
        raise providers.Failed(str(exc), "node_not_found") from exc
    action.provider_nodes = {host: {"id": name} for host, name in zip(action.nodes, found, strict=True)}
    add_step(action, "locate", message(texts.LOCATED_SLURM, found=listed(
        message(texts.NODE_IS, host=host, node=name) for host, name in zip(action.nodes, found, strict=True))))


def _slurm(action: RemediationAction) -> bool:
    provider = providers.slurm_for(action.cluster)
    progress = action.progress
    if not action.provider_nodes and "command_id" not in progress and "submitting" not in progress:
        _locate_in_slurm(action, provider)
        return False
    if "command_id" not in progress:
        if "submitting" in progress:
            add_step(action, "adopt", message(texts.ADOPTED_SLURM))
            progress["command_id"] = progress["submitting"]
            return False
        reason = action.reason.splitlines()[0] if action.reason else f"{action.kind} by the portal"
        command = providers.scontrol_work(action.kind, [action.provider_nodes[h]["id"] for h in action.nodes], reason)
        progress["submitting"] = "unknown"
        RemediationAction.objects.filter(pk=action.pk).update(progress=progress)
        try:
            progress["command_id"] = progress["submitting"] = provider.send(command)
            progress.pop("refused", None)  # an earlier throttled attempt's
        except (AwsError, providers.Failed):  # nothing was taken (HyperPod: the agent is not heard from)
            del progress["submitting"]  # the provider answered: it did not take the command
            progress["refused"] = True
            raise
        add_step(action, "submit", message(texts.SUBMITTED_SLURM, kind=action.kind, nodes=listed(action.nodes)),
                 command.line)
        return False
    if progress["command_id"] == "unknown":
        raise providers.Failed("The worker stopped while sending the command; its id is unknown.", "command_failed")
    status, output = provider.result(progress["command_id"])
    if provider_states.ssm_running(status):
        return False
    if status != "Success":
        progress["refused"] = status == "Failed"  # scontrol checks every name before it acts on any
        raise providers.Failed(f"SSM command {progress['command_id']} ended {status}: {output}", "command_failed")
    add_step(action, "command", message(texts.RAN), output)
    return True
