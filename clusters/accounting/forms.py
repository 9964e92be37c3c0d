"""The organization's accounting thresholds, as its lead SAs edit them."""
from __future__ import annotations

from django import forms

from clusters.accounting.models import AccountingSettings


class AccountingSettingsForm(forms.ModelForm):
    class Meta:
        model = AccountingSettings
        fields = ["idle_busy_percent", "idle_hours", "stall_minutes"]
        labels = {"idle_busy_percent": "Idle under (% busy)", "idle_hours": "Idle for (hours)",
                  "stall_minutes": "Training stalled after (minutes)"}
