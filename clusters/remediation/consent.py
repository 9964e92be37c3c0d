"""An organization's consent to remediation is its customer engineers' to give: every write of the policy goes
through here.

A lead SA's save that narrows the policy (or changes nothing) takes effect at once. A save that gives the portal
more power over the organization's nodes (approval → lead SA → automatic, a fault kind added to the automatic list,
a higher node limit, a shorter cool-down) becomes a ``RemediationPolicyChange`` that waits for a customer engineer
of the organization, someone other than the proposer; approving it applies it and records both names on the
organization's timeline, shared with the customer. Saves and decisions take the organization's policy lock and
move a change by compare-and-set, so two approvals at once, or an approval racing a new proposal, make exactly one
change: the later save replaces (withdraws) the change it finds waiting, and an approval finds it withdrawn.
"""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from clusters.remediation import consent_texts as texts
from clusters.remediation.choices import CONSENT_ORDER, PolicyChangeState
from clusters.remediation.models import RemediationPolicy, RemediationPolicyChange
from portal.core import access, locks, timeline
from portal.core.choices import TimelineKind, Visibility
from portal.core.models import Membership
from portal.core.notifications import Event, notify
from portal.core.stored_text import Message, message

FIELDS = ("mode", "automatic_kinds", "max_nodes", "cooldown_hours")


class ChangeClosed(Exception):
    """A decision that cannot be made any more (the change was decided or replaced meanwhile)."""


def cooldown_floor() -> int:
    """The shortest cool-down a policy may set, in hours (``REMEDIATION_MIN_COOLDOWN_HOURS``)."""
    return max(0, settings.REMEDIATION_MIN_COOLDOWN_HOURS)


def values_of(policy) -> dict:
    return {"mode": policy.mode, "automatic_kinds": sorted(policy.automatic_kinds or []),
            "max_nodes": policy.max_nodes, "cooldown_hours": policy.cooldown_hours}


def current(organization_id: int) -> RemediationPolicy:
    """The organization's policy, or the default one (every action needs a customer's approval), unsaved."""
    return (RemediationPolicy.objects.filter(organization_id=organization_id).first()
            or RemediationPolicy(organization_id=organization_id))


def widening(before: dict, after: dict) -> list[str]:
    """What ``after`` gives the portal beyond ``before``, in English words (what the change's row keeps); empty for
    a change that narrows or keeps the policy."""
    return [said.english() for said in widening_messages(before, after)]


def widening_messages(before: dict, after: dict) -> list[Message]:
    """``widening`` as messages, which the timeline stores and shows in each reader's language."""
    found = []
    if CONSENT_ORDER.index(after["mode"]) > CONSENT_ORDER.index(before["mode"]):
        found.append(message(texts.WIDER_MODE, before=before["mode"], after=after["mode"]))
    added = sorted(set(after["automatic_kinds"]) - set(before["automatic_kinds"]))
    if added:
        found.append(message(texts.WIDER_KINDS, kinds=added))
    if after["max_nodes"] > before["max_nodes"]:
        found.append(message(texts.WIDER_NODES, before=before["max_nodes"], after=after["max_nodes"]))
    if after["cooldown_hours"] < before["cooldown_hours"]:
        found.append(message(texts.WIDER_COOLDOWN, before=before["cooldown_hours"], after=after["cooldown_hours"]))
    return found


def pending(organization_id: int) -> RemediationPolicyChange | None:
    return (RemediationPolicyChange.objects.filter(organization_id=organization_id, state=PolicyChangeState.PENDING)
            .select_related("proposed_by").first())


def may_decide(user, change: RemediationPolicyChange) -> bool:
    """Whether ``user`` may approve or decline ``change`` now (it waits, and they are one who may)."""
    return change.state == PolicyChangeState.PENDING and _consents(user, change)


def _consents(user, change: RemediationPolicyChange) -> bool:
    """A customer engineer of the organization (a membership: staff's reach is not consent), not the proposer."""
    return (access.can(user, access.APPROVE, change) and change.proposed_by_id != getattr(user, "pk", None)
            and Membership.objects.filter(user=user, organization_id=change.organization_id,
                                          role=access.CUSTOMER).exists())


def _lock(organization_id: int) -> None:
    locks.hold("remediation-policy", organization_id)


def save(organization, values: dict, actor) -> tuple[RemediationPolicy, RemediationPolicyChange | None]:
    """A lead SA's save of the policy: applied at once when it widens nothing, else a change waiting for a customer
    engineer (answered second; the policy is then unchanged). Either way a change already waiting is replaced."""
    if not access.can_in_organization(actor, access.CHANGE, RemediationPolicy, organization.pk):
        raise PermissionDenied(gettext("Only the organization's lead SAs set its remediation policy."))
    values = {**values, "automatic_kinds": sorted(values.get("automatic_kinds") or [])}
    if values["cooldown_hours"] < cooldown_floor():
        raise ValueError(gettext("At least %(hours)s hours.") % {"hours": cooldown_floor()})
    with transaction.atomic():
        _lock(organization.pk)
        policy = current(organization.pk)
        before = values_of(policy)
        RemediationPolicyChange.objects.filter(organization=organization, state=PolicyChangeState.PENDING).update(
            state=PolicyChangeState.WITHDRAWN, decided_at=timezone.now())
        wider = widening_messages(before, values)
        if not wider:
            if values != before:
                _apply(policy, values, actor)
                _record(organization.pk, message(texts.NARROWED, who=_name(actor)), _describe(before, values), actor)
            return policy, None
        change = RemediationPolicyChange.objects.create(organization=organization, before=before,
                                                        widens=[said.english() for said in wider],
                                                        proposed_by=actor, **values)
        _record(organization.pk, message(texts.PROPOSED, who=_name(actor)), message(texts.WIDENS, items=wider),
                actor, source=change, tell=True)
        return policy, change


def approve(change: RemediationPolicyChange, actor) -> RemediationPolicy:
    """A customer engineer consents: the change takes effect, with both names on the timeline."""
    if not _consents(actor, change):
        raise PermissionDenied(_refusal())
    with transaction.atomic():
        _lock(change.organization_id)
        now = timezone.now()
        moved = RemediationPolicyChange.objects.filter(pk=change.pk, state=PolicyChangeState.PENDING).update(
            state=PolicyChangeState.APPROVED, decided_by=actor, decided_at=now)
        if not moved:
            raise ChangeClosed(_gone(change))
        change.refresh_from_db()
        policy = current(change.organization_id)
        values = {name: getattr(change, name) for name in FIELDS}
        policy.agreed_with = _name(actor)[:200]
        _apply(policy, values, change.proposed_by)
        _record(change.organization_id, message(texts.CHANGED, proposer=_name(change.proposed_by), who=_name(actor)),
                _describe(change.before, values), actor, source=change, tell=True)
    return policy


def decline(change: RemediationPolicyChange, actor, why: str = "") -> RemediationPolicyChange:
    if not _consents(actor, change):
        raise PermissionDenied(_refusal())
    with transaction.atomic():
        _lock(change.organization_id)
        moved = RemediationPolicyChange.objects.filter(pk=change.pk, state=PolicyChangeState.PENDING).update(
            state=PolicyChangeState.DECLINED, decided_by=actor, decided_at=timezone.now(), why=why[:250])
        if not moved:
            raise ChangeClosed(_gone(change))
        change.refresh_from_db()
        _record(change.organization_id, message(texts.DECLINED, proposer=_name(change.proposed_by), who=_name(actor)),
                why, actor, source=change, tell=True)
    return change


def _apply(policy: RemediationPolicy, values: dict, by) -> None:
    for name, value in values.items():
        setattr(policy, name, value)
    policy.updated_by = by if getattr(by, "is_authenticated", False) else None
    policy.save()


def _describe(before: dict, after: dict) -> Message:
    return message(texts.CHANGES, items=[message(texts.FIELD_CHANGED, field=name, before=_shown(before.get(name)),
                                                 after=_shown(after[name]))
                                         for name in FIELDS if before.get(name) != after[name]])


def _shown(value) -> str:
    """A policy's value as the change's description writes it (a list of kinds as it always did)."""
    return str(value)


def _record(organization_id: int, title: Message, body: Message | str, actor, *, source=None,
            tell: bool = False) -> None:
    """On the organization's timeline, shared with the customer, in each reader's language; a change to decide (or
    decided) is told to its notification channels too."""
    timeline.record(organization_id, TimelineKind.FAULT, title, source=source, body=body,
                    visibility=Visibility.SHARED, actor=actor, tags=["remediation", "consent"])
    if tell:
        title = title.english()
        body = body.english() if isinstance(body, Message) else body
        notify(Event(kind="remediation.consent", title=title, organization_id=organization_id, body=body[:500],
                     url=source.get_absolute_url() if source is not None else "", visibility=Visibility.SHARED))


def _refusal() -> str:
    return gettext("Only a customer engineer of the organization, other than the lead SA who proposed it, approves "
                   "or declines a change of its remediation consent.")


def _gone(change: RemediationPolicyChange) -> str:
    change.refresh_from_db(fields=["state"])
    return gettext("This change of the remediation consent is %(state)s: there is nothing to decide.") % {
        "state": change.get_state_display().lower()}


def _name(user) -> str:
    if not getattr(user, "is_authenticated", False):
        return "the portal"
    return getattr(user, "display_name", "") or user.get_username()
