"""What happens when an interaction is created or changed: its own history, the organization's
timeline, and notifications. Views, the API and the AWS Support sync all go through here, so the
three never disagree."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Count, Min, Q
from django.utils import timezone

from portal.core import access, jobs, timeline
from portal.core import escalation_targets as targets
from portal.core.choices import OPEN_STATUSES, InteractionStatus, TimelineKind
from portal.core.models import EscalationTarget
from portal.core.notifications import Event, notify
from portal.core.signals import Hook
from portal.core.stored_text import Message, message
from workloads.interactions import hooks, signals, watchers
from workloads.interactions import timeline_texts as texts
from workloads.interactions.choices import HistoryKind, InteractionKind
from workloads.interactions.models import Interaction, InteractionComment, SupportCaseRequest

TRACKED = ("status", "owner_id", "severity", "visibility")
OPEN_CASE_TASK = "interactions.support.open_case"  # messages queued before case requests were rows
OPEN_REQUESTED_CASE_TASK = "interactions.support.open_requested_case"
# The task that opens a requested case: defined in the tasks module, which imports this one, and provided here by
# the interactions app's ready().
OPEN_REQUESTED_CASE = Hook("interactions: the task that opens a requested support case", provider="interactions")


def snapshot(interaction: Interaction) -> dict:
    return {name: getattr(interaction, name) for name in TRACKED}


def _is_responder(user, interaction: Interaction) -> bool:
    """A first response comes from the program's side (lead SA, PM, staff), not the customer."""
    return bool(user and getattr(user, "is_authenticated", False) and access.sees_internal(user, interaction.organization_id))


def _timeline(interaction: Interaction, title: Message, actor, body: str = "") -> None:
    timeline.record(
        interaction.organization_id, TimelineKind.INTERACTION, title, source=interaction, body=body,
        visibility=interaction.visibility, severity=interaction.severity,
        tags=[t.slug for t in interaction.tags.all()], actor=actor,
    )


def _event(interaction: Interaction, kind: str, title: str, body: str = "") -> Event:
    return Event(
        kind=kind, title=title, organization_id=interaction.organization_id, severity=interaction.severity,
        body=body, url=interaction.get_absolute_url(), visibility=interaction.visibility,
        extra={"interaction": interaction.pk, "status": interaction.status},
    )


def created(interaction: Interaction, actor) -> None:
    """Call inside the transaction that created ``interaction`` (after its tags are saved)."""
    InteractionComment.objects.create(
        interaction=interaction, kind=HistoryKind.CREATED, author=_user(actor),
        new_value=texts.english_label(InteractionStatus(interaction.status).label), internal=False,
    )
    if interaction.status == InteractionStatus.RESOLVED and interaction.resolved_at is None:
        Interaction.objects.filter(pk=interaction.pk).update(resolved_at=interaction.occurred_at)
        signals.written(interaction)
    _timeline(interaction, message(texts.LOGGED, kind=interaction.kind, summary=interaction.summary), actor)
    if interaction.severity in ("high", "critical"):
        notify(_event(interaction, "interaction.created",
                      f"New {interaction.severity} interaction at {interaction.organization}: {interaction.summary}",
                      interaction.body[:500]))


def changed(interaction: Interaction, before: dict, actor) -> list[InteractionComment]:
    """Record what changed since ``before`` (from :func:`snapshot`); call inside the saving transaction."""
    entries = []
    now = timezone.now()
    updates: dict = {"last_activity_at": now}
    if before["status"] != interaction.status:
        entries.append(InteractionComment(
            interaction=interaction, kind=HistoryKind.STATUS, author=_user(actor),
            old_value=texts.english_label(InteractionStatus(before["status"]).label),
            new_value=texts.english_label(InteractionStatus(interaction.status).label),
        ))
        if interaction.status == InteractionStatus.RESOLVED:
            updates["resolved_at"] = now
        elif before["status"] == InteractionStatus.RESOLVED:
            updates["resolved_at"] = None
        if interaction.first_response_at is None and _is_responder(actor, interaction):
            updates["first_response_at"] = now
        _timeline(interaction, message(texts.STATUS_CHANGED, summary=interaction.summary, before=before["status"],
                                       after=interaction.status), actor)
        if interaction.kind == InteractionKind.SUPPORT_CASE:
            notify(_event(interaction, "interaction.status",
                          f"Support case at {interaction.organization} is now {interaction.get_status_display()}: "
                          f"{interaction.summary}"))
    if before["owner_id"] != interaction.owner_id:
        names = {u.pk: u.display_name for u in get_user_model().objects.filter(
            pk__in=[before["owner_id"], interaction.owner_id])}
        entries.append(InteractionComment(
            interaction=interaction, kind=HistoryKind.OWNER, author=_user(actor),
            old_value=names.get(before["owner_id"], "nobody"), new_value=names.get(interaction.owner_id, "nobody"),
        ))
    if before["visibility"] != interaction.visibility:
        # The history of a formerly internal interaction stays internal; only later entries are shared.
        said = message(texts.VISIBILITY_CHANGED, visibility=interaction.visibility)
        entries.append(InteractionComment(
            interaction=interaction, kind=HistoryKind.COMMENT, author=_user(actor), internal=True,
            body=said.english(), body_code=said.code, params=said.params,
        ))
    if before["severity"] != interaction.severity and interaction.severity in ("high", "critical") \
            and before["severity"] not in ("high", "critical"):
        notify(_event(interaction, "interaction.severity",
                      f"Interaction at {interaction.organization} raised to {interaction.severity}: {interaction.summary}"))
    for entry in entries:
        entry.internal = entry.internal or interaction.visibility != "shared"
        entry.save()
    told = [watchers.line(entry) for entry in entries]
    if before["severity"] != interaction.severity:
        told.append((watchers.said(message(texts.SEVERITY_CHANGED, before=before["severity"],
                                           after=interaction.severity)), interaction.visibility != "shared"))
    watchers.tell(interaction, told, actor)
    Interaction.objects.filter(pk=interaction.pk).update(**updates)
    for name, value in updates.items():
        setattr(interaction, name, value)
    if "resolved_at" in updates:
        signals.written(interaction)
    return entries


def comment(interaction: Interaction, author, body: str, internal: bool) -> InteractionComment:
    """A comment; customers' comments are never internal, and answer nothing by themselves."""
    entry = InteractionComment.objects.create(
        interaction=interaction, kind=HistoryKind.COMMENT, author=_user(author), body=body, internal=internal
    )
    updates = {"last_activity_at": entry.created}
    # The first response is the program side's first comment the customer can read (an internal note answers
    # nobody); whoever logged the interaction, a lead SA's shared answer is the response.
    answers = not internal or interaction.visibility != "shared"
    if interaction.first_response_at is None and answers and _is_responder(author, interaction):
        updates["first_response_at"] = entry.created
        interaction.first_response_at = entry.created
    Interaction.objects.filter(pk=interaction.pk).update(**updates)
    who = getattr(_user(author), "display_name", "")
    said = message(texts.COMMENTED, who=who, body=body) if who else message(texts.SOMEONE_COMMENTED, body=body)
    watchers.tell(interaction, [(watchers.said(said), entry.internal)], author)
    return entry


def escalate(interaction: Interaction, actor, reason: str, target=None):
    """Raise an escalation record (portal.engagement); without a target it goes to the account team.

    Everything about it is internal: the history entry, the timeline entry and the notification.
    """
    if target is None:
        target = EscalationTarget.objects.filter(slug=targets.LEGACY_TARGET).first() \
            or targets.sync(EscalationTarget)[targets.LEGACY_TARGET]
    return hooks.RAISE_ESCALATION(interaction, actor, target, reason)


def request_support_case(interaction: Interaction, *, subject: str, body: str,
                         service_code: str = "amazon-elastic-compute-cloud-linux",
                         category_code: str = "instance-issue") -> bool:
    """Ask for the interaction's AWS Support case to be opened with ``body``: a ``SupportCaseRequest`` row (a job of
    ``portal.core.jobs``), whose task (``OPEN_REQUESTED_CASE``) is sent after commit; a broker that cannot take it
    leaves the row for the sweep. False when the interaction has a case already."""
    if interaction.support_case_id:
        return False
    row = SupportCaseRequest.objects.create(interaction=interaction, subject=subject[:250], body=body,
                                            service_code=service_code, category_code=category_code,
                                            dispatched_at=timezone.now())
    jobs.send_on_commit(OPEN_REQUESTED_CASE.get(), row.pk,
                        on_failure=lambda: SupportCaseRequest.mark_dispatched(row.pk, False))
    return True


def _user(user):
    return user if getattr(user, "is_authenticated", False) else None


def fault_linked(fault_text: str, *, before_id: int | None, after_id: int | None, actor) -> list[InteractionComment]:
    """A GPU fault (``fault_text``, e.g. "ip-10-0-0-1 GPU 3 on p5-train: XID 79 …") moved from the interaction
    ``before_id`` to ``after_id`` (either None): one history entry on each, internal where the interaction is.
    Call inside the transaction that saves the link."""
    if before_id == after_id:
        return []
    now = timezone.now()
    text = fault_text[:200]
    entries = []
    for interaction in Interaction.objects.filter(pk__in=[pk for pk in (before_id, after_id) if pk]).order_by("pk"):
        linked = interaction.pk == after_id
        entries.append(InteractionComment(
            interaction=interaction, kind=HistoryKind.FAULT, author=_user(actor), created=now,
            old_value="" if linked else text, new_value=text if linked else "",
            internal=interaction.visibility != "shared",
        ))
    InteractionComment.objects.bulk_create(entries)
    Interaction.objects.filter(pk__in=[e.interaction_id for e in entries]).update(last_activity_at=now)
    for entry in entries:
        watchers.tell(entry.interaction, [watchers.line(entry)], actor)
    return entries


def open_for(user, organization=None):
    """Open interactions the user may see, oldest first (for the organization page and lead home)."""
    qs = Interaction.objects.restrict(user).filter(status__in=OPEN_STATUSES)
    if organization is not None:
        qs = qs.filter(organization=organization)
    return qs.select_related("organization", "owner").order_by("occurred_at", "id")


def open_summary(user, organization) -> dict:
    """How many interactions are open, how many urgent, since when: the organization status's line, also sent out
    of band by the quick log so the count never goes stale."""
    return Interaction.objects.restrict(user).filter(organization=organization, status__in=OPEN_STATUSES).aggregate(
        n=Count("id"), oldest=Min("occurred_at"), urgent=Count("id", filter=Q(severity__in=("high", "critical"))))
