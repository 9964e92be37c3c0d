"""The proposal form (nodes, kind, why) and the consent policy form a lead SA fills in with the customer."""
from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from clusters.remediation.choices import AUTOMATIC_CHOICES, ActionKind
from clusters.remediation.models import RemediationPolicy
from portal.core.field_labels import FIELD_LABELS


class ProposeForm(forms.Form):
    nodes = forms.MultipleChoiceField(choices=(), label=_("Nodes"), help_text=_("Nodes as the health reports name them."))
    kind = forms.ChoiceField(choices=ActionKind.choices, label=_("Kind"))
    reason = forms.CharField(required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}),
                             label=_("Reason"))

    def __init__(self, *args, hostnames=(), kinds=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["nodes"].choices = [(h, h) for h in hostnames]
        if kinds:
            self.fields["kind"].choices = [(k, ActionKind(k).label) for k in kinds]


class DeclineForm(forms.Form):
    why = forms.CharField(required=False, max_length=250, label=_("Why"))


class RemediationPolicyForm(forms.ModelForm):
    automatic_kinds = forms.MultipleChoiceField(choices=AUTOMATIC_CHOICES, required=False, label=_("Automatic kinds"),
                                                widget=forms.CheckboxSelectMultiple)

    class Meta:
        model = RemediationPolicy
        labels = FIELD_LABELS
        # Who agreed is not typed in: a change that widens the policy waits for a customer engineer's approval.
        fields = ["mode", "automatic_kinds", "max_nodes", "cooldown_hours"]

    def clean_max_nodes(self):
        value = self.cleaned_data["max_nodes"]
        if not 1 <= value <= 1000:
            # xgettext:no-python-format
            raise forms.ValidationError(_("Between 1 and 1000 (the portal also keeps it under 10 % of each cluster)."))
        return value

    def clean_cooldown_hours(self):
        value = self.cleaned_data["cooldown_hours"]
        floor = settings.REMEDIATION_MIN_COOLDOWN_HOURS
        if value < floor:
            raise forms.ValidationError(_("At least %(hours)s hours: a node just remediated is watched that long."),
                                        params={"hours": floor})
        return value


class PolicyChangeDeclineForm(forms.Form):
    why = forms.CharField(required=False, max_length=250, label=_("Why"))
