"""Forms of the call area. Capacity lines are typed one a line and parsed by ``lines.parse``; criteria one a line
as ``name: weight``."""
from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from portal.core.field_labels import FIELD_LABELS
from portal.engagement.calls import lines
from portal.engagement.calls.choices import CallStatus
from portal.engagement.calls.models import Application, Call

LINES_HELP = _("One a line: instances, instance type, region, weeks — for example “16 p5.48xlarge ap-northeast-1 8”.")


class LinesField(forms.CharField):
    widget = forms.Textarea(attrs={"rows": 4})

    def prepare_value(self, value):
        return lines.as_text(value) if isinstance(value, list) else value

    def to_python(self, value):
        return lines.parse(super().to_python(value) or "")


def parse_criteria(text: str) -> list[dict]:
    found = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        name, sep, weight = raw.rpartition(":")
        try:
            value = float(weight)
        except ValueError:
            value = -1
        if not sep or not name.strip() or value <= 0:
            raise forms.ValidationError(gettext("Write each criterion as “name: weight” with a positive weight "
                                                "(“%(line)s”).") % {"line": raw.strip()})
        found.append({"name": name.strip(), "weight": value})
    if len({c["name"] for c in found}) != len(found):
        raise forms.ValidationError(gettext("Each criterion is named once."))
    return found


class CriteriaField(forms.CharField):
    widget = forms.Textarea(attrs={"rows": 4})

    def prepare_value(self, value):
        return "\n".join(f"{c['name']}: {c['weight']:g}" for c in value) if isinstance(value, list) else value

    def to_python(self, value):
        return parse_criteria(super().to_python(value) or "")


LABELS = {**FIELD_LABELS, "title": _("Title"), "status": _("Status"), "opens_on": _("Opens on"),
          "closes_on": _("Closes on"), "next_cycle_starts_on": _("Next cycle starts on"),
          "reservations_planned": _("Reservations planned"), "questions": _("Questions"),
          "parameters_billions": _("Parameters (billions)"), "tokens_billions": _("Tokens (billions)"),
          "modality": _("Modality"), "frameworks": _("Frameworks"), "data_plan": _("Data and storage plan"),
          "milestones_plan": _("Milestones"), "answers": _("Answers to the call's questions")}


class CallForm(forms.ModelForm):
    offer = LinesField(label=_("Capacity on offer"), help_text=LINES_HELP)
    criteria = CriteriaField(label=_("Review criteria"), help_text=_("One a line: “name: weight”."))

    class Meta:
        model = Call
        labels = LABELS
        fields = ["title", "description", "status", "opens_on", "closes_on", "next_cycle_starts_on", "offer",
                  "reservations_planned", "questions", "criteria"]
        widgets = {f: forms.DateInput(attrs={"type": "date"}) for f in ("opens_on", "closes_on", "next_cycle_starts_on")}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Awarded is what the award makes, never a choice on the form.
        self.fields["status"].choices = [c for c in CallStatus.choices if c[0] != CallStatus.AWARDED]

    def clean(self):
        data = super().clean()
        if data.get("opens_on") and data.get("closes_on") and data["closes_on"] < data["opens_on"]:
            self.add_error("closes_on", gettext("A call closes after it opens."))
        return data


class ApplicationForm(forms.ModelForm):
    requested = LinesField(label=_("Capacity asked for"), help_text=LINES_HELP, required=False)

    class Meta:
        model = Application
        labels = LABELS
        fields = ["architecture", "parameters_billions", "tokens_billions", "modality", "frameworks", "requested",
                  "data_plan", "milestones_plan", "answers"]
        widgets = {f: forms.Textarea(attrs={"rows": 4}) for f in ("data_plan", "milestones_plan", "answers")}


class AssignForm(forms.Form):
    reviewer = forms.ModelChoiceField(label=_("Reviewer"), queryset=get_user_model().objects.none())

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reviewer"].queryset = get_user_model().objects.filter(is_active=True).order_by("username")


class ConflictForm(forms.Form):
    note = forms.CharField(label=_("Why"), widget=forms.Textarea(attrs={"rows": 2}), required=False, max_length=2000)


class ReviewForm(forms.Form):
    """One score field per criterion of the call, a comment for the program manager, a summary for the applicant."""

    comment = forms.CharField(label=_("Comment for the program manager"), required=False,
                              widget=forms.Textarea(attrs={"rows": 3}), max_length=20000)
    summary = forms.CharField(label=_("Summary the applicant may read"), required=False,
                              widget=forms.Textarea(attrs={"rows": 3}), max_length=20000)

    def __init__(self, *args, call: Call, **kwargs):
        super().__init__(*args, **kwargs)
        self.criteria = [c["name"] for c in call.criteria]
        for i, name in enumerate(self.criteria):
            self.fields[f"score_{i}"] = forms.IntegerField(label=name, min_value=0, max_value=5)

    def scores(self) -> dict[str, int]:
        return {name: self.cleaned_data[f"score_{i}"] for i, name in enumerate(self.criteria)}


class AwardForm(forms.Form):
    """One lines field per submitted application (empty: declined), and a note for the applicants."""

    note = forms.CharField(label=_("Note for the applicants"), required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, applications, **kwargs):
        super().__init__(*args, **kwargs)
        self.applications = list(applications)
        for a in self.applications:
            self.fields[f"award_{a.pk}"] = LinesField(label=str(a.organization), required=False,
                                                      initial=a.requested, help_text=LINES_HELP)

    def decisions(self) -> dict[int, list[dict]]:
        return {a.pk: self.cleaned_data[f"award_{a.pk}"] for a in self.applications}
