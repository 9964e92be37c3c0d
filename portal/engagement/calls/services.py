"""Every write of the call area: drafting, submitting and reopening applications, assigning and scoring
reviews, and the award. Views and the API parse and call these; the rules live here, under the row's lock.

The award is checked twice: the sums of what is given against the call's offer, and each (type, region) against
AWS's offerings (``offerings.check``, through the program's role). AWS is asked before the lock (a network call
does not hold a row), the offer is checked again under the call's lock with the rows as they stand, and only then
are the applications decided and the next cycle's quotas and reservation requests written (one request per awarded
line, keyed by it: ``clusters.accounting.requests``), all in one transaction: a refusal writes nothing.
"""
from __future__ import annotations

import datetime
import hashlib
import json
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone, translation
from django.utils.translation import gettext

from clusters.accounting import requests as reservation_requests
from portal.core import notifications, timeline
from portal.core.choices import TimelineKind
from portal.core.models import Cycle, Membership, active_cycle
from portal.core.stored_text import Message, message
from portal.engagement.calls import lines, offerings, prefill
from portal.engagement.calls import timeline_texts as texts
from portal.engagement.calls.choices import ApplicationStatus, CallStatus
from portal.engagement.calls.models import Application, ApplicationVersion, Call, ReviewAssignment
from workloads.models import InstanceQuota

SCORE_MAX = 5
CONTENT_FIELDS = ("architecture", "parameters_billions", "tokens_billions", "modality", "frameworks", "requested",
                  "data_plan", "milestones_plan", "answers", "record")


class CallError(Exception):
    """A write the rules refuse (a closed call, a submitted application, a conflicted reviewer, an award that
    does not fit); the message is for the person refused."""


def _json(value):
    if isinstance(value, Decimal):
        return str(value.normalize()) if value == value.to_integral() else str(value)
    return value


def content(application: Application) -> dict:
    return {f: _json(getattr(application, f)) for f in CONTENT_FIELDS}


def content_hash(data: dict) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                                     default=str).encode()).hexdigest()


def start_application(call: Call, organization, user) -> Application:
    """The organization's draft for ``call``, pre-filled from its record of the current cycle (the one it has
    if it started one already)."""
    with transaction.atomic():
        call = Call.objects.select_for_update().get(pk=call.pk)
        existing = Application.objects.filter(call=call, organization=organization).first()
        if existing is not None:
            return existing
        if call.status != CallStatus.OPEN:
            raise CallError(gettext("This call is not open for applications."))
        record = prefill.record(organization, call.cycle or active_cycle())
        application = Application(call=call, organization=organization, record=record, record_as_of=timezone.now(),
                                  **{k: v for k, v in prefill.initial_fields(record).items() if k != "requested"})
        application.requested = [r for r in prefill.initial_fields(record).get("requested", []) if r["weeks"]]
        application._history_user = user
        application.save()
        timeline.record(organization, TimelineKind.NOTE, message(texts.STARTED, call=call.title),
                        source=application, visibility="shared", actor=user)
    return application


def editable(application: Application) -> bool:
    """A draft, while the call is open or after a program manager reopened it for a late edit."""
    return application.status == ApplicationStatus.DRAFT and (
        application.call.status == CallStatus.OPEN or application.reopened_by_id is not None)


def refuse_unless_editable(application: Application) -> None:
    if application.status != ApplicationStatus.DRAFT:
        raise CallError(gettext("This application was submitted: a program manager reopens it for a late edit."))
    if not editable(application):
        raise CallError(gettext("This call is closed: a program manager reopens the application for a late edit."))


def submit(application: Application, user) -> ApplicationVersion:
    """Freeze the application as a new version (content and its hash) and mark it submitted."""
    with transaction.atomic():
        application = Application.objects.select_for_update().select_related("call").get(pk=application.pk)
        refuse_unless_editable(application)
        if not application.requested:
            raise CallError(gettext("Ask for some capacity before submitting."))
        lines.clean(application.requested)
        data = content(application)
        number = (application.versions.aggregate(n=Max("number"))["n"] or 0) + 1
        version = ApplicationVersion.objects.create(application=application, number=number, content=data,
                                                    content_hash=content_hash(data), submitted_by=user,
                                                    submitted_at=timezone.now())
        application.status, application.reopened_by = ApplicationStatus.SUBMITTED, None
        application._history_user = user
        application._change_reason = f"Submitted as version {number}"
        application.save(update_fields=["status", "reopened_by", "updated"])
        timeline.record(application.organization_id, TimelineKind.NOTE,
                        message(texts.SUBMITTED, call=application.call.title, number=number),
                        source=application, visibility="shared", actor=user)
    return version


def reopen(application: Application, user) -> Application:
    """A program manager's leave for a late edit: the submitted application becomes a draft again."""
    with transaction.atomic():
        application = Application.objects.select_for_update().get(pk=application.pk)
        if application.status != ApplicationStatus.SUBMITTED:
            raise CallError(gettext("Only a submitted application is reopened."))
        application.status, application.reopened_by = ApplicationStatus.DRAFT, user
        application._history_user = user
        application._change_reason = "Reopened for a late edit"
        application.save(update_fields=["status", "reopened_by", "updated"])
    return application


def conflicted(reviewer, application: Application) -> bool:
    """The reviewer leads or belongs to the applicant organization."""
    return Membership.objects.filter(user=reviewer, organization_id=application.organization_id).exists()


def assign(application: Application, reviewer, user) -> ReviewAssignment:
    with transaction.atomic():
        if conflicted(reviewer, application):
            raise CallError(gettext("%(reviewer)s belongs to %(organization)s and may not review its application.")
                            % {"reviewer": reviewer.get_username(), "organization": application.organization})
        assignment, _ = ReviewAssignment.objects.get_or_create(application=application, reviewer=reviewer)
        application.call.reviewers.add(reviewer)
    return assignment


def declare_conflict(assignment: ReviewAssignment, user, note: str) -> ReviewAssignment:
    """The reviewer steps aside: the application disappears from what they see, their scores are dropped."""
    with transaction.atomic():
        assignment = ReviewAssignment.objects.select_for_update().get(pk=assignment.pk)
        assignment.conflict_declared, assignment.conflict_note = True, note.strip()
        assignment.scores, assignment.submitted_at = {}, None
        assignment._history_user = user
        assignment.save()
    return assignment


def clean_scores(call: Call, scores) -> dict[str, int]:
    names = [c["name"] for c in call.criteria]
    if not isinstance(scores, dict) or set(scores) != set(names):
        raise ValidationError(gettext("Score every criterion of the call: %(names)s.") % {"names": ", ".join(names)})
    found = {}
    for name in names:
        try:
            value = int(scores[name])
        except (TypeError, ValueError):
            value = -1
        if not 0 <= value <= SCORE_MAX:
            raise ValidationError(gettext("Scores are whole numbers from 0 to %(max)s.") % {"max": SCORE_MAX})
        found[name] = value
    return found


def score(assignment: ReviewAssignment, user, scores: dict, comment: str, summary: str) -> ReviewAssignment:
    with transaction.atomic():
        assignment = ReviewAssignment.objects.select_for_update().select_related("application__call").get(
            pk=assignment.pk)
        if assignment.application.call.status == CallStatus.AWARDED:
            raise CallError(gettext("This call is awarded: its reviews are closed."))
        assignment.scores = clean_scores(assignment.application.call, scores)
        assignment.comment, assignment.summary = comment.strip(), summary.strip()
        assignment.submitted_at = timezone.now()
        assignment._history_user = user
        assignment.save()
    return assignment


def weighted(call: Call, scores: dict) -> float | None:
    weights = {c["name"]: float(c["weight"]) for c in call.criteria}
    total = sum(weights.values())
    if not scores or not total:
        return None
    return round(sum(weights.get(k, 0) * v for k, v in scores.items()) / total, 2)


def summaries(application: Application) -> list[str]:
    """What the reviewers wrote for the applicant, without their names (a declined applicant reads these)."""
    return [s for s in application.assignments.filter(conflict_declared=False, submitted_at__isnull=False)
            .order_by("id").values_list("summary", flat=True) if s]


def validate_award(call: Call, decisions: dict[int, list[dict]], applications: dict[int, Application]) -> list[dict]:
    """Every awarded line within what its application asked, and the sum (with what the call awarded before, in
    earlier rounds) within the call's offer. Answers the lines awarded now."""
    given: list[dict] = []
    for app_id, rows in decisions.items():
        application = applications.get(app_id)
        if application is None or application.status != ApplicationStatus.SUBMITTED:
            raise CallError(gettext("Only submitted applications of this call are awarded."))
        asked = lines.instance_weeks(application.requested)
        for (kind, region), amount in lines.instance_weeks(rows).items():
            if amount > asked.get((kind, region), 0):
                raise CallError(gettext("%(organization)s is awarded more %(type)s in %(region)s than it asked for.")
                                % {"organization": application.organization, "type": kind, "region": region})
        given += rows
    before = [r for a in applications.values() if a.status == ApplicationStatus.AWARDED for r in a.awarded]
    over = [c for c in lines.compare(call.offer, before + given) if c["over"] > 0]
    if over:
        raise CallError(gettext("The award exceeds the call's offer: %(lines)s.") % {"lines": "; ".join(
            gettext("%(type)s in %(region)s, %(asked)s instance-weeks awarded of %(offered)s offered") % {
                "type": c["instance_type"], "region": c["region"], "asked": c["asked"], "offered": c["offered"]}
            for c in over)})
    return given


def award(call: Call, decisions: dict[int, list], user, note: str = "", *, ask_aws: bool = True) -> dict:
    """Award ``decisions`` ({application id: awarded lines, empty to decline}) to submitted applications of the
    call, in one round or several; refused (nothing written) when the sum with earlier rounds does not fit the
    offer or AWS cannot supply a line. The call is awarded once no application is left to decide.
    ``ask_aws=False`` only for the demo without the embedded endpoint (there is no AWS to ask): its lines then
    name no offering."""
    decisions = {int(k): lines.clean(v) for k, v in decisions.items()}
    applications = {a.pk: a for a in call.applications.select_related("organization")}
    given = validate_award(call, decisions, applications)
    supply = offerings.check(given, call.next_cycle_starts_on) if ask_aws else []
    short = [s for s in supply if not s.ok]
    if short:
        raise CallError(" ".join(s.refusal() for s in short))
    by_line = {(s.instance_type, s.region): s for s in supply}
    with transaction.atomic():
        call = Call.objects.select_for_update().get(pk=call.pk)
        if call.status == CallStatus.AWARDED:
            raise CallError(gettext("This call is already awarded."))
        applications = {a.pk: a for a in Application.objects.select_for_update().filter(call=call)
                        .select_related("organization")}
        validate_award(call, decisions, applications)
        cycle = call.cycle or active_cycle()
        quotas, requested = [], 0
        for app_id, rows in decisions.items():
            application = applications[app_id]
            asks = []
            for index, r in enumerate(rows):
                s = by_line.get((r["instance_type"], r["region"]))
                r.update(source=s.source if s else "", offering_id=s.offering_id if s else "")
                quota = _quota(call, cycle, application, r)
                quotas.append(quota)
                asks.append((reservation_requests.award_key(application.pk, index),
                             {**r, "start": call.next_cycle_starts_on, "upfront_fee": s.upfront_fee if s else ""},
                             quota))
            requested += reservation_requests.create_for_award(application.organization, cycle, call.title, asks)
            _decide(application, rows, user, note)
        if decisions and not any(a.status in (ApplicationStatus.DRAFT, ApplicationStatus.SUBMITTED)
                                 for a in applications.values()):
            call.status = CallStatus.AWARDED
            call._history_user = user
            call.save(update_fields=["status", "updated"])
        transaction.on_commit(lambda: _tell([applications[pk] for pk in decisions], call))
    return {"quotas": len(quotas), "reservation_requests": requested, "awarded": sum(1 for r in decisions.values() if r),
            "declined": sum(1 for r in decisions.values() if not r)}


def _quota(call: Call, cycle: Cycle | None, application: Application, row: dict) -> InstanceQuota:
    """The next cycle's quota for one awarded line: from the next cycle's first day for the weeks awarded, in the
    current cycle until the cycle start carries it in (quotas in force on its first day move with it)."""
    start = call.next_cycle_starts_on
    quota = InstanceQuota(organization=application.organization, cycle=cycle, instance_type_name=row["instance_type"],
                          region=row["region"], count=row["count"], start=start,
                          end=start + datetime.timedelta(days=7 * row["weeks"] - 1),
                          notes=f"Awarded by {call.title}; reservation to request: "
                                f"{row['source'] or 'no'} offering {row['offering_id'] or '(AWS not asked)'}")
    quota.full_clean(exclude=["cycle"])
    quota.save()
    return quota


def _decide(application: Application, rows: list[dict], user, note: str) -> None:
    application.awarded = rows
    application.status = ApplicationStatus.AWARDED if rows else ApplicationStatus.DECLINED
    application.decision_note, application.decided_at = note.strip(), timezone.now()
    application._history_user = user
    application.save(update_fields=["awarded", "status", "decision_note", "decided_at", "updated"])
    timeline.record(application.organization_id, TimelineKind.QUOTA, _decision_title(application), source=application,
                    visibility="shared", actor=user)


def _decision_title(application: Application) -> Message:
    """The decision's title: stored as a code on the timeline, told in the applicant's language (``str``)."""
    if application.status == ApplicationStatus.AWARDED:
        return message(texts.AWARDED, call=application.call.title, hours=lines.total_hours(application.awarded))
    return message(texts.NOT_AWARDED, call=application.call.title)


def language_of(organization) -> str:
    """The language the organization's people read the portal in (its first customer's choice, else the default)."""
    chosen = (Membership.objects.filter(organization=organization).exclude(user__language="")
              .order_by("role", "id").values_list("user__language", flat=True).first())
    return chosen or settings.LANGUAGE_CODE


def _tell(applications: list[Application], call: Call) -> None:
    """Each applicant is told (its notification channels: e-mail, Slack), in its people's language."""
    for application in applications:
        with translation.override(language_of(application.organization)):
            notifications.notify(notifications.Event(
                kind="call_decision", title=str(_decision_title(application)),
                organization_id=application.organization_id,
                url=application.get_absolute_url(), visibility="shared",
                body="\n".join(summaries(application)) if application.status == ApplicationStatus.DECLINED else ""))
