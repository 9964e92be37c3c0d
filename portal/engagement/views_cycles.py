"""Cycle pages: the cycles the user's organizations took part in, one cycle (read-only once archived) with
its report, the report as PDF and CSV, and starting the next cycle (program managers)."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views import View

from portal import access, submissions
from portal.engagement import carry, cycles, reports
from portal.engagement.choices import CycleStatus
from portal.engagement.models import Cycle
from portal.generic import ObjectListView, ObjectView
from portal.models import Organization


class CycleListView(ObjectListView):
    queryset = Cycle.objects.all()
    template_name = "engagement/cycle_list.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        active = cycles.active()
        ctx["may_start"] = active is not None and access.can(self.request.user, access.CHANGE, active)
        ctx["scheduled"] = cycles.scheduled()
        ctx["wind_down"] = wind_down_rows(self.request.user)
        return ctx


def wind_down_rows(user) -> list[tuple[str, list]]:
    """What archived cycles still hold (the leaving organizations'), as the user may see it, by kind."""
    from portal.engagement.choices import CarryKind

    found = []
    for kind, rows in carry.wind_down(user).items():
        if not rows:
            continue
        if kind == CarryKind.CLUSTER:
            items = [{"row": r, "what": f"{r.name}: {r.node_count} × {r.instance_type}", "state": r.get_state_display(),
                      "url": r.get_absolute_url()} for r in rows]
        else:  # quotas and reservations: the quota page, on the cycle they belong to
            items = [{"row": r, "what": str(r), "state": f"ends {r.end:%Y-%m-%d}",
                      "url": f"{r.get_absolute_url()}&cycle={r.cycle_id}"} for r in rows]
        found.append((CarryKind(kind).label, items))
    return found


class CycleView(ObjectView):
    queryset = Cycle.objects.prefetch_related("blueprints")
    template_name = "engagement/cycle_detail.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        data = cycles.report(self.object)
        visible = set(Organization.objects.restrict(self.request.user).values_list("slug", flat=True))
        data["organizations"] = [r for r in data["organizations"] if r["slug"] in visible]
        ctx["report"] = data
        ctx["may_export"] = may_export(self.request.user)
        ctx["sees_internal"] = access.sees_internal(self.request.user)
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
    cycle = get_object_or_404(Cycle.objects.restrict(request.user), pk=pk)
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
