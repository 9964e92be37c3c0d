"""Every write of a remediation goes through here: propose, approve, decline, cancel, and dispatch to the worker.

A proposal takes the cluster's remediation lock, checks the guardrails and writes the action and its node rows
under it, so two lead SAs proposing the same node at once make one action; the same request repeated (its
idempotency key, or the same nodes and kind while the first is open) lands on the first action.
"""
from __future__ import annotations

import uuid
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone, translation
from django.utils.translation import gettext

from clusters.choices import ClusterState
from clusters.health.models import GpuFault
from clusters.models import Cluster
from clusters.remediation import journal, refusals, rules, texts
from clusters.remediation.choices import AUTOMATIC_RULES, ActionKind, ActionState, ConsentMode
from clusters.remediation.models import RemediationAction, RemediationFault, RemediationNode
from portal.core import access, locks, timeline
from portal.core.choices import TimelineKind, Visibility
from portal.core.jobs import IllegalTransition, registry
from portal.core.signals import Hook
from portal.core.stored_text import Message, message
from workloads.interactions import services as interactions

# The actions' kind of portal.core.jobs: registered with its task in clusters.remediation.tasks (which imports this
# module) and provided here by the remediation app's ready().
KIND = Hook("remediation: the actions' kind of portal.core.jobs", provider="remediation")


class RequestRefused(Exception):
    """A request the user may not make (not a guardrail: those make a refused action)."""


def _lock(cluster) -> None:
    locks.hold("remediation", cluster.pk)


def _proposal(cluster) -> RemediationAction:
    """The action a proposal on ``cluster`` would write, unsaved: what the access policy judges a new one by."""
    return RemediationAction(organization_id=cluster.organization_id, cluster=cluster)


def may_propose(user, cluster) -> bool:
    """Lead SAs of the cluster's organization (and staff), on a cluster whose cycle is not archived."""
    return access.can_create(user, access.CHANGE, _proposal(cluster))


def refuse_proposal(user, cluster) -> None:
    """Raise PermissionDenied with the reason (the archived cycle's, or the role's) unless ``user`` may propose."""
    access.refuse_create(user, access.CHANGE, _proposal(cluster),
                         gettext("Only the organization's lead SAs (and staff) propose remediation."))


def propose(cluster, *, kind: str, nodes: list[str], actor=None, faults=(), key: str = "", reason: str = "",
            automatic: bool = False) -> tuple[RemediationAction, bool]:
    """Propose ``kind`` on ``nodes`` of ``cluster``; returns (action, created). A guardrail that refuses makes a
    refused action saying which rule refused it; consent decides whether it waits for a customer's approval."""
    if actor is not None:
        refuse_proposal(actor, cluster)
    nodes = sorted({n.strip() for n in nodes if n and n.strip()})
    faults = list(faults)
    if not faults and nodes and kind != ActionKind.CHECK:  # a check answers no fault: they stay open, proposable
        faults = list(GpuFault.objects.filter(cluster=cluster, hostname__in=nodes, cleared_at__isnull=True))
    key = (key or uuid.uuid4().hex)[:128]
    try:
        with transaction.atomic():
            _lock(cluster)
            cluster.refresh_from_db(fields=["state", "cycle"])
            # Under the lock the archive takes too (``close_archived``): no proposal, automatic or not, lands on
            # the cluster of a cycle archived meanwhile.
            access.refuse_archived(_proposal(cluster))
            earlier = RemediationAction.objects.filter(organization_id=cluster.organization_id, key=key).first()
            if earlier is not None:
                return earlier, False
            same = _open_same(cluster, kind, nodes)
            if same is not None:
                return same, False
            policy = rules.policy_for(cluster.organization_id)
            refused = rules.refusal(cluster, kind, nodes, policy)
            if refused:
                again = _refused_lately(cluster, kind, nodes, refused.rule)
                if again is not None:  # told once: a repeat (or a racing twin) is counted, not recorded again
                    RemediationAction.objects.filter(pk=again.pk).update(repeats=F("repeats") + 1)
                    again.refresh_from_db(fields=["repeats"])
                    return again, False
            first_seen = min((f.first_seen for f in faults), default=None)
            action = RemediationAction.objects.create(
                organization_id=cluster.organization_id, cluster=cluster, kind=kind, nodes=nodes, key=key,
                reason=reason[:2000], automatic=automatic, proposed_by=_user(actor), fault_seen_at=first_seen,
                state=ActionState.REFUSED if refused else ActionState.PROPOSED,
                refused_rule=refused.rule if refused else "", refusal=refused.text if refused else "",
                progress=refusals.params(refused) if refused else {}, finished_at=timezone.now() if refused else None,
            )
            action.cluster = cluster
            if refused:
                journal.record(action, message(texts.REFUSED, kind=kind, nodes=list(nodes) or message(texts.NO_NODE)),
                               refused.text, actor=actor, severity="low")
                return action, True
            RemediationNode.objects.bulk_create(RemediationNode(action=action, cluster=cluster, hostname=n)
                                                for n in nodes)
            RemediationFault.objects.bulk_create(RemediationFault(action=action, fault=f) for f in faults)
            with translation.override("en"):  # the journal keeps stored text in English (pages translate labels)
                what, takes = (str(text) for text in rules.describe(cluster.orchestrator, kind))
            proposed = (message(texts.PROPOSED_AUTOMATICALLY, kind=kind, nodes=list(nodes)) if automatic
                        else message(texts.PROPOSED_BY, kind=kind, nodes=list(nodes), person=_name(actor)))
            journal.record(action, proposed,
                           f"{reason}\n\n{what} It takes {takes}.".strip(), actor=actor)
            if automatic or policy.mode != ConsentMode.APPROVAL:
                _approve(action, actor, message(texts.APPROVED_BY_POLICY))
            return action, True
    except IntegrityError:
        # The node rows' constraint caught a race the lock did not (another database session without it).
        same = _open_same(cluster, kind, nodes)
        if same is None:
            raise
        return same, False


def _refused_lately(cluster, kind: str, nodes: list[str], rule: str) -> RemediationAction | None:
    """The action refused by ``rule`` for the same nodes and kind on ``cluster`` within
    ``REMEDIATION_REFUSAL_WINDOW_SECONDS``: one refused record (and one timeline entry) per node and reason is
    enough. Called under the cluster's remediation lock, so racing proposals find the first one's."""
    since = timezone.now() - timedelta(seconds=settings.REMEDIATION_REFUSAL_WINDOW_SECONDS)
    return (RemediationAction.objects.filter(cluster=cluster, kind=kind, nodes=nodes, state=ActionState.REFUSED,
                                             refused_rule=rule, proposed_at__gte=since)
            .order_by("-proposed_at", "-pk").first())


def _open_same(cluster, kind: str, nodes: list[str]) -> RemediationAction | None:
    ids = set(RemediationNode.objects.filter(cluster=cluster, hostname__in=nodes, active=True)
              .values_list("action_id", flat=True))
    if len(ids) != 1:
        return None
    action = RemediationAction.objects.get(pk=ids.pop())
    return action if action.kind == kind and sorted(action.nodes) == nodes else None


def may_approve(user, action: RemediationAction) -> bool:
    """A customer engineer of the action's organization (or staff): consent is the customer's to give."""
    return access.can(user, access.APPROVE, action)


def approve(action: RemediationAction, actor) -> RemediationAction:
    if not may_approve(actor, action):
        raise PermissionDenied(gettext("Only a customer engineer of the organization approves its remediation."))
    with transaction.atomic():
        _lock(action.cluster)
        action.refresh_from_db()
        try:
            _approve(action, actor, message(texts.APPROVED_BY, person=_name(actor)))
        except IllegalTransition as exc:
            raise RequestRefused(gettext("This action is %(state)s; it cannot be approved.")
                          % {"state": action.get_state_display().lower()}) from exc
    return action


def _approve(action: RemediationAction, actor, how: Message) -> None:
    action.transition(ActionState.APPROVED, approved_by=_user(actor), approved_at=timezone.now())
    journal.record(action, how, actor=actor)
    dispatch_on_commit(action)


def decline(action: RemediationAction, actor, why: str = "") -> RemediationAction:
    if not may_approve(actor, action):
        raise PermissionDenied(gettext("Only a customer engineer of the organization declines its remediation."))
    with transaction.atomic():
        action.refresh_from_db()
        try:
            action.transition(ActionState.REFUSED, refused_rule="declined",
                              refusal=f"Refused: {rules.RULE_WORDS['declined']}{f' ({why})' if why else ''}."[:300],
                              progress={**(action.progress or {}), "refusal": {"rule": "declined", "why": why[:250]}})
        except IllegalTransition as exc:
            raise RequestRefused(gettext("This action is %(state)s; it cannot be declined.")
                          % {"state": action.get_state_display().lower()}) from exc
        journal.record(action, message(texts.DECLINED_BY, person=_name(actor)), why, actor=actor)
    return action


def cancel(action: RemediationAction, actor) -> RemediationAction:
    if not access.can(actor, access.CHANGE, action):
        raise PermissionDenied(gettext("Only the organization's lead SAs cancel its remediation."))
    with transaction.atomic():
        action.refresh_from_db()
        try:
            action.transition(ActionState.CANCELLED)
        except IllegalTransition as exc:
            raise RequestRefused(gettext("This action is %(state)s; it cannot be cancelled.")
                          % {"state": action.get_state_display().lower()}) from exc
        journal.record(action, message(texts.CANCELLED_BY, person=_name(actor)), actor=actor)
    return action


def dispatch(action: RemediationAction) -> bool:
    """Send the action's job now (the "remediation" kind of ``portal.core.jobs``), numbered so a resend ends an older
    chain of polls; the sweep retries a miss."""
    return registry.dispatch(KIND.get(), action)


def dispatch_on_commit(action: RemediationAction) -> None:
    transaction.on_commit(lambda: dispatch(action))


def open_support_case(action: RemediationAction, actor) -> bool:
    """Open an AWS Support case with the escalation's evidence, through the organization's role (the interactions'
    support sync does it: ``CreateCase``, retried when throttled, a refusal kept on the interaction). Lead SAs and
    staff only; once per escalation (False when the interaction has its case already)."""
    if not access.can(actor, access.CHANGE, action):
        raise PermissionDenied(gettext("Only the organization's lead SAs (and staff) open an AWS Support case."))
    with transaction.atomic():
        action = RemediationAction.objects.select_related("cluster", "escalation__interaction").get(pk=action.pk)
        if action.escalation is None:
            raise RequestRefused("This action was not escalated: there is no evidence to open a case with.")
        interaction = action.escalation.interaction
        subject = f"Repeated GPU fault on {', '.join(action.nodes)} of {action.cluster.name} " \
                  f"({action.cluster.instance_type}, {action.cluster.region})"
        # The escalation's question is the evidence (verification.evidence), as the EC2 team got it.
        asked = interactions.request_support_case(interaction, subject=subject, body=action.escalation.question)
        if asked:
            timeline.record(action.organization_id, TimelineKind.FAULT,
                            f"Remediation {action.pk} on {action.cluster.name}: AWS Support case requested",
                            source=action, body=f"By {_name(actor)}, with the escalation's evidence.",
                            visibility=Visibility.INTERNAL, actor=actor, tags=["remediation", "support"])
    return asked


def close_archived(cycle, actor=None) -> int:
    """Close the open actions that have not started on the clusters ``cycle`` keeps as it is archived (a leaving
    organization's, or clusters that ended): nobody may approve, decline or cancel a row of an archived cycle, so an
    action left waiting would hold its nodes and the cluster's slots for good, and the worker must not start one
    after the archive. Running and verifying actions are mid-command on the nodes: they finish on their own (their
    deadline bounds them). Inside the archiving transaction, under each cluster's remediation lock, so a proposal
    racing the archive either lands first (and is closed here) or finds the cycle archived."""
    cluster_ids = list(Cluster.objects.filter(cycle=cycle).exclude(state=ClusterState.DELETED)
                       .order_by("pk").values_list("pk", flat=True))
    for pk in cluster_ids:
        locks.hold("remediation", pk)
    closed = 0
    for action in (RemediationAction.objects.filter(cluster_id__in=cluster_ids,
                                                    state__in=(ActionState.PROPOSED, ActionState.APPROVED))
                   .select_related("cluster")):
        action.transition(ActionState.CANCELLED, refused_rule="cycle_archived",
                          refusal=f"Cancelled: {rules.RULE_WORDS['cycle_archived']} ({cycle.name}).",
                          progress={**(action.progress or {}), "refusal": {"rule": "cycle_archived",
                                                                           "cycle": cycle.name}})
        journal.record(action, message(texts.CANCELLED_ARCHIVED, cycle=cycle.name), actor=actor)
        closed += 1
    return closed


def on_cycle_archived(sender, cycle, actor=None, **kwargs) -> None:
    close_archived(cycle, actor)


def propose_automatic(limit: int = 50) -> int:
    """Open faults of organizations whose policy names their kind: propose (and so start) the action. Each fault is
    proposed once (its key), and the guardrails still apply: a busy node or a full cluster refuses it."""
    made = 0
    faults = (access.not_archived(GpuFault.objects.filter(
        cleared_at__isnull=True, cluster__state="ready", remediations__isnull=True,
        cluster__organization__remediation_policy__mode=ConsentMode.AUTOMATIC))
        .select_related("cluster__organization__remediation_policy").order_by("first_seen")[:limit])
    for fault in faults:
        rule = rules.automatic_rule(fault)
        if not rule or rule not in fault.cluster.organization.remediation_policy.automatic_kinds:
            continue
        kind = rules.automatic_kind(fault)
        if kind not in rules.KINDS_BY_ORCHESTRATOR.get(fault.cluster.orchestrator, ()):
            continue
        try:
            _action, created = propose(
                fault.cluster, kind=kind, nodes=[fault.hostname], faults=[fault], key=f"auto-fault-{fault.pk}",
                automatic=True, reason=f"{_english(AUTOMATIC_RULES[rule][0])} on {fault.hostname}: remediated automatically "
                                       "under the organization's consent policy.")
        except PermissionDenied:  # its cycle was archived since the query: nothing to do there any more
            continue
        made += created
    return made



def _english(label) -> str:
    """A label as the stored English text writes it, whatever language is active."""
    with translation.override("en"):
        return str(label)


def _user(user):
    return user if getattr(user, "is_authenticated", False) else None


def _name(user) -> str:
    if not getattr(user, "is_authenticated", False):
        return "the portal"
    return getattr(user, "display_name", "") or user.get_username()


