"""The organization's accounting thresholds (idle capacity, stalled training): lead SAs edit them, with the
version they read (``portal.core.versions``)."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views import View

from clusters.accounting import thresholds
from clusters.accounting.forms import AccountingSettingsForm
from clusters.accounting.models import AccountingSettings
from portal.core import access, versions
from portal.core.generic import get_object
from portal.core.models import Organization


def _organization(request, slug: str) -> Organization:
    organization = get_object(request, Organization.objects.all(), slug=slug)
    if not access.can_in_organization(request.user, access.CHANGE, AccountingSettings, organization.pk):
        raise PermissionDenied(gettext("Only the organization's lead SAs set its accounting thresholds."))
    return organization


def _defaults() -> dict:
    d = thresholds.defaults()
    return {"idle_busy_percent": int(d.idle_busy_share * 100), "idle_hours": d.idle_hours,
            "stall_minutes": d.stall_minutes}


def _settings_of(organization: Organization) -> AccountingSettings:
    """The stored row, or an unsaved one carrying the defaults."""
    return (AccountingSettings.objects.filter(organization=organization).first()
            or AccountingSettings(organization=organization, **_defaults()))


class AccountingSettingsView(View):
    template_name = "accounting/settings.html"

    def get(self, request, slug):
        organization = _organization(request, slug)
        row = _settings_of(organization)
        form = AccountingSettingsForm(instance=row)
        versions.add_field(form, row)
        if row.pk is None:  # the defaults' version: the first save is checked against the row it makes
            form.fields[versions.FIELD] = forms.CharField(widget=forms.HiddenInput, required=False,
                                                          initial=versions.page_token(form, row))
        return render(request, self.template_name, {"organization": organization, "form": form})

    def post(self, request, slug):
        organization = _organization(request, slug)
        # The first save makes the row with the defaults the form was read at (its version is theirs), so a
        # second first save made from the same page is checked against what the first one stored.
        row, _ = AccountingSettings.objects.get_or_create(organization=organization, defaults=_defaults())
        form = AccountingSettingsForm(request.POST, instance=row)
        versions.add_field(form, row)
        if not form.is_valid():
            return render(request, self.template_name, {"organization": organization, "form": form}, status=400)
        with transaction.atomic():
            changes = versions.conflict(form, row)  # locks the row
            if changes is None:
                form.save()
        if changes is not None:
            stored = form.current_instance
            again = AccountingSettingsForm(versions.reapply_data(form, stored), instance=stored)
            versions.add_field(again, stored)
            return render(request, self.template_name, {"organization": organization, "form": again,
                                                        "version_conflict": changes}, status=409)
        messages.success(request, gettext("Saved the accounting thresholds."))
        return redirect("portal:organization_detail", slug=organization.slug)
