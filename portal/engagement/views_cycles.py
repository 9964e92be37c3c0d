"""Cycle pages: the cycles the user's organizations took part in, one cycle (read-only once archived) with
its report, the report as PDF and CSV, and starting the next cycle (program managers)."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from portal import access, submissions
from portal.engagement import cycles, reports
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
        return ctx


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
        return ctx


def may_export(user) -> bool:
    """The cycle report covers every organization: program managers and staff only."""
    return access.is_program_manager(user) or access.is_staff(user)


def _report_cycle(request, pk: int) -> Cycle:
    cycle = get_object_or_404(Cycle.objects.restrict(request.user), pk=pk)
    if not may_export(request.user):
        raise PermissionDenied("The cycle report is for program managers.")
    return cycle


def cycle_report_pdf(request, pk: int):
    return reports.pdf_of(cycles.report(_report_cycle(request, pk)))


def cycle_report_csv(request, pk: int):
    return reports.csv_of(cycles.report(_report_cycle(request, pk)))


class StartNextForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, help_text="Empty: “Cycle <number>”.")
    starts_on = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    continuing = forms.ModelMultipleChoiceField(queryset=Organization.objects.none(),
                                                widget=forms.CheckboxSelectMultiple,
                                                label="Organizations that continue")

    def __init__(self, *args, cycle=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["continuing"].queryset = Organization.objects.filter(participations__cycle=cycle)
        self.initial.setdefault("continuing", list(Organization.objects.filter(
            participations__cycle=cycle, participations__continues=True).values_list("pk", flat=True)))


class StartNextCycleView(View):
    template_name = "engagement/cycle_start.html"

    def dispatch(self, request, *args, **kwargs):
        self.current = cycles.active()
        if request.user.is_authenticated and (self.current is None
                                              or not access.can(request.user, access.CHANGE, self.current)):
            raise PermissionDenied("Program managers start the next cycle.")
        return super().dispatch(request, *args, **kwargs)

    def get(self, request):
        return render(request, self.template_name, {"form": StartNextForm(cycle=self.current), "current": self.current})

    @submissions.once
    def post(self, request):
        form = StartNextForm(request.POST, cycle=self.current)
        if form.is_valid():
            try:
                nxt = cycles.start_next(request.user, continuing=[o.pk for o in form.cleaned_data["continuing"]],
                                        name=form.cleaned_data["name"], starts_on=form.cleaned_data["starts_on"])
            except cycles.CycleError as exc:
                form.add_error(None, str(exc))
            else:
                submissions.record(request, nxt)
                messages.success(request, f"{nxt.name} started; {self.current.name} is archived.")
                return redirect(nxt.get_absolute_url())
        return render(request, self.template_name, {"form": form, "current": self.current}, status=400)
