"""Forms for interactions. Choices are narrowed to what the user may touch."""
from __future__ import annotations

import re
from urllib.parse import unquote

from django import forms
from django.contrib.auth import get_user_model
from django.core.validators import MaxLengthValidator
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from portal.core import access
from portal.core.choices import MembershipRole
from portal.core.field_labels import FIELD_LABELS
from portal.core.forms import scope_form_choices
from portal.core.models import EscalationTarget, Organization
from workloads.interactions.models import ChallengeTag, Interaction
from workloads.models import Workload


class TagChoiceField(forms.ModelMultipleChoiceField):
    """Tags by slug, so an unknown one is named in the error."""

    default_error_messages = {"invalid_choice": _("Unknown challenge tag “%(value)s”: pick one of the taxonomy.")}

    def __init__(self, **kwargs):
        kwargs.setdefault("label", _("Tags"))
        super().__init__(ChallengeTag.objects.all(), to_field_name="slug", required=False,
                         widget=forms.CheckboxSelectMultiple, **kwargs)


class InteractionQuickForm(forms.ModelForm):
    """What a lead SA types in seconds on the organization page."""

    tags = TagChoiceField()

    class Meta:
        model = Interaction
        labels = FIELD_LABELS
        fields = ["kind", "summary", "severity", "visibility", "body", "tags"]
        widgets = {"body": forms.Textarea(attrs={"rows": 3})}


CASE_ID_FORMAT = "case-<account>-<year>-<16 characters>, e.g. case-123456789012-2026-3f2a9c1b7d4e5a60"
CASE_ID_IN_TEXT = re.compile(r"case-\d{11,12}-\d{4}-[0-9A-Za-z]{16}(?![0-9A-Za-z])")
DISPLAY_ID_IN_TEXT = re.compile(r"(?:displayId=|^)(\d{8,12})(?:\D|$)")


class InteractionForm(forms.ModelForm):
    tags = TagChoiceField()

    class Meta:
        model = Interaction
        labels = FIELD_LABELS
        fields = ["organization", "workload", "kind", "summary", "body", "occurred_at", "status", "severity", "owner",
                  "watchers", "tags", "support_case_id", "resolution", "lesson", "visibility"]
        widgets = {
            "occurred_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
            "body": forms.Textarea(attrs={"rows": 8}),
            "resolution": forms.Textarea(attrs={"rows": 3}),
            "lesson": forms.Textarea(attrs={"rows": 3}),
            "watchers": forms.SelectMultiple(attrs={"size": 4}),
        }

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        ids = access.organization_ids(user, access.CHANGE, Interaction)
        orgs = Organization.objects.all() if ids is None else Organization.objects.filter(pk__in=ids)
        if self.instance.pk:
            # An interaction stays in its organization.
            del self.fields["organization"]
        else:
            self.fields["organization"].queryset = orgs
        org_id = self._organization_id()
        org_ids = [org_id] if org_id is not None else list(orgs.values_list("pk", flat=True))
        # Workload and watchers come from the interaction's organization once it is known (the page reloads the
        # form when the organization changes); until then from the organizations the user logs for, and clean()
        # refuses a mix.
        people = get_user_model().objects.filter(memberships__organization__in=org_ids).distinct().order_by(
            "first_name", "last_name", "username")
        self.fields["owner"].queryset = people.filter(memberships__role=MembershipRole.LEAD_SA,
                                                      memberships__organization__in=org_ids).distinct()
        self.fields["watchers"].queryset = people
        self.fields["watchers"].required = False
        self.fields["workload"].queryset = (
            Workload.objects.filter(organization__in=org_ids).select_related("organization")
        )
        for name in ("owner", "watchers"):
            self.fields[name].label_from_instance = lambda u: u.display_name
        self.fields["support_case_id"].help_text = (
            gettext("The case id (%(format)s), or the case page's URL that contains it.") % {"format": CASE_ID_FORMAT})
        case = self.fields["support_case_id"]  # a pasted URL is longer than the id it holds: no length limit here
        case.max_length = None
        case.validators = [v for v in case.validators if not isinstance(v, MaxLengthValidator)]
        case.widget.attrs.pop("maxlength", None)
        scope_form_choices(self, user, org_id)

    def clean_support_case_id(self) -> str:
        """Accept the case id however it is pasted: alone, inside the console's case URL, or with text around."""
        raw = (self.cleaned_data.get("support_case_id") or "").strip()
        if not raw:
            return ""
        found = CASE_ID_IN_TEXT.search(unquote(raw))
        if found:
            return found.group(0)
        display = DISPLAY_ID_IN_TEXT.search(unquote(raw))
        if display:
            raise forms.ValidationError(
                gettext("%(display)s is the case's display id. Paste its case id instead: the “Case ID” on the "
                        "case page in the Support Center, starting with case-.") % {"display": display.group(1)})
        raise forms.ValidationError(gettext("Expected %(format)s. No AWS support case id in “%(text)s”.")
                                    % {"format": CASE_ID_FORMAT, "text": raw[:80]})

    def _organization_id(self) -> int | None:
        """The organization the form is about: the instance's, the one posted, or the one it was opened for."""
        if self.instance.pk:
            return self.instance.organization_id
        raw = self.data.get(self.add_prefix("organization")) if self.is_bound else self.initial.get("organization")
        try:
            org_id = int(getattr(raw, "pk", raw))
        except (TypeError, ValueError):
            return None
        return org_id if self.fields["organization"].queryset.filter(pk=org_id).exists() else None

    def clean(self):
        data = super().clean()
        org = data.get("organization") or (self.instance.organization if self.instance.pk else None)
        owner = data.get("owner")
        if org is not None and owner is not None and not owner.memberships.filter(
            organization=org, role=MembershipRole.LEAD_SA
        ).exists():
            self.add_error("owner", gettext("The owner must be a lead SA of the organization."))
        workload = data.get("workload")
        if org is not None and workload is not None and workload.organization_id != org.pk:
            self.add_error("workload", gettext("%(workload)s is not a workload of %(org)s.") % {"workload": workload, "org": org.name})
        watchers = data.get("watchers") or []
        if org is not None and watchers:
            outside = [w.display_name for w in watchers if not w.memberships.filter(organization=org).exists()]
            if outside:
                self.add_error("watchers", gettext("Not members of %(org)s: %(names)s.")
                               % {"org": org.name, "names": ", ".join(outside)})
        return data


class CommentForm(forms.Form):
    body = forms.CharField(label=_("Comment"), widget=forms.Textarea(attrs={"rows": 3}), max_length=20000)
    internal = forms.BooleanField(
        label=_("Internal (lead SAs and program managers only)"), required=False, initial=False
    )


class EscalateForm(forms.Form):
    target = forms.ModelChoiceField(
        queryset=None, required=False, to_field_name="slug", label=_("Escalate to"),
        help_text=_("The team that should answer; the account manager triages when none is chosen."),
    )
    reason = forms.CharField(label=_("Question for the team"), widget=forms.Textarea(attrs={"rows": 3}),
                             max_length=5000)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["target"].queryset = EscalationTarget.objects.all()
