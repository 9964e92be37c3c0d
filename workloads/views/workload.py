"""Workload pages: the program-wide list, the organization's workload document with in-place section edits."""
from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from portal.core import access, versions
from portal.core.generic import ObjectEditView, ObjectListView, ObjectPageView, ObjectView
from workloads import history, usage
from workloads.choices import RequestStatus
from workloads.filtersets import WorkloadFilterSet
from workloads.forms import WORKLOAD_SECTIONS, WorkloadForm
from workloads.models import CapacityReservation, QuotaChangeRequest, Workload

SECTION_TITLES = {
    "model": _("Model"),
    "software": _("Frameworks and software"),
    "infrastructure": _("Infrastructure"),
    "storage": _("Storage plan"),
    "program": _("Status and lead SA"),
}


class WorkloadListView(ObjectListView):
    queryset = Workload.objects.select_related("organization", "lead_sa")
    filterset_class = WorkloadFilterSet
    template_name = "workloads/workload_list.html"
    partial_template_name = "workloads/htmx/workload_table.html"
    csv_filename = "workloads.csv"
    csv_fields = (
        ("Organization", "organization.name"), ("Workload", "name"), ("Model family", "model_family"),
        ("Architecture", "architecture_display"), ("Parameters (B)", "parameters_billions"),
        ("Modality", "get_modality_display"), ("Training stage", "get_training_stage_display"),
        ("Frameworks", "frameworks_text"), ("Software", "software_text"),
        ("Orchestrator", "orchestrator_display"), ("Instance type", "target_instance_type"),
        ("Instances", "target_instance_count"), ("Status", "get_status_display"), ("Lead SA", "lead_sa.display_name"),
    )

    def get_queryset(self):
        qs = super().get_queryset()
        return qs if self.filterset and self.filterset.data.get("ordering") else qs.order_by("organization__name", "name")

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        ctx["can_create"] = access.organization_ids(self.request.user, access.CHANGE, Workload) != frozenset()
        query = self.request.GET.copy()
        query.pop("page", None)
        query.pop("export", None)
        ctx["query"] = query.urlencode()
        return ctx


def _section_context(request, workload, name, form=None, version_conflict=None):
    return {
        "workload": workload, "section": name, "title": SECTION_TITLES[name], "form": form,
        "can_change": access.can(request.user, access.CHANGE, workload), "version_conflict": version_conflict,
    }


class WorkloadView(ObjectView):
    queryset = Workload.objects.select_related("organization", "lead_sa")
    template_name = "workloads/workload_detail.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        workload, user = self.object, self.request.user
        can_change = access.can(user, access.CHANGE, workload)
        ctx["sections"] = [
            {"workload": workload, "section": name, "title": title, "can_change": can_change}
            for name, title in SECTION_TITLES.items()
        ]
        records = Workload.history.filter(id=workload.pk).select_related("history_user")
        ctx["history"] = history.entries(Workload, records)
        ctx["usage"] = [r for r in usage.usage_rows(user, workload.organization)
                        if r.instance_type_name == workload.target_instance_type.removeprefix("ml.")]
        ctx["reservations"] = self.visible(CapacityReservation.objects.filter(
            organization_id=workload.organization_id, instance_type_name__in=[
                workload.target_instance_type.removeprefix("ml."), "ml." + workload.target_instance_type.removeprefix("ml.")]
        ))
        ctx["pending_requests"] = self.visible(QuotaChangeRequest.objects.filter(
            organization_id=workload.organization_id, status=RequestStatus.PENDING))
        ctx["can_request"] = access.can_in_organization(user, access.CHANGE, QuotaChangeRequest, workload.organization_id)
        return ctx


class WorkloadEditView(ObjectEditView):
    queryset = Workload.objects.all()
    form_class = WorkloadForm
    template_name = "workloads/workload_form.html"
    form_takes_user = True

    def get_initial(self):
        initial = super().get_initial()
        if self.request.GET.get("organization", "").isdigit():
            initial["organization"] = int(self.request.GET["organization"])
        return initial

    def dispatch(self, request, *args, **kwargs):
        if kwargs.get("pk") is None and access.organization_ids(request.user, access.CHANGE, Workload) == frozenset():
            raise PermissionDenied(gettext("You may not create workloads."))
        return super().dispatch(request, *args, **kwargs)



class WorkloadSectionView(ObjectPageView):
    """One section of the workload document: shown, or edited in place with htmx (GET ?edit=1, POST)."""

    queryset = Workload.objects.select_related("organization", "lead_sa")

    def dispatch(self, request, *args, **kwargs):
        if kwargs["section"] not in WORKLOAD_SECTIONS:
            raise Http404("No such section.")
        return super().dispatch(request, *args, **kwargs)

    def get(self, request, pk, section):
        workload = self.object
        form = None
        if request.GET.get("edit"):
            if not access.can(request.user, access.CHANGE, workload):
                raise PermissionDenied(gettext("You may view this workload but not change it."))
            form = WorkloadForm(instance=workload, user=request.user, section=section)
            versions.add_field(form, workload)
        return render(request, "workloads/htmx/workload_section.html", _section_context(request, workload, section, form))

    def post(self, request, pk, section):
        workload = self.object
        if not access.can(request.user, access.CHANGE, workload):
            raise PermissionDenied(gettext("You may view this workload but not change it."))
        form = WorkloadForm(request.POST, instance=workload, user=request.user, section=section)
        versions.add_field(form, workload)
        if not form.is_valid():
            return render(request, "workloads/htmx/workload_section.html",
                          _section_context(request, workload, section, form))
        with transaction.atomic():
            changes = versions.conflict(form, workload)  # locks the workload's row
            if changes is None:
                form.save()
        if changes is not None:  # changed since the section was opened: the user's values on the stored version
            stored = form.current_instance
            again = WorkloadForm(versions.reapply_data(form, stored), instance=stored, user=request.user,
                                 section=section)
            versions.add_field(again, stored)
            return render(request, "workloads/htmx/workload_section.html",
                          _section_context(request, stored, section, again, changes), status=200 if request.htmx else 409)
        if not request.htmx:
            response = HttpResponse(status=303)
            response["Location"] = workload.get_absolute_url()
            return response
        response = render(request, "workloads/htmx/workload_section.html", _section_context(request, workload, section))
        response["HX-Trigger"] = "workload-changed"
        return response


class WorkloadHistoryView(ObjectView):
    """The change history: a page of its own when opened directly, the section alone when htmx refreshes it
    after a section is saved."""

    queryset = Workload.objects.all()
    template_name = "workloads/workload_history.html"
    partial_template_name = "workloads/htmx/workload_history.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        records = Workload.history.filter(id=self.object.pk).select_related("history_user")
        ctx["history"] = history.entries(Workload, records)
        return ctx
