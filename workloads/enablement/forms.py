"""Forms of enablement: a session with its audience, and one attendee's record."""
from __future__ import annotations

from django import forms

from portal.core import access
from portal.core.field_labels import FIELD_LABELS
from portal.core.models import Organization
from workloads.enablement.models import EnablementAttendance, EnablementSession


class EnablementSessionForm(forms.ModelForm):
    class Meta:
        model = EnablementSession
        labels = FIELD_LABELS
        fields = ["kind", "topic", "date", "description", "audience"]
        widgets = {"date": forms.DateInput(attrs={"type": "date"}), "audience": forms.CheckboxSelectMultiple}

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        ids = access.organization_ids(user, access.CHANGE, EnablementSession)
        if ids is not None:
            self.fields["audience"].queryset = Organization.objects.filter(pk__in=ids)
            self._fixed = list(self.instance.audience.exclude(pk__in=ids)) if self.instance.pk else []
        else:
            self._fixed = []

    def audience_with_fixed(self):
        """Organizations the user cannot choose stay in the audience they were already in."""
        return list(self.cleaned_data["audience"]) + self._fixed


class AttendanceForm(forms.ModelForm):
    class Meta:
        model = EnablementAttendance
        labels = FIELD_LABELS
        fields = ["organization", "attendee", "satisfaction", "comment"]
        widgets = {"satisfaction": forms.NumberInput(attrs={"min": 1, "max": 5}), "comment": forms.TextInput}

    def __init__(self, *args, user=None, session=None, **kwargs):
        super().__init__(*args, **kwargs)
        ids = access.organization_ids(user, access.CHANGE, EnablementAttendance)
        orgs = session.audience.all() if session is not None else Organization.objects.all()
        if ids is not None:
            orgs = orgs.filter(pk__in=ids)
        self.fields["organization"].queryset = orgs
