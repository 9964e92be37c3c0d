"""Forms for workloads, quotas, reservations and quota change requests. Validation lives in the models' clean()."""
from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.utils.text import format_lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from portal.core import access
from portal.core.choices import MembershipRole
from portal.core.field_labels import FIELD_LABELS
from portal.core.models import Organization
from workloads.choices import FRAMEWORKS, LANGUAGES, SOFTWARE_COMPONENTS
from workloads.models import CapacityReservation, InstanceQuota, QuotaChangeRequest, Workload
from workloads.validators import instance_type_choices


class ComponentListField(forms.CharField):
    """One component per line, ``name version`` (``other:Label version`` for something outside the list)."""

    widget = forms.Textarea(attrs={"rows": 4})

    def __init__(self, vocabulary: dict[str, str], **kwargs):
        self.vocabulary = vocabulary
        kwargs.setdefault("required", False)
        kwargs.setdefault("help_text", format_lazy(_("One per line: name and version, e.g. “{example} 1.0”. "
                                                     "Known names: {names}. For anything else: other:Name version."),
                                                   example=next(iter(vocabulary)), names=", ".join(vocabulary)))
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if isinstance(value, list):
            lines = []
            for item in value:
                name = f"other:{item.get('label', '')}" if item.get("name") == "other" else item.get("name", "")
                lines.append(f"{name} {item.get('version', '')}".strip())
            return "\n".join(lines)
        return value

    def to_python(self, value):
        if isinstance(value, list):
            return value
        items = []
        for n, line in enumerate((value or "").splitlines(), start=1):
            line = line.strip()
            if not line:
                continue
            name, _, version = line.partition(" ")
            item = {"name": name.lower(), "version": version.strip()}
            if name.lower().startswith("other:"):
                item = {"name": "other", "label": name[6:].strip(), "version": version.strip()}
            if item["name"] not in self.vocabulary:
                raise ValidationError(gettext("Line %(n)s: unknown name “%(name)s”. Use one of %(names)s.")
                                      % {"n": n, "name": name, "names": ", ".join(self.vocabulary)})
            items.append(item)
        return items


class LanguagesField(forms.MultipleChoiceField):
    def __init__(self, **kwargs):
        super().__init__(choices=list(LANGUAGES.items()), required=False, widget=forms.CheckboxSelectMultiple, **kwargs)


COUNT_FIELDS = ("count", "requested_count", "target_instance_count")


class ModelCleanErrorsMixin:
    """Counts must be at least 1 (one message for zero and negatives); model clean() errors about fields this
    form does not show go to the form's general errors."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in COUNT_FIELDS:
            if name in self.fields:
                old = self.fields[name]
                self.fields[name] = forms.IntegerField(
                    label=old.label, help_text=old.help_text, required=old.required, min_value=1,
                    error_messages={"min_value": _("Must be at least 1.")},
                )

    def _update_errors(self, errors):
        if hasattr(errors, "error_dict"):
            moved = {}
            for name, messages in list(errors.error_dict.items()):
                if name != NON_FIELD_ERRORS and name not in self.fields:
                    moved.setdefault(NON_FIELD_ERRORS, []).extend(messages)
                    del errors.error_dict[name]
            for messages in moved.values():
                errors.error_dict.setdefault(NON_FIELD_ERRORS, []).extend(messages)
        super()._update_errors(errors)


def _writable_organizations(user, model):
    ids = access.organization_ids(user, access.CHANGE, model)
    qs = Organization.objects.restrict(user)
    return qs if ids is None else qs.filter(pk__in=ids)


WORKLOAD_SECTIONS = {
    "model": ["name", "model_family", "architecture", "architecture_other", "parameters_billions", "modality",
              "target_languages", "training_stage", "description"],
    "software": ["frameworks", "software"],
    "infrastructure": ["orchestrator", "orchestrator_other", "target_instance_type", "target_instance_count"],
    "storage": ["fsx_lustre_size_gib", "fsx_lustre_throughput", "s3_bucket", "s3_prefix", "data_repository_path",
                "openzfs_home_gib"],
    "program": ["status", "lead_sa"],
}


class WorkloadForm(ModelCleanErrorsMixin, forms.ModelForm):
    frameworks = ComponentListField(FRAMEWORKS, label=_("Distributed training frameworks"))
    software = ComponentListField(SOFTWARE_COMPONENTS, label=_("Software components"))
    target_languages = LanguagesField(label=_("Target languages"))
    target_instance_type = forms.ChoiceField(choices=(), label=_("Target instance type"))

    class Meta:
        model = Workload
        labels = FIELD_LABELS
        fields = ["organization", *[f for fields in WORKLOAD_SECTIONS.values() for f in fields]]

    def __init__(self, *args, user=None, section: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["target_instance_type"].choices = instance_type_choices()
        if self.instance.pk:
            del self.fields["organization"]
            orgs = Organization.objects.filter(pk=self.instance.organization_id)
        else:
            orgs = _writable_organizations(user, Workload)
            self.fields["organization"].queryset = orgs
        if "lead_sa" in self.fields:
            self.fields["lead_sa"].queryset = get_user_model().objects.filter(
                memberships__organization__in=orgs, memberships__role=MembershipRole.LEAD_SA
            ).distinct().order_by("username")
        if section:
            keep = set(WORKLOAD_SECTIONS[section])
            for name in list(self.fields):
                if name not in keep:
                    del self.fields[name]


class InstanceQuotaForm(ModelCleanErrorsMixin, forms.ModelForm):
    instance_type_name = forms.ChoiceField(choices=(), label=_("Instance type name"))

    class Meta:
        model = InstanceQuota
        labels = FIELD_LABELS
        fields = ["organization", "instance_type_name", "region", "count", "start", "end", "notes"]
        widgets = {"start": forms.DateInput(attrs={"type": "date"}), "end": forms.DateInput(attrs={"type": "date"})}

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["instance_type_name"].choices = instance_type_choices()
        self.fields["organization"].queryset = _writable_organizations(user, InstanceQuota)


class CapacityReservationForm(ModelCleanErrorsMixin, forms.ModelForm):
    instance_type_name = forms.ChoiceField(choices=(), label=_("Instance type name"))

    class Meta:
        model = CapacityReservation
        labels = FIELD_LABELS
        fields = ["organization", "reservation_id", "kind", "instance_type_name", "count", "region", "availability_zone",
                  "start", "end", "quota", "notes"]
        widgets = {"start": forms.DateInput(attrs={"type": "date"}), "end": forms.DateInput(attrs={"type": "date"})}

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["instance_type_name"].choices = instance_type_choices()
        orgs = _writable_organizations(user, CapacityReservation)
        self.fields["organization"].queryset = orgs
        self.fields["quota"].queryset = InstanceQuota.objects.filter(organization__in=orgs).select_related("organization")


class QuotaChangeRequestForm(ModelCleanErrorsMixin, forms.ModelForm):
    instance_type_name = forms.ChoiceField(choices=(), required=False, label=_("Instance type name"))

    class Meta:
        model = QuotaChangeRequest
        labels = FIELD_LABELS
        fields = ["organization", "quota", "instance_type_name", "region", "requested_count", "start", "end", "justification"]
        widgets = {"start": forms.DateInput(attrs={"type": "date"}), "end": forms.DateInput(attrs={"type": "date"})}

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["instance_type_name"].choices = [("", _("— (from the quota)")), *instance_type_choices()]
        orgs = _writable_organizations(user, QuotaChangeRequest)
        self.fields["organization"].queryset = orgs
        self.fields["quota"].queryset = InstanceQuota.objects.filter(organization__in=orgs).select_related("organization")
        self.fields["quota"].label_from_instance = lambda q: f"{q.organization.name}: {q}"


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=[("approve", _("Approve")), ("reject", _("Reject"))], widget=forms.RadioSelect,
                                 label=_("Decision"))
    comment = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False, label=_("Comment"))
