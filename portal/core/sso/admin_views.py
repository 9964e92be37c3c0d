"""Designating an organization's administrators: program managers and staff name a customer of an organization
who may then register and change that organization's identity provider (and nothing more). Each designation and
removal is recorded in the audit trail and needs a recent second factor (``portal.core.factors.policy``)."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Q
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views import View

from portal.core import access, submissions
from portal.core.models import Organization
from portal.core.sso import registration


class DesignationForm(forms.Form):
    organization = forms.ModelChoiceField(label=_("Organization"), queryset=Organization.objects.none(),
                                          empty_label=None)
    person = forms.CharField(label=_("Person"), max_length=254,
                             help_text=_("The username or e-mail address of a customer of that organization."))

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["organization"].queryset = Organization.objects.restrict(user, access.VIEW).order_by("name")

    def clean_person(self):
        name = self.cleaned_data["person"].strip()
        people = get_user_model().objects.filter(Q(username__iexact=name) | Q(email__iexact=name), is_active=True)
        person = people.order_by("id").first()
        if person is None:
            raise ValidationError(gettext("No active account has that username or e-mail address."))
        return person


class ProgramManagersOnly(View):
    def dispatch(self, request, *args, **kwargs):
        if not (access.is_program_manager(request.user) or access.is_staff(request.user)):
            raise PermissionDenied(gettext("Program managers and staff designate organization administrators."))
        return super().dispatch(request, *args, **kwargs)


class AdministratorListView(ProgramManagersOnly):
    """The designations, and the form that adds one."""

    template_name = "sso/administrator_list.html"

    def rows(self):
        return (registration.administrators().restrict(self.request.user, access.VIEW)
                .select_related("user", "organization").order_by("organization__name", "user__username"))

    def get(self, request):
        return render(request, self.template_name, {"rows": self.rows(), "form": DesignationForm(user=request.user)})

    @submissions.once
    def post(self, request):
        form = DesignationForm(request.POST, user=request.user)
        if form.is_valid():
            try:
                row = registration.designate(form.cleaned_data["organization"], form.cleaned_data["person"], request)
            except registration.DesignationRefused as exc:
                form.add_error("person", str(exc))
            else:
                submissions.record(request, row, request.path)
                messages.success(request, gettext("%(person)s now administers the sign-in of %(organization)s.")
                                 % {"person": row.user.get_username(), "organization": row.organization.name})
                return redirect("sso:administrator_list")
        return render(request, self.template_name, {"rows": self.rows(), "form": form}, status=400)


class AdministratorRemoveView(ProgramManagersOnly):
    def post(self, request, pk: int):
        row = get_object_or_404(registration.administrators().restrict(request.user, access.VIEW), pk=pk)
        registration.remove_designation(row, request)
        messages.success(request, gettext("%(person)s no longer administers the sign-in of %(organization)s.")
                         % {"person": row.user.get_username(), "organization": row.organization.name})
        return redirect("sso:administrator_list")
