"""One way to offer choices: every related-row choice in a form or filter comes through the access policy and,
once the organization is known, from that organization only.

Form fields and filters declared with a plain ``Model.objects.all()`` would otherwise list every
organization's rows (a customer's quota filter naming other organizations' quotas, a lead SA's interaction form
offering another organization's workloads). ``RestrictedFilterSet`` and ``scope_form_choices`` narrow them in one
place; forms that know the organization narrow further with ``for_organization``.
"""
from __future__ import annotations

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from portal.core import access
from portal.core.field_labels import FIELD_LABELS


def for_organization(queryset: QuerySet, organization_id: int | None) -> QuerySet:
    """Rows of ``queryset`` that belong to one organization (by the policy's path); unchanged without one."""
    rule = access.rule_for(queryset.model)
    if organization_id is None or rule is None or rule.path is None:
        return queryset
    return queryset.filter(**{rule.path or "pk": organization_id})


def restricted(queryset: QuerySet, user, organization_id: int | None = None) -> QuerySet:
    """The rows of ``queryset`` the user may see (for models under the policy), in the organization if given."""
    if hasattr(queryset, "restrict"):
        queryset = queryset.restrict(user, access.VIEW)
    return for_organization(queryset, organization_id)


def scope_form_choices(form, user, organization_id: int | None = None) -> None:
    """Narrow every model-choice field of ``form`` (call at the end of ``__init__``)."""
    for field in form.fields.values():
        queryset = getattr(field, "queryset", None)
        if isinstance(queryset, QuerySet) and hasattr(queryset, "restrict"):
            field.queryset = restricted(queryset, user, organization_id)


class OrderingFilter(django_filters.OrderingFilter):
    """Sort choices whose empty choice reads "Default order" (other choices read "Any":
    ``FILTERS_EMPTY_CHOICE_LABEL``)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("empty_label", _("Default order"))
        super().__init__(*args, **kwargs)

    def build_choices(self, fields, labels):
        """django-filter's choices, with the descending ones kept lazy (its own are formatted once, in English,
        when the filter set is defined)."""
        choices = super().build_choices(fields, labels)
        return [(value, labels.get(value, format_lazy(_("{} (descending)"), choices[i - 1][1])) if value.startswith("-")
                 else label) for i, (value, label) in enumerate(choices)]


_BOOLEAN_WORDS = ("", "unknown", "True", "False", "true", "false", "1", "0", "2", "3")


class StrictBooleanSelect(forms.NullBooleanSelect):
    """Django's yes/no/any select, except that a value it does not know reaches the field as typed (the stock
    widget reads it as "any", so ``?open=banana`` would list everything instead of being refused)."""

    def value_from_datadict(self, data, files, name):
        known = super().value_from_datadict(data, files, name)
        raw = data.get(name)
        return raw if known is None and raw not in (None, "", "unknown") else known


class StrictNullBooleanField(forms.NullBooleanField):
    widget = StrictBooleanSelect

    def to_python(self, value):
        if isinstance(value, str) and value not in _BOOLEAN_WORDS:
            raise ValidationError(_("Enter true or false."), code="invalid")
        return super().to_python(value)


class StrictBooleanFilter(django_filters.BooleanFilter):
    """A true/false filter that refuses anything else (the API answers 400, as for any bad filter value)."""

    field_class = StrictNullBooleanField


class RestrictedFilterSet(django_filters.FilterSet):
    """A FilterSet whose model-choice filters offer (and accept) only rows the requesting user may see; filters
    that would take their label from the model field take it from ``FIELD_LABELS`` (translated)."""

    def __init__(self, *args, request=None, **kwargs):
        super().__init__(*args, request=request, **kwargs)
        user = getattr(request, "user", None)
        for f in self.filters.values():
            queryset = getattr(f, "queryset", None)
            if isinstance(queryset, QuerySet) and hasattr(queryset, "restrict"):
                f.queryset = queryset.restrict(user, access.VIEW)

    @classmethod
    def get_filters(cls):
        # Labelled when the class is built: django-filter keeps the English it derives once a label is read.
        filters = super().get_filters()
        for f in filters.values():
            if f._label is None and f.lookup_expr == "exact" and f.field_name in FIELD_LABELS:
                f.label = FIELD_LABELS[f.field_name]
        return filters
