"""Forms of the engagement pages."""
from django import forms
from django.utils.translation import gettext_lazy as _

from portal.core.field_labels import FIELD_LABELS
from portal.engagement.choices import MilestoneKind
from portal.engagement.models import TrainedModel
from portal.engagement.models.outcome import not_in_future


class TransitionForm(forms.Form):
    answer = forms.CharField(label=_("Answer"), widget=forms.Textarea(attrs={"rows": 5}), max_length=20000,
                             required=False, help_text=_("Markdown. Internal: the lead SA decides what to share."))


class MilestonesForm(forms.Form):
    """One optional date per milestone; an emptied date removes the milestone."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for kind, label in MilestoneKind.choices:
            self.fields[kind] = forms.DateField(label=label, required=False, validators=[not_in_future],
                                                widget=forms.DateInput(attrs={"type": "date"}))


class TrainedModelForm(forms.ModelForm):
    class Meta:
        from portal.engagement.models import TrainedModel

        model = TrainedModel
        labels = FIELD_LABELS
        fields = ["name", "parameters_billions", "modality", "tokens_billions", "instance_type", "instance_count",
                  "release_url", "released_on", "notes"]
        widgets = {"released_on": forms.DateInput(attrs={"type": "date"}), "notes": forms.Textarea(attrs={"rows": 3})}

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        org_id = self.instance.organization_id
        if org_id and TrainedModel.objects.filter(organization_id=org_id, name__iexact=name).exclude(
                pk=self.instance.pk).exists():
            raise forms.ValidationError(_("This organization already recorded a model with this name."))
        return name
