"""The API's filter backend: django-filter, with related-row filters as plain integer ids."""
from __future__ import annotations

import django_filters
from django import forms
from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend

from portal.core.api.scoping import _scoped


class IdFilter(django_filters.Filter):
    """A related row's id: any integer is valid input (one beyond the database's range matches nothing)."""

    field_class = forms.IntegerField
    LIMIT = 2**63

    def filter(self, qs, value):
        if value is not None and not -self.LIMIT <= value < self.LIMIT:
            return qs.none()
        return super().filter(qs, value)


class PortalFilterBackend(DjangoFilterBackend):
    """django-filter's backend, with every filter on a related row taking a plain integer id.

    A ``ModelChoiceFilter`` would list every row of the related table in the browsable API's filter
    form (every organization, to a customer) and answer 400 for a valid id it does not find; an
    integer filter lists nothing and answers an empty page for an id the caller cannot see.
    """

    def get_filterset(self, request, queryset, view):
        filterset = super().get_filterset(request, queryset, view)
        if filterset is not None:
            for name, flt in list(filterset.filters.items()):
                if hasattr(flt, "id_filter"):  # a filter with its own plain-id form (the cycle filter and its default)
                    filterset.filters[name] = flt.id_filter(listing=getattr(view, "action", "list") == "list")
                    filterset.filters[name].parent = filterset
                elif isinstance(flt, django_filters.ModelChoiceFilter):
                    to_field = flt.extra.get("to_field_name")
                    if to_field and to_field not in ("pk", "id"):  # e.g. an organization's slug
                        filterset.filters[name] = django_filters.CharFilter(
                            field_name=f"{flt.field_name}__{to_field}", lookup_expr=flt.lookup_expr, label=flt.label)
                    else:
                        filterset.filters[name] = IdFilter(field_name=f"{flt.field_name}__pk",
                                                           lookup_expr=flt.lookup_expr, label=flt.label)
                elif isinstance(flt, django_filters.ModelMultipleChoiceFilter) and isinstance(flt.queryset, QuerySet):
                    flt.queryset = _scoped(flt.queryset, request.user)
        return filterset
