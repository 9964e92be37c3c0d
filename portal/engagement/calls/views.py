"""Pages of the call area: calls, applications (drafted, submitted, reopened), reviews and the award.

Every row comes through the access policy: an applicant sees its own application, a reviewer only those assigned
(never of an organization they belong to, nor after declaring a conflict), the program manager all. Actions are
POSTs on the service functions (``services``), which hold the rules; a refusal is a message on the page.
"""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Prefetch
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.functional import cached_property
from django.utils.translation import gettext, gettext_lazy

from portal.core import access, submissions
from portal.core.generic import (
    ObjectActionView,
    ObjectEditView,
    ObjectListView,
    ObjectPageView,
    ObjectView,
    get_object,
)
from portal.core.models import Organization
from portal.core.xlsx import xlsx_response
from portal.engagement.calls import lines, services
from portal.engagement.calls.choices import ApplicationStatus
from portal.engagement.calls.forms import (
    ApplicationForm,
    AssignForm,
    AwardForm,
    CallForm,
    ConflictForm,
    ReviewForm,
)
from portal.engagement.calls.models import Application, ApplicationVersion, Call, ReviewAssignment


def _refused(request, exc: Exception, url: str):
    messages.error(request, " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc))
    return redirect(url)


class CallListView(ObjectListView):
    queryset = Call.objects.all()
    template_name = "calls/call_list.html"
    partial_template_name = "calls/htmx/call_table.html"
    csv_fields = (("title", "title"), ("status", "status"), ("opens_on", "opens_on"), ("closes_on", "closes_on"),
                  ("next_cycle_starts_on", "next_cycle_starts_on"))
    csv_filename = "calls.csv"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        ctx["may_open"] = access.organization_ids(self.request.user, access.CHANGE, Call) is None
        return ctx


class CallView(ObjectView):
    queryset = Call.objects.select_related("cycle")
    template_name = "calls/call_detail.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        user, call = self.request.user, self.object
        mine = self.visible(Application.objects.filter(call=call)).select_related("organization")
        ids = access.organization_ids(user, access.CHANGE, Application)
        orgs = self.visible(Organization.objects.order_by("name"))
        if ids is not None:
            orgs = orgs.filter(pk__in=ids)
        started = {a.organization_id for a in mine}
        ctx.update(applications=mine, may_apply=[o for o in orgs if o.pk not in started] if ids is not None else [],
                   offered_hours=lines.total_hours(call.offer),
                   may_manage=access.can(user, access.APPROVE, call))
        return ctx


class CallEditView(ObjectEditView):
    queryset = Call.objects.all()
    form_class = CallForm
    template_name = "calls/call_form.html"
    create_refusal = gettext_lazy("Only a program manager opens a call.")


class CallBoardView(ObjectView):
    """The program manager's board: the scores side by side (weighted), and what is asked against the offer."""

    queryset = Call.objects.all()
    template_name = "calls/call_board.html"

    def get_object(self, queryset=None):
        call = super().get_object(queryset)
        if not access.can(self.request.user, access.APPROVE, call):
            raise PermissionDenied(gettext("Only a program manager sees the reviews side by side."))
        return call

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        call = self.object
        assignments = ReviewAssignment.objects.filter(conflict_declared=False).select_related("reviewer")
        apps = list(self.visible(Application.objects.filter(call=call)).select_related("organization")
                    .prefetch_related(Prefetch("assignments", queryset=assignments, to_attr="active_reviews")))
        names = [c["name"] for c in call.criteria]
        rows = []
        for a in apps:
            reviews = [(r, [r.scores.get(n, "") for n in names], services.weighted(call, r.scores))
                       for r in a.active_reviews]
            done = [w for _, _, w in reviews if w is not None]
            rows.append({"application": a, "reviews": reviews, "hours": lines.total_hours(a.requested),
                         "mean": round(sum(done) / len(done), 2) if done else None})
        asked = [r for a in apps if a.status != ApplicationStatus.DRAFT for r in a.requested]
        ctx.update(rows=rows, criteria=call.criteria, comparison=lines.compare(call.offer, asked),
                   asked_hours=lines.total_hours(asked), offered_hours=lines.total_hours(call.offer),
                   assign_form=AssignForm())
        return ctx


class CallAwardView(ObjectPageView):
    """GET: one lines field per submitted application (pre-filled with what it asked); POST: the award."""

    queryset = Call.objects.all()
    action = access.APPROVE
    refusal = gettext_lazy("Only a program manager awards a call.")
    template_name = "calls/call_award.html"

    @property
    def call(self):
        return self.object

    @cached_property
    def applications(self):
        return (Application.objects.filter(call=self.call, status=ApplicationStatus.SUBMITTED)
                .select_related("organization").order_by("organization__name"))

    def render_page(self, form, status=200):
        return render(self.request, self.template_name, {"call": self.call, "form": form,
                                                         "offered_hours": lines.total_hours(self.call.offer)},
                      status=status)

    def get(self, request, pk):
        return self.render_page(AwardForm(applications=self.applications))

    @submissions.once
    def post(self, request, pk):
        form = AwardForm(request.POST, applications=self.applications)
        if not form.is_valid():
            return self.render_page(form, status=400)
        try:
            done = services.award(self.call, form.decisions(), request.user, form.cleaned_data["note"])
        except (services.CallError, ValidationError) as exc:
            form.add_error(None, " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc))
            return self.render_page(form, status=400)
        submissions.record(request, self.call)
        messages.success(request, gettext("Awarded: %(awarded)s applications, %(declined)s declined, %(quotas)s quotas "
                                          "and %(reservation_requests)s reservation requests for the next cycle.")
                         % done)
        return redirect(self.call.get_absolute_url())


class ApplicationStartView(ObjectActionView):
    """POST: start (or open) the organization's application, pre-filled from its record of the current cycle."""

    queryset = Call.objects.all()
    once = True

    def act(self, request, call):
        organization = get_object(request, Organization.objects.all(), slug=self.kwargs["org"])
        if not access.can_in_organization(request.user, access.CHANGE, Application, organization.pk):
            raise PermissionDenied(gettext("You may not apply for this organization."))
        try:
            application = services.start_application(call, organization, request.user)
        except services.CallError as exc:
            return _refused(request, exc, call.get_absolute_url())
        submissions.record(request, application)
        return redirect(application.get_absolute_url())


class ApplicationListView(ObjectListView):
    queryset = Application.objects.select_related("call", "organization")
    template_name = "calls/application_list.html"
    partial_template_name = "calls/htmx/application_table.html"
    csv_fields = (("call", "call.title"), ("organization", "organization.name"), ("status", "status"),
                  ("architecture", "architecture"), ("parameters_billions", "parameters_billions"))
    csv_filename = "applications.csv"


class ApplicationView(ObjectView):
    queryset = Application.objects.select_related("call", "organization", "reopened_by")
    template_name = "calls/application_detail.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        user, a = self.request.user, self.object
        manages = access.can(user, access.APPROVE, a)
        ctx.update(
            may_edit=services.editable(a) and access.can(user, access.CHANGE, a),
            may_submit=services.editable(a) and access.can(user, access.CHANGE, a),
            manages=manages, requested_hours=lines.total_hours(a.requested),
            awarded_hours=lines.total_hours(a.awarded),
            versions=self.visible(ApplicationVersion.objects.filter(application=a)).select_related("submitted_by"),
            history=a.history.select_related("history_user").order_by("-history_date")[:20] if access.sees_internal(
                user, a.organization_id) else [],
            summaries=services.summaries(a) if a.status == ApplicationStatus.DECLINED else [],
            my_review=self.visible(ReviewAssignment.objects.filter(application=a, reviewer=user),
                                   access.CHANGE).first(),
            assignments=a.assignments.select_related("reviewer") if manages else [],
            assign_form=AssignForm() if manages else None)
        return ctx


class ApplicationEditView(ObjectEditView):
    queryset = Application.objects.select_related("call", "organization")
    form_class = ApplicationForm
    template_name = "calls/application_form.html"

    def get_object(self, queryset=None):
        application = super().get_object(queryset)
        if not services.editable(application):
            raise PermissionDenied(gettext("This application is not a draft open to edits: a program manager "
                                           "reopens it for a late edit."))
        return application


class _ApplicationAction(ObjectActionView):
    queryset = Application.objects.select_related("call")


class ApplicationSubmitView(_ApplicationAction):
    action = access.CHANGE
    once = True

    def act(self, request, application):
        try:
            version = services.submit(application, request.user)
        except (services.CallError, ValidationError) as exc:
            return _refused(request, exc, application.get_absolute_url())
        submissions.record(request, version, application.get_absolute_url())
        messages.success(request, gettext("Submitted as version %(number)s.") % {"number": version.number})
        return redirect(application.get_absolute_url())


class ApplicationReopenView(_ApplicationAction):
    action = access.APPROVE

    def act(self, request, application):
        try:
            services.reopen(application, request.user)
        except services.CallError as exc:
            return _refused(request, exc, application.get_absolute_url())
        messages.success(request, gettext("Reopened for a late edit."))
        return redirect(application.get_absolute_url())


class ApplicationAssignView(_ApplicationAction):
    action = access.APPROVE
    once = True

    def act(self, request, application):
        form = AssignForm(request.POST)
        if not form.is_valid():
            return _refused(request, ValidationError(list(form.errors.get("reviewer", []))), application.get_absolute_url())
        try:
            assignment = services.assign(application, form.cleaned_data["reviewer"], request.user)
        except services.CallError as exc:
            return _refused(request, exc, application.get_absolute_url())
        submissions.record(request, assignment, application.get_absolute_url())
        return redirect(application.get_absolute_url())


class ApplicationExportView(ObjectPageView):
    """The application as a workbook (its fields, requested lines, record and versions): what it says, for
    whoever may read it (a reviewer with a conflict gets a 404, like the page)."""

    queryset = Application.objects.select_related("call")
    http_method_names = ["get"]

    def get(self, request, pk):
        return self.workbook(self.object)

    def workbook(self, a):
        fields = [(f, services.content(a)[f]) for f in services.CONTENT_FIELDS if f not in ("requested", "record")]
        versions = self.visible(ApplicationVersion.objects.filter(application=a))
        return xlsx_response(f"application-{a.pk}.xlsx", [
            ("Application", ["field", "value"], [("call", a.call.title), ("organization", a.organization.name),
                                                  ("status", a.status), *fields]),
            ("Requested", ["instances", "instance type", "region", "weeks"],
             [(r["count"], r["instance_type"], r["region"], r["weeks"]) for r in a.requested]),
            ("Versions", ["number", "submitted at", "sha256"], [(v.number, v.submitted_at, v.content_hash) for v in versions]),
        ])


class ReviewListView(ObjectListView):
    queryset = ReviewAssignment.objects.select_related("application__call", "application__organization", "reviewer")
    template_name = "calls/review_list.html"


class ReviewEditView(ObjectPageView):
    """The reviewer's scores against the call's criteria, comment and summary; or stepping aside (a conflict)."""

    queryset = ReviewAssignment.objects.select_related("application__call", "application__organization")
    template_name = "calls/review_form.html"

    def refuse(self, assignment):
        if assignment.reviewer_id != self.request.user.pk:
            raise Http404

    @property
    def assignment(self):
        return self.object

    @property
    def call(self):
        return self.object.application.call

    def render_page(self, form, status=200):
        return render(self.request, self.template_name, {
            "assignment": self.assignment, "application": self.assignment.application, "form": form,
            "conflict_form": ConflictForm(), "call": self.call}, status=status)

    def get(self, request, pk):
        initial = {f"score_{i}": self.assignment.scores.get(c["name"]) for i, c in enumerate(self.call.criteria)}
        initial.update(comment=self.assignment.comment, summary=self.assignment.summary)
        return self.render_page(ReviewForm(initial=initial, call=self.call))

    def post(self, request, pk):
        if request.POST.get("conflict"):
            form = ConflictForm(request.POST)
            note = form.cleaned_data["note"] if form.is_valid() else ""
            services.declare_conflict(self.assignment, request.user, note)
            messages.success(request, gettext("Conflict declared: the application is no longer yours to review."))
            return redirect("calls:review_list")
        form = ReviewForm(request.POST, call=self.call)
        if not form.is_valid():
            return self.render_page(form, status=400)
        try:
            services.score(self.assignment, request.user, form.scores(), form.cleaned_data["comment"],
                           form.cleaned_data["summary"])
        except (services.CallError, ValidationError) as exc:
            form.add_error(None, " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc))
            return self.render_page(form, status=400)
        messages.success(request, gettext("Review saved."))
        return redirect("calls:review_list")

