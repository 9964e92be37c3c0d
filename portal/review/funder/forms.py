"""Forms of the report to the funder: a new draft (program managers), a part's narratives (its lead SAs), a
comment on a part, and what a correction changes."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from portal.core.field_labels import FIELD_LABELS
from portal.core.models import Cycle
from portal.review.funder.models import FunderReport, FunderReportPart


class FunderReportForm(forms.ModelForm):
    class Meta:
        model = FunderReport
        fields = ["title", "kind", "period_start", "period_end", "program_cycle"]
        labels = {**FIELD_LABELS, "period_start": _("First day"), "period_end": _("Last day"),
                  "program_cycle": _("Cycle")}
        widgets = {f: forms.DateInput(attrs={"type": "date"}) for f in ("period_start", "period_end")}
        help_texts = {"program_cycle": _("Its organizations have a part each (empty: the active cycle's).")}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["program_cycle"].queryset = Cycle.objects.order_by("-number")
        self.fields["program_cycle"].required = False

    def clean(self):
        data = super().clean()
        if data.get("period_start") and data.get("period_end") and data["period_end"] < data["period_start"]:
            self.add_error("period_end", gettext("A period ends after it starts."))
        return data


class FunderReportPartForm(forms.ModelForm):
    class Meta:
        model = FunderReportPart
        fields = ["narrative", "narrative_ja"]
        labels = {"narrative": _("Narrative (English)"), "narrative_ja": _("Narrative (Japanese)")}
        widgets = {f: forms.Textarea(attrs={"rows": 8}) for f in ("narrative", "narrative_ja")}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["narrative"].required = True  # the report prints it: an empty save is a mistake


class CommentForm(forms.Form):
    text = forms.CharField(label=_("Comment"), widget=forms.Textarea(attrs={"rows": 3}), max_length=4000)


class CorrectForm(forms.Form):
    note = forms.CharField(label=_("What the correction changes"), widget=forms.Textarea(attrs={"rows": 3}),
                           max_length=4000)


class SendForm(forms.Form):
    languages = forms.MultipleChoiceField(label=_("Languages"), choices=[("en", _("English")), ("ja", _("Japanese"))],
                                          widget=forms.CheckboxSelectMultiple, initial=["en", "ja"])
    superseded_ok = forms.BooleanField(label=_("Send this version although it is superseded (the e-mail says so)"),
                                       required=False)
    note = forms.CharField(label=_("Message to the funder"), required=False, widget=forms.Textarea(attrs={"rows": 2}),
                           max_length=2000)
