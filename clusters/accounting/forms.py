"""The organization's accounting thresholds, as its lead SAs edit them."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from clusters.accounting.models import AccountingSettings


class AccountingSettingsForm(forms.ModelForm):
    class Meta:
        model = AccountingSettings
        fields = ["idle_busy_percent", "idle_hours", "stall_minutes"]
        # xgettext:no-python-format
        labels = {"idle_busy_percent": _("Idle under (% busy)"), "idle_hours": _("Idle for (hours)"),
                  "stall_minutes": _("Training stalled after (minutes)")}
