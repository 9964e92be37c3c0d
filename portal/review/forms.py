"""Forms of the weekly review: freezing a week, its notes, its action items."""
from __future__ import annotations

from django import forms
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from portal.core.choices import MembershipRole
from portal.core.field_labels import FIELD_LABELS
from portal.core.models import User
from portal.review.models import ActionItem, WeeklyReview


class NotesForm(forms.ModelForm):
    class Meta:
        model = WeeklyReview
        labels = FIELD_LABELS
        fields = ["notes"]
        widgets = {"notes": forms.Textarea(attrs={"rows": 6})}


def owner_choices():
    """People who can own an action item: program managers, lead SAs, staff."""
    return User.objects.filter(
        Q(is_program_manager=True) | Q(is_staff=True) | Q(memberships__role=MembershipRole.LEAD_SA), is_active=True
    ).distinct().order_by("last_name", "username")


class OwnerField(forms.ModelChoiceField):
    def label_from_instance(self, obj) -> str:
        return obj.display_name


class ActionItemForm(forms.ModelForm):
    owner = OwnerField(queryset=User.objects.none(), required=True, label=_("Owner"))
    due = forms.DateField(required=True, widget=forms.DateInput(attrs={"type": "date"}), label=_("Due"))

    class Meta:
        model = ActionItem
        labels = FIELD_LABELS
        fields = ["title", "owner", "due"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["owner"].queryset = owner_choices()
