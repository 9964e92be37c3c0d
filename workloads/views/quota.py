"""Quota pages: usage against quota per organization and program-wide, reservations, change requests."""
from __future__ import annotations

import datetime

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from portal.core import access, submissions
from portal.core.cycle_filter import in_active_cycle
from portal.core.generic import ObjectActionView, ObjectEditView, ObjectListView, ObjectView
from workloads import decision_facts, history, services, usage
from workloads.choices import RequestStatus
from workloads.filtersets import CapacityReservationFilterSet, InstanceQuotaFilterSet, QuotaChangeRequestFilterSet
from workloads.forms import CapacityReservationForm, DecisionForm, InstanceQuotaForm, QuotaChangeRequestForm
from workloads.models import CapacityReservation, InstanceQuota, QuotaChangeRequest

EXPIRING_DAYS = 14


class QuotaListView(ObjectListView):
    """Quotas with used / total bars, program totals per instance type and reservations about to end."""

    queryset = InstanceQuota.objects.select_related("organization")
    filterset_class = InstanceQuotaFilterSet
    template_name = "workloads/quota_list.html"
    partial_template_name = "workloads/htmx/quota_table.html"
    csv_filename = "quotas.csv"
    csv_fields = (("Organization", "organization.name"), ("Instance type", "instance_type_name"), ("Region", "region"),
                  ("Count", "count"), ("Start", "start"), ("End", "end"), ("Notes", "notes"))

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        user = self.request.user
        organization = self.filterset.form.cleaned_data.get("organization") if self.filterset.is_valid() else None
        day = timezone.localdate()
        rows = usage.usage_rows(user, organization, day)
        ctx["usage_rows"] = rows
        ctx["totals"] = usage.program_totals(rows)
        ctx["organization"] = organization
        reservations = self.visible(CapacityReservation.objects.select_related("organization")).filter(
            end__gte=day, end__lte=day + datetime.timedelta(days=EXPIRING_DAYS))
        if organization is not None:
            reservations = reservations.filter(organization=organization)
        # The reservations of the cycle shown, like the quotas.
        reservations = reservations.filter(cycle=ctx["cycle"]) if ctx["cycle"] else in_active_cycle(reservations)
        ctx["expiring"] = reservations
        ctx["can_edit_quotas"] = access.organization_ids(user, access.CHANGE, InstanceQuota) != frozenset()
        ctx["can_request"] = access.organization_ids(user, access.CHANGE, QuotaChangeRequest) != frozenset()
        ctx["pending_requests"] = self.visible(QuotaChangeRequest.objects.filter(status=RequestStatus.PENDING)).count()
        return ctx


class ReservationListView(ObjectListView):
    """Capacity reservations (On-Demand Capacity Reservations, Capacity Blocks for ML, training plans) of the
    cycle shown, soonest to end first, with what each backs."""

    queryset = CapacityReservation.objects.select_related("organization", "quota")
    filterset_class = CapacityReservationFilterSet
    template_name = "workloads/capacityreservation_list.html"
    partial_template_name = "workloads/htmx/reservation_table.html"
    csv_filename = "capacity-reservations.csv"
    csv_fields = (("Organization", "organization.name"), ("Reservation", "reservation_id"), ("Kind", "get_kind_display"),
                  ("Instance type", "instance_type_name"), ("Count", "count"), ("Region", "region"),
                  ("Zone", "availability_zone"), ("Start", "start"), ("End", "end"), ("Quota", "quota"),
                  ("Notes", "notes"))
    # The filter bar shows these; the id and the quota filters are for the API (and the URL).
    bar_fields = ("organization", "kind", "instance_type", "region", "ends_before")

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        ctx["bar_fields"] = self.bar_fields
        ctx["can_edit"] = access.organization_ids(self.request.user, access.CHANGE, CapacityReservation) != frozenset()
        ctx["today"] = timezone.localdate()
        return ctx


class _QuotaFormMixin:
    form_takes_user = True
    create_refusal = _("You may not create these.")

    def get_success_url(self):
        return f"{reverse('workloads:quota_list')}?organization={self.object.organization_id}"


class QuotaEditView(_QuotaFormMixin, ObjectEditView):
    queryset = InstanceQuota.objects.all()
    form_class = InstanceQuotaForm
    template_name = "workloads/instancequota_form.html"
    extra_context = {"title": _("Instance quota")}

    def form_valid(self, form):
        try:
            return super().form_valid(form)
        except ValidationError as exc:  # clusters grew between the form's check and the save's
            form.add_error(None, exc)
            return self.form_invalid(form)


class ReservationEditView(_QuotaFormMixin, ObjectEditView):
    queryset = CapacityReservation.objects.all()
    form_class = CapacityReservationForm
    template_name = "workloads/instancequota_form.html"
    extra_context = {"title": _("Capacity reservation")}


class ChangeRequestListView(ObjectListView):
    queryset = QuotaChangeRequest.objects.select_related("organization", "requested_by", "decided_by")
    filterset_class = QuotaChangeRequestFilterSet
    template_name = "workloads/quotachangerequest_list.html"
    csv_filename = "quota-change-requests.csv"
    csv_fields = (("Organization", "organization.name"), ("Instance type", "instance_type_name"), ("Region", "region"),
                  ("From", "current_count"), ("To", "requested_count"), ("Status", "get_status_display"),
                  ("Justification", "justification"), ("Requested by", "requested_by.display_name"),
                  ("Decided by", "decided_by.display_name"), ("Comment", "decision_comment"))

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        ctx["can_request"] = access.organization_ids(self.request.user, access.CHANGE, QuotaChangeRequest) != frozenset()
        return ctx


class ChangeRequestView(ObjectView):
    queryset = QuotaChangeRequest.objects.select_related("organization", "quota", "requested_by", "decided_by")
    template_name = "workloads/quotachangerequest_detail.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        req, user = self.object, self.request.user
        ctx["can_decide"] = req.status == RequestStatus.PENDING and access.can(user, access.APPROVE, req)
        if ctx["can_decide"]:
            ctx["facts"] = decision_facts.for_request(req, user)
        ctx["can_edit"] = req.status == RequestStatus.PENDING and access.can(user, access.CHANGE, req)
        ctx.setdefault("decision_form", DecisionForm())
        records = QuotaChangeRequest.history.filter(id=req.pk).select_related("history_user")
        ctx["history"] = history.entries(QuotaChangeRequest, records)
        return ctx


class ChangeRequestEditView(_QuotaFormMixin, ObjectEditView):
    queryset = QuotaChangeRequest.objects.all()
    form_class = QuotaChangeRequestForm
    template_name = "workloads/instancequota_form.html"
    extra_context = {"title": _("Quota change request")}

    def get_object(self, queryset=None):
        obj = super().get_object(queryset)
        if obj is not None and obj.status != RequestStatus.PENDING:
            raise PermissionDenied(gettext("A decided request cannot be changed."))
        return obj

    def get_form(self, form_class=None):
        form = super().get_form(form_class)
        if form.instance.pk is None:
            form.instance.requested_by = self.request.user
        return form

    def after_save(self, obj, created):
        services.after_submit(obj, self.request.user, created)

    def get_success_url(self):
        return self.object.get_absolute_url()


class ChangeRequestDecideView(ObjectActionView):
    """A program manager approves or rejects; the quota changes only on approval."""

    queryset = QuotaChangeRequest.objects.all()
    once = True

    def refuse(self, req):
        if not access.can(self.request.user, access.APPROVE, req):  # the archived cycle's reason first
            raise PermissionDenied(access.archived_refusal(req, access.APPROVE)
                                   or "Only program managers decide quota change requests.")

    def act(self, request, req):
        pk = req.pk
        form = DecisionForm(request.POST)
        error = None
        if form.is_valid():
            try:
                services.decide(req, request.user, form.cleaned_data["decision"] == "approve", form.cleaned_data["comment"])
            except ValidationError as exc:
                error = exc
            else:
                submissions.record(request, req)
                messages.success(request, gettext("Request approved.") if form.cleaned_data["decision"] == "approve"
                                 else gettext("Request rejected."))
                return redirect(req.get_absolute_url())
        if error is not None:
            for message in error.messages:
                form.add_error(None, message)
        view = ChangeRequestView()
        view.setup(request, pk=pk)
        view.object = view.get_object()
        ctx = view.get_context_data(object=view.object, decision_form=form)
        ctx["decision_errors"] = [m for messages_ in form.errors.values() for m in messages_]
        return render(request, view.template_name, ctx, status=400)
