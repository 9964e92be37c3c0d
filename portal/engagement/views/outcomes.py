"""Outcome pages: an organization's milestones and trained models (customers update their own), the
program-wide outcomes table, and the trained-model form."""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.utils.functional import cached_property
from django.utils.translation import gettext
from django.views.generic import TemplateView

from portal.core import access, submissions, versions
from portal.core.generic import ObjectEditView, ObjectPageView, get_object
from portal.core.models import Organization
from portal.engagement import outcomes
from portal.engagement.choices import MilestoneKind
from portal.engagement.cycles import active
from portal.engagement.filtersets import OutcomeCycleFilterSet
from portal.engagement.forms import MilestonesForm, TrainedModelForm
from portal.engagement.models import Milestone, TrainedModel


class OutcomesView(ObjectPageView):
    """GET: the organization's milestones and trained models; POST: save the milestone dates."""

    queryset = Organization.objects.all()
    template_name = "engagement/outcomes.html"

    @property
    def organization(self):
        return self.object

    @cached_property
    def can_change(self):
        return access.can_in_organization(self.request.user, access.CHANGE, Milestone, self.organization.pk)

    def render_page(self, form, status=200, version_conflict=None):
        reached = outcomes.current(self.organization, self.request.user)
        rows = [(kind, label, reached.get(kind)) for kind, label in MilestoneKind.choices]
        models = self.visible(TrainedModel.objects.filter(organization=self.organization))
        return render(self.request, self.template_name, {
            "organization": self.organization, "milestones": rows, "trained_models": models,
            "form": form if self.can_change else None, "can_change": self.can_change,
            "version_conflict": version_conflict,
        }, status=status)

    def get(self, request, slug):
        initial = {kind: m.reached_on for kind, m in outcomes.current(self.organization, request.user).items()}
        form = MilestonesForm(initial=initial)
        versions.add_token_field(form, outcomes.milestones_version(self.organization))
        return self.render_page(form)

    def conflict(self, form, stale):
        """Changed since the form was shown: nothing saved; the dates changed meanwhile, and the user's dates
        offered again on the stored version."""
        labels = dict(MilestoneKind.choices)
        yours = {k: v.isoformat() if v else None for k, v in form.cleaned_data.items() if k in labels}
        changes = [versions.Change(name=k, label=labels[k], read=stale.read.get(k) or "—",
                                   current=stale.current[k] or "—", yours=yours.get(k) or "—",
                                   yours_differs=yours.get(k) != stale.current[k])
                   for k in labels if stale.read.get(k) != stale.current[k]]
        data = form.data.copy()
        data[versions.FIELD] = versions.values_token(stale.current)
        again = MilestonesForm(data)
        versions.add_token_field(again, data[versions.FIELD])
        return self.render_page(again, status=409, version_conflict=changes)

    @submissions.once
    def post(self, request, slug):
        if not self.can_change:
            raise PermissionDenied(gettext("You may not record this organization's outcomes."))
        form = MilestonesForm(request.POST)
        versions.add_token_field(form, "")
        if not form.is_valid():
            return self.render_page(form, status=400)
        dates = {k: v for k, v in form.cleaned_data.items() if k != versions.FIELD}
        try:
            reached = outcomes.save_milestones(self.organization, request.user, dates,
                                               version=form.cleaned_data.get(versions.FIELD))
        except versions.Stale as stale:
            return self.conflict(form, stale)
        submissions.record(request, self.organization)
        messages.success(request, gettext("Milestones saved.") + (gettext(" Reached: %(milestones)s.")
                                                                   % {"milestones": ", ".join(str(m) for m in reached)} if reached else ""))
        return redirect("engagement:outcomes", slug=self.organization.slug)


class OutcomeListView(TemplateView):
    """Every organization the user sees that has outcomes: milestones reached and models trained."""

    template_name = "engagement/outcome_list.html"

    def get_context_data(self, **kwargs):
        """The active cycle's outcomes, or a past cycle's with ``?cycle=<id>`` (one cycle per row, never two)."""
        ctx = super().get_context_data(**kwargs)
        filterset = OutcomeCycleFilterSet(self.request.GET or None, queryset=Milestone.objects.none(),
                                          request=self.request)
        cycle = filterset.chosen_cycle
        ctx.update(filterset=filterset, cycle=cycle, cycle_read_only=filterset.read_only,
                   shown_cycle=cycle or active(), rows=outcomes.figures(self.request.user, cycle=cycle),
                   kinds=MilestoneKind.choices)
        return ctx


class TrainedModelEditView(ObjectEditView):
    queryset = TrainedModel.objects.select_related("organization")
    form_class = TrainedModelForm
    template_name = "engagement/trainedmodel_form.html"

    def dispatch(self, request, *args, **kwargs):
        self.organization = None
        if "org" in kwargs:
            self.organization = get_object(request, Organization.objects.all(), slug=kwargs["org"])
            if not access.can_in_organization(request.user, access.CHANGE, TrainedModel, self.organization.pk):
                raise PermissionDenied(gettext("You may not record this organization's models."))
        return super().dispatch(request, *args, **kwargs)

    def get_form_kwargs(self):
        kwargs = super().get_form_kwargs()
        if self.object is None:
            kwargs["instance"] = TrainedModel(organization=self.organization)
        return kwargs

    def form_invalid(self, form):
        return self.render_to_response(self.get_context_data(form=form), status=400)

    def form_valid(self, form):
        form.instance.updated_by = self.request.user
        return super().form_valid(form)

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        ctx["organization"] = self.organization or self.object.organization
        return ctx
