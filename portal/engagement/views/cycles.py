"""Cycle pages: the cycles the user's organizations took part in, one cycle (read-only once archived) with
its report, the report as PDF and CSV, and starting the next cycle (program managers)."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views import View

from portal.core import access, submissions, versions
from portal.core.choices import CycleStatus
from portal.core.generic import ObjectListView, ObjectPageView, ObjectView, get_object
from portal.core.models import Cycle, Organization
from portal.engagement import carry, cycles, reports


class CycleListView(ObjectListView):
    queryset = Cycle.objects.all()
    template_name = "engagement/cycle_list.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        active = cycles.active()
        ctx["may_start"] = active is not None and access.can(self.request.user, access.CHANGE, active)
        ctx["scheduled"] = cycles.scheduled()
        ctx["wind_down"] = wind_down_rows(self.request.user)
        # What program managers changed about scheduled starts (moved, cancelled): the cycle history's reasons.
        ctx["schedule_changes"] = (cycles.schedule_changes() if ctx["may_start"] else [])
        return ctx


wind_down_rows = carry.wind_down_rows


class CycleView(ObjectView):
    queryset = Cycle.objects.prefetch_related("blueprints")
    template_name = "engagement/cycle_detail.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        data = cycles.report(self.object)
        visible = set(self.visible(Organization.objects.all()).values_list("slug", flat=True))
        data["organizations"] = [r for r in data["organizations"] if r["slug"] in visible]
        ctx["report"] = data
        ctx["may_export"] = may_export(self.request.user)
        ctx["sees_internal"] = access.sees_internal(self.request.user)
        active = cycles.active()
        ctx["may_reschedule"] = (self.object.status == CycleStatus.PLANNED and self.object.starts_on is not None
                                 and active is not None and access.can(self.request.user, access.CHANGE, active))
        if not self.object.is_archived:  # the active cycle's page: what the cycles before it left to wind down
            ctx["wind_down"] = wind_down_rows(self.request.user)
        else:
            ctx["wind_down"] = [(label, [r for r in rows if r["row"].cycle_id == self.object.pk])
                                for label, rows in wind_down_rows(self.request.user)]
            ctx["wind_down"] = [(label, rows) for label, rows in ctx["wind_down"] if rows]
        return ctx


def may_export(user) -> bool:
    """The cycle report covers every organization: program managers and staff only."""
    return access.is_program_manager(user) or access.is_staff(user)


def _report_cycle(request, pk: int) -> Cycle:
    cycle = get_object(request, Cycle.objects.all(), pk=pk)
    if not may_export(request.user):
        raise PermissionDenied(gettext("The cycle report is for program managers."))
    return cycle


def cycle_report_pdf(request, pk: int):
    return reports.pdf_of(cycles.report(_report_cycle(request, pk)))


def cycle_report_csv(request, pk: int):
    return reports.csv_of(cycles.report(_report_cycle(request, pk)))


class StartNextForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, label=_("Name"), help_text=_("Empty: “Cycle <number>”."))
    starts_on = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}), label=_("Starts on"),
                                help_text=_("Empty: today. A later day schedules the switch for that day."))
    continuing = forms.ModelMultipleChoiceField(queryset=Organization.objects.none(),
                                                widget=forms.CheckboxSelectMultiple,
                                                label=_("Organizations that continue"))

    def __init__(self, *args, cycle=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["continuing"].queryset = Organization.objects.filter(participations__cycle=cycle)
        if cycle is not None:
            self.fields["name"].help_text = _("Empty: “%(name)s”.") % {"name": cycles.next_name(cycle)}
        self.initial.setdefault("continuing", list(Organization.objects.filter(
            participations__cycle=cycle, participations__continues=True).values_list("pk", flat=True)))


class StartNextCycleView(View):
    """GET the form; POST it to see what starting the next cycle will do (who continues and who leaves, what is
    carried over and what is left to wind down); POST again with ``confirm`` to start it (or schedule it)."""

    template_name = "engagement/cycle_start.html"

    def dispatch(self, request, *args, **kwargs):
        self.current = cycles.active()
        if request.user.is_authenticated and (self.current is None
                                              or not access.can(request.user, access.CHANGE, self.current)):
            raise PermissionDenied(gettext("Program managers start the next cycle."))
        return super().dispatch(request, *args, **kwargs)

    def _render(self, form, status=200, **more):
        return render(self.request, self.template_name,
                      {"form": form, "current": self.current, "scheduled": cycles.scheduled(), **more}, status=status)

    def get(self, request):
        return self._render(StartNextForm(cycle=self.current))

    @submissions.once
    def post(self, request):
        form = StartNextForm(request.POST, cycle=self.current)
        if not form.is_valid():
            return self._render(form, status=400)
        data = form.cleaned_data
        continuing = [o.pk for o in data["continuing"]]
        today = timezone.localdate()
        starts_on = data["starts_on"] or today
        if request.POST.get("confirm") != "yes":
            return self._render(form, summary=carry.summary(self.current, continuing, starts_on),
                                starts_on=starts_on, at_once=starts_on <= today)
        try:
            nxt = cycles.start_next(request.user, continuing=continuing, name=data["name"], starts_on=starts_on)
        except cycles.CycleError as exc:
            form.add_error(None, str(exc))
            return self._render(form, status=400)
        submissions.record(request, nxt)
        if nxt.status == CycleStatus.ACTIVE:
            messages.success(request, gettext("%(next)s started; %(current)s is archived.")
                             % {"next": nxt.name, "current": self.current.name})
        else:
            messages.success(request, gettext("%(next)s starts on %(day)s; %(current)s stays active until then.")
                             % {"next": nxt.name, "day": f"{nxt.starts_on:%Y-%m-%d}", "current": self.current.name})
        return redirect(nxt.get_absolute_url())


class ScheduleForm(forms.ModelForm):
    """The scheduled start of the next cycle, to move it; its version guards against a second program manager's
    change meanwhile."""

    class Meta:
        model = Cycle
        fields = ["starts_on"]
        widgets = {"starts_on": forms.DateInput(attrs={"type": "date"})}
        labels = {"starts_on": _("New start date")}
        help_texts = {"starts_on": _("Today starts the next cycle at once.")}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["starts_on"].required = True


class ScheduleView(ObjectPageView):
    """A scheduled switch, changed from the page by a program manager: move its date or cancel it. Each asks to
    confirm first (a POST without ``confirm`` answers the confirmation page); the change is kept in the cycle's
    history."""

    queryset = Cycle.objects.all()
    template_name = "engagement/cycle_schedule.html"

    def dispatch(self, request, pk):
        current = cycles.active()
        if request.user.is_authenticated and (current is None
                                              or not access.can(request.user, access.CHANGE, current)):
            raise PermissionDenied(_("Program managers change the start of the next cycle."))
        self.current = current
        return super().dispatch(request, pk=pk)

    def _render(self, form, status=200, **more):
        history = (self.object.history.select_related("history_user").order_by("-history_date")[:10]
                   if self.object.pk else [])
        return render(self.request, self.template_name, {"object": self.object, "current": self.current,
                                                         "form": form, "history": history, **more}, status=status)

    def _scheduled(self) -> bool:
        return self.object.status == CycleStatus.PLANNED and self.object.starts_on is not None

    def get(self, request, pk):
        form = ScheduleForm(instance=self.object)
        versions.add_field(form, self.object)
        return self._render(form, scheduled=self._scheduled())

    def post(self, request, pk):
        if not self._scheduled():
            return self._render(ScheduleForm(instance=self.object), status=400, scheduled=False)
        action = request.POST.get("action")
        data = request.POST.copy()
        if action == "cancel":
            data["starts_on"] = self.object.starts_on.isoformat()
        form = ScheduleForm(data, instance=Cycle.objects.get(pk=self.object.pk))
        versions.add_field(form, self.object)
        if action not in ("move", "cancel") or not form.is_valid():
            if action not in ("move", "cancel"):
                form.add_error(None, _("Choose to move the start or to cancel it."))
            return self._render(form, status=400, scheduled=True)
        today = timezone.localdate()
        starts_on = form.cleaned_data["starts_on"]
        if request.POST.get("confirm") != "yes":
            return self._render(form, scheduled=True, confirming=action, starts_on=starts_on,
                                at_once=starts_on <= today, version=request.POST.get(versions.FIELD, ""))
        try:
            with transaction.atomic():
                changes = versions.conflict(form, self.object)
                if changes is not None:
                    form.add_error(None, _("Another program manager changed this schedule meanwhile; "
                                           "here it is as it stands now."))
                    fresh = ScheduleForm(instance=Cycle.objects.get(pk=self.object.pk))
                    versions.add_field(fresh, self.object)
                    fresh._errors = form._errors
                    return self._render(fresh, status=409, scheduled=True)
                if action == "cancel":
                    current = cycles.cancel_scheduled(request.user, self.object)
                else:
                    nxt = cycles.reschedule(request.user, self.object, starts_on, today=today)
        except cycles.CycleError as exc:
            form.add_error(None, str(exc))
            return self._render(form, status=400, scheduled=self._scheduled())
        if action == "cancel":
            messages.success(request, _("The start of %(name)s is cancelled; %(current)s stays active.")
                             % {"name": self.object.name, "current": current.name})
            return redirect("engagement:cycle_list")
        if nxt.status == CycleStatus.ACTIVE:
            messages.success(request, _("%(name)s started; %(current)s is archived.")
                             % {"name": nxt.name, "current": self.current.name})
        else:
            messages.success(request, _("%(name)s now starts on %(day)s.")
                             % {"name": nxt.name, "day": f"{nxt.starts_on:%Y-%m-%d}"})
        return redirect(nxt.get_absolute_url())
