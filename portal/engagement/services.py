"""Escalations: raising one, and moving it through requested → accepted → answered → closed.

Views, the API and the legacy "escalate" action all come here. Every state change is a compare-and-set on
the row's state, so the check (this transition is allowed from where the escalation stands) and the write
happen in one statement; a concurrent change makes the second one fail with :class:`TransitionError`.
Everything recorded about an escalation is internal: customers never see it.
"""
from __future__ import annotations

import logging

from django.utils import timezone, translation
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from portal.core import access, notifications, timeline
from portal.core.choices import MembershipRole, TimelineKind, Visibility
from portal.core.models import EscalationTarget, User
from portal.core.notifications import Event, notify
from portal.core.stored_text import Message, message
from portal.engagement import timeline_texts as texts
from portal.engagement.choices import TRANSITIONS, EscalationState
from portal.engagement.models import Escalation, SlackChannelLink
from workloads.interactions.choices import HistoryKind
from workloads.interactions.models import Interaction, InteractionComment

logger = logging.getLogger(__name__)


class TransitionError(Exception):
    """A transition that is unknown, not allowed from the current state, or not allowed to this user."""


STAMPS = {
    EscalationState.ACCEPTED: "accepted_at",
    EscalationState.ANSWERED: "answered_at",
    EscalationState.CLOSED: "closed_at",
}


def may_answer(user, escalation: Escalation) -> bool:
    """Specialists of the escalation's team (and staff) work on it."""
    return access.is_staff(user) or escalation.target_id in access.teams(user)


def may_own(user, escalation: Escalation) -> bool:
    """Lead SAs of the interaction's organization (and staff) raise, follow up and close."""
    return access.is_staff(user) or escalation.interaction.organization_id in access.roles_of(user).get(
        access.LEAD_SA, frozenset())


def allowed_by_role(user, escalation: Escalation, name: str) -> bool:
    """Whether the user's role allows transition ``name`` at all (regardless of the current state)."""
    who = TRANSITIONS[name][2]
    return (may_answer if who == "team" else may_own)(user, escalation)


def allowed_transitions(user, escalation: Escalation) -> list[str]:
    names = []
    for name, (sources, _target, who) in TRANSITIONS.items():
        if escalation.state in sources and (may_answer if who == "team" else may_own)(user, escalation):
            names.append(name)
    return names


def _history(interaction, actor, title: Message, body: str = "", state: str = "") -> None:
    """``state`` is the escalation's "team · State", its state's label kept in English (shown in the reader's)."""
    InteractionComment.objects.create(
        interaction=interaction, kind=HistoryKind.ESCALATION, author=actor if _signed_in(actor) else None,
        body=body, new_value=state[:200], internal=True,
    )
    timeline.record(interaction.organization_id, TimelineKind.INTERACTION, title, source=interaction,
                    visibility=Visibility.INTERNAL, severity=interaction.severity, actor=_user(actor))


def _user(user):
    return user if _signed_in(user) else None


def _english(label) -> str:
    with translation.override("en"):
        return str(label)


def _signed_in(user) -> bool:
    return bool(user is not None and getattr(user, "is_authenticated", False))


def raise_escalation(interaction, actor, target: EscalationTarget, question: str) -> Escalation:
    """Call inside a transaction, after checking the actor may change the interaction."""
    question = question.strip()
    if not question:
        raise ValueError("An escalation needs a question.")
    now = timezone.now()
    escalation = Escalation.objects.create(
        interaction=interaction, target=target, question=question, requested_by=_user(actor),
        requested_at=now, state_changed_at=now,
    )
    updates = {"last_activity_at": now}
    if interaction.escalated_at is None:
        updates["escalated_at"] = now
    Interaction.objects.filter(pk=interaction.pk).update(**updates)
    for name, value in updates.items():
        setattr(interaction, name, value)
    _history(interaction, actor, message(texts.ESCALATED, target=str(target), summary=interaction.summary), question,
             f"{target} · {_english(EscalationState(escalation.state).label)}")
    notify(Event(
        kind="interaction.escalated", title=f"Escalated to {target} at {interaction.organization}: {interaction.summary}",
        organization_id=interaction.organization_id, severity=interaction.severity, body=question[:500],
        url=escalation.get_absolute_url(), visibility=Visibility.INTERNAL,
        extra={"interaction": interaction.pk, "escalation": escalation.pk, "target": target.slug},
    ))
    return escalation


# The transitions as the refusal names them ("it cannot follow up").
TRANSITION_WORDS = {"accept": _("accept"), "release": _("release"), "answer": _("answer"), "follow_up": _("follow up"),
                    "close": _("close")}


def transition(escalation: Escalation, actor, name: str, answer: str = "") -> Escalation:
    """Take transition ``name`` (see ``choices.TRANSITIONS``); raises TransitionError when it may not happen."""
    if name not in TRANSITIONS:
        raise TransitionError(gettext("Unknown transition “%(name)s”.") % {"name": name})
    sources, target_state, who = TRANSITIONS[name]
    if not allowed_by_role(actor, escalation, name):
        raise TransitionError(gettext("Only the escalation's team may do this.") if who == "team"
                              else gettext("Only a lead SA of the organization may do this."))
    answer = (answer or "").strip()
    if name == "answer" and not answer:
        raise TransitionError(gettext("An answer cannot be empty."))
    now = timezone.now()
    updates: dict = {"state": target_state, "state_changed_at": now}
    if target_state in STAMPS:
        updates[STAMPS[target_state]] = now
    if name == "accept" and escalation.assignee_id is None:
        updates["assignee"] = actor
    if name == "release":
        updates["assignee"] = None
    if name == "answer":
        updates["answer"] = answer
        if escalation.assignee_id is None:
            updates["assignee"] = actor
    changed = Escalation.objects.filter(pk=escalation.pk, state__in=sources).update(**updates)
    if changed != 1:
        escalation.refresh_from_db(fields=["state"])
        raise TransitionError(gettext("The escalation is %(state)s: it cannot %(transition)s.")
                              % {"state": escalation.get_state_display().lower(),
                                 "transition": TRANSITION_WORDS.get(name, name.replace("_", " "))})
    escalation.refresh_from_db()
    _history(escalation.interaction, actor, message(texts.ESCALATION_MOVED, target=str(escalation.target),
                                                    state=escalation.state, summary=escalation.interaction.summary),
             answer if name == "answer" else "", f"{escalation.target} · {_english(EscalationState(escalation.state).label)}")
    if name == "answer":
        _tell_answered(escalation, actor)
    return escalation


def _lead_recipients(escalation: Escalation, actor) -> list:
    """Who raised the escalation; when nobody did (or they left, or have no address), the organization's lead
    SAs. Whoever answered is never told of their own answer."""
    actor_id = getattr(actor, "pk", None)
    requester = escalation.requested_by
    if requester is not None and requester.is_active and requester.email and requester.pk != actor_id:
        return [requester]
    leads = User.objects.filter(
        memberships__organization_id=escalation.interaction.organization_id,
        memberships__role=MembershipRole.LEAD_SA, is_active=True,
    ).exclude(email="").exclude(pk=actor_id).distinct().order_by("pk")
    return list(leads)


def _tell_answered(escalation: Escalation, actor) -> None:
    """An answer is what the lead SA waits for: it goes to the channels that take internal events, as
    "escalated" does, and by e-mail to the lead SA who asked (the "watcher" channel's one-person e-mail)."""
    interaction = escalation.interaction
    event = Event(
        kind="interaction.escalation_answered",
        title=f"{escalation.target} answered at {interaction.organization}: {interaction.summary}"[:300],
        organization_id=interaction.organization_id, severity=interaction.severity,
        body=escalation.answer[:1500], url=escalation.get_absolute_url(), visibility=Visibility.INTERNAL,
        extra={"interaction": interaction.pk, "escalation": escalation.pk, "target": escalation.target.slug},
    )
    notify(event)
    try:
        for lead in _lead_recipients(escalation, actor):
            notifications.queue(event, "watcher", recipient=lead.email, watcher=lead.pk)
    except Exception:  # noqa: BLE001 - telling the lead SA must never undo the answer
        logger.exception("could not queue the answer e-mail for escalation %s", escalation.pk)


def open_by_target(user) -> list[dict]:
    """Open escalations the user may see, grouped by target, oldest first within each (the weekly review)."""
    rows = list(Escalation.objects.restrict(user).open().select_related(
        "target", "assignee", "interaction__organization").order_by("target__name", "requested_at", "id"))
    groups: dict[int, dict] = {}
    for row in rows:
        group = groups.setdefault(row.target_id, {"target": row.target, "rows": [], "oldest": None})
        group["rows"].append(row)
        group["oldest"] = group["oldest"] or row.age
    return list(groups.values())


def escalations_of(user, interaction):
    """The escalations of ``interaction`` that ``user`` sees, for the interaction's page."""
    return Escalation.objects.restrict(user).filter(interaction=interaction).select_related("target", "assignee")


def customer_channels(organization_ids):
    """The organizations' customer-facing Slack channel links, where their customers may ask."""
    return (SlackChannelLink.objects.filter(organization_id__in=organization_ids, customer_facing=True)
            .select_related("organization").order_by("name"))
