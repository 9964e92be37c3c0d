"""Pages of the reservation requests awards made: the list (an organization's people see their own, program
managers all), a request with its history, and the program manager's two answers: the reservation bought
(fulfil) or not requested (decline). The rules are in ``requests``; a refusal is a message on the page."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views import View

from clusters.accounting import requests
from clusters.accounting.models import RequestState, ReservationRequest
from portal.core import access, submissions
from portal.core.generic import ObjectListView, ObjectView, get_object


class FulfilForm(forms.Form):
    reservation_id = forms.CharField(label=_("Reservation id or training plan ARN"), max_length=200)
    availability_zone = forms.CharField(label=_("Availability zone"), max_length=32)
    note = forms.CharField(label=_("Note"), required=False, widget=forms.Textarea(attrs={"rows": 2}), max_length=2000)


class DeclineForm(forms.Form):
    note = forms.CharField(label=_("Why it is not requested"), widget=forms.Textarea(attrs={"rows": 2}),
                           max_length=2000)


class ReservationRequestListView(ObjectListView):
    queryset = ReservationRequest.objects.select_related("organization", "cycle", "reservation")
    template_name = "accounting/request_list.html"
    partial_template_name = "accounting/htmx/request_table.html"
    csv_fields = (("organization", "organization.name"), ("instance_type", "instance_type_name"),
                  ("region", "region"), ("count", "count"), ("weeks", "weeks"), ("start", "start"), ("end", "end"),
                  ("offering", "offering_id"), ("state", "state"), ("reservation", "reservation.reservation_id"))
    csv_filename = "reservation-requests.csv"

    def get_queryset(self):
        qs = super().get_queryset()
        state = self.request.GET.get("state")
        return qs.filter(state=state) if state in RequestState.values else qs


class ReservationRequestView(ObjectView):
    queryset = ReservationRequest.objects.select_related("organization", "cycle", "reservation", "quota",
                                                        "decided_by")
    template_name = "accounting/request_detail.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        request = self.object
        may_act = request.state == RequestState.PENDING and access.can(self.request.user, access.CHANGE, request)
        ctx.update(may_act=may_act, fulfil_form=FulfilForm(), decline_form=DeclineForm(),
                   history=request.history.select_related("history_user").order_by("-history_date")[:10])
        return ctx


def _request(http_request, pk: int) -> ReservationRequest:
    return get_object(http_request, ReservationRequest.objects.all(), access.CHANGE,
                      gettext("Only a program manager fulfils or declines a reservation request."), pk=pk)


class ReservationRequestFulfilView(View):
    @submissions.once
    def post(self, http_request, pk):
        found = _request(http_request, pk)
        form = FulfilForm(http_request.POST)
        if not form.is_valid():
            messages.error(http_request, gettext("Give the reservation's id and its availability zone."))
            return redirect(found.get_absolute_url())
        try:
            reservation = requests.fulfil(found, http_request.user, form.cleaned_data["reservation_id"],
                                          form.cleaned_data["availability_zone"], form.cleaned_data["note"])
        except requests.RequestError as exc:
            messages.error(http_request, str(exc))
            return redirect(found.get_absolute_url())
        except ValidationError as exc:
            messages.error(http_request, requests.validation_text(exc))
            return redirect(found.get_absolute_url())
        submissions.record(http_request, reservation, found.get_absolute_url())
        messages.success(http_request, gettext("Reservation %(reservation)s recorded.")
                         % {"reservation": reservation.reservation_id})
        return redirect(found.get_absolute_url())


class ReservationRequestDeclineView(View):
    def post(self, http_request, pk):
        found = _request(http_request, pk)
        form = DeclineForm(http_request.POST)
        try:
            requests.decline(found, http_request.user, form.data.get("note", "") if not form.is_valid()
                             else form.cleaned_data["note"])
        except requests.RequestError as exc:
            messages.error(http_request, str(exc))
            return redirect(found.get_absolute_url())
        messages.success(http_request, gettext("The request is marked not requested."))
        return redirect(found.get_absolute_url())
