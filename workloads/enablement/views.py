"""Enablement pages: sessions, their attendance per organization and the satisfaction they earned."""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Avg, Count, FloatField, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.shortcuts import redirect
from django.utils.translation import gettext

from portal.core import access, submissions, timeline, versions
from portal.core.choices import TimelineKind
from portal.core.generic import ObjectActionView, ObjectEditView, ObjectListView, ObjectView
from portal.core.stored_text import message
from workloads.enablement.filtersets import EnablementSessionFilterSet
from workloads.enablement.forms import AttendanceForm, EnablementSessionForm
from workloads.enablement.models import EnablementAttendance, EnablementSession
from workloads.enablement.timeline_texts import SESSION


def with_scores(qs):
    """Attendance count and average score of every session, as subqueries (one query for the list)."""
    per_session = EnablementAttendance.objects.filter(session=OuterRef("pk")).order_by().values("session")
    return qs.annotate(
        attendance_count=Coalesce(Subquery(per_session.annotate(n=Count("pk")).values("n")[:1]), 0,
                                  output_field=IntegerField()),
        average_score=Subquery(per_session.annotate(a=Avg("satisfaction")).values("a")[:1], output_field=FloatField()),
    )


def may_create_sessions(user) -> bool:
    return access.organization_ids(user, access.CHANGE, EnablementSession) != frozenset()


class EnablementListView(ObjectListView):
    queryset = EnablementSession.objects.all()
    filterset_class = EnablementSessionFilterSet
    template_name = "workloads/enablement_list.html"
    csv_fields = (("Date", "date"), ("Kind", "get_kind_display"), ("Topic", "topic"),
                  ("Attendees", "attendance_count"), ("Average satisfaction", "average_score"))
    csv_filename = "enablement-sessions.csv"

    def get_queryset(self):
        return with_scores(super().get_queryset())

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        ctx["may_create"] = may_create_sessions(self.request.user)
        return ctx


class EnablementView(ObjectView):
    queryset = EnablementSession.objects.select_related("cycle").prefetch_related("audience")
    template_name = "workloads/enablement_detail.html"

    def get_queryset(self):
        return with_scores(super().get_queryset())

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        user = self.request.user
        ctx["attendances"] = (
            self.visible(EnablementAttendance.objects.filter(session=self.object)).select_related("organization")
        )
        ctx["by_organization"] = (
            ctx["attendances"].order_by().values("organization__name")
            .annotate(n=Count("pk"), average=Avg("satisfaction")).order_by("organization__name")
        )
        ctx["can_change"] = access.can(user, access.CHANGE, self.object)
        form = AttendanceForm(user=user, session=self.object)
        open_for_attendance = not access.in_archived_cycle(self.object)  # an archived cycle's attendance is history
        ctx["attendance_form"] = form if open_for_attendance and form.fields["organization"].queryset.exists() else None
        return ctx


class EnablementEditView(ObjectEditView):
    queryset = EnablementSession.objects.all()
    form_class = EnablementSessionForm
    template_name = "workloads/enablement_form.html"
    form_takes_user = True

    def dispatch(self, request, *args, **kwargs):
        if kwargs.get("pk") is None and request.user.is_authenticated and not may_create_sessions(request.user):
            raise PermissionDenied(gettext("Program managers create enablement sessions."))
        return super().dispatch(request, *args, **kwargs)

    def form_invalid(self, form):
        return self.render_to_response(self.get_context_data(form=form), status=400)

    def form_valid(self, form):
        """A session has no organization of its own: the audience decides, checked inside the transaction."""
        user = self.request.user
        allowed = access.organization_ids(user, access.CHANGE, EnablementSession)
        with transaction.atomic():
            changes = versions.conflict(form, self.object)  # locks the session's row
            if changes is not None:
                return self.version_conflict(form, changes)
            obj = form.save(commit=False)
            created = obj.pk is None
            chosen = form.cleaned_data["audience"]
            if allowed is not None and (not chosen or any(o.pk not in allowed for o in chosen)):
                raise PermissionDenied(gettext("You may not run sessions for these organizations."))
            if created:
                obj.created_by = user
            obj.save()
            before = set(obj.audience.values_list("pk", flat=True))
            obj.audience.set(form.audience_with_fixed())
            for org in chosen:
                if org.pk not in before:
                    timeline.record(org, TimelineKind.ENABLEMENT, message(SESSION, kind=obj.kind, topic=obj.topic),
                                    source=obj, actor=user)
            self.object = obj
            submissions.record(self.request, obj)
        messages.success(self.request, gettext("Saved %(object)s.") % {"object": obj})
        return redirect(obj.get_absolute_url())


class AttendanceAddView(ObjectActionView):
    """POST: add an attendee (with their score) from an organization the user may write for."""

    queryset = EnablementSession.objects.select_related("cycle")
    once = True

    def refuse(self, session):
        if access.in_archived_cycle(session):
            raise PermissionDenied(access.refusal(session))

    def act(self, request, session):
        form = AttendanceForm(request.POST, user=request.user, session=session)
        if not form.fields["organization"].queryset.exists():
            raise PermissionDenied(gettext("You may not record attendance for this session."))
        if not form.is_valid():
            errors = "; ".join(f"{field}: {' '.join(errs)}" for field, errs in form.errors.items())
            messages.error(request, gettext("Attendance not saved. %(errors)s") % {"errors": errors})
            return redirect(session.get_absolute_url())
        with transaction.atomic():
            attendance = form.save(commit=False)
            attendance.session = session
            if not access.can_in_organization(request.user, access.CHANGE, EnablementAttendance,
                                              attendance.organization_id):
                raise PermissionDenied(gettext("You may not write for this organization."))
            attendance.save()
            submissions.record(request, attendance)
        messages.success(request, gettext("Added %(attendee)s.") % {"attendee": attendance.attendee})
        return redirect(session.get_absolute_url())
