"""Filters shared by the pages and the API."""
from __future__ import annotations

import django_filters
from django.utils.translation import gettext_lazy as _

from clusters.health.choices import COLLECTIVE_CHOICES, RunVerdict
from clusters.health.models import GpuFault, HealthReport, ValidationRun
from portal.core.choices import FaultSeverity
from portal.core.forms import RestrictedFilterSet, StrictBooleanFilter


class HealthReportFilterSet(RestrictedFilterSet):
    class Meta:
        model = HealthReport
        fields = ["cluster", "source"]


class GpuFaultFilterSet(RestrictedFilterSet):
    open = StrictBooleanFilter(field_name="cleared_at", lookup_expr="isnull", label=_("Open"))
    severity = django_filters.ChoiceFilter(choices=FaultSeverity.choices)

    class Meta:
        model = GpuFault
        fields = ["cluster", "hostname", "kind", "severity", "open"]


class ValidationRunFilterSet(RestrictedFilterSet):
    verdict = django_filters.ChoiceFilter(choices=RunVerdict.choices)
    collective = django_filters.ChoiceFilter(choices=COLLECTIVE_CHOICES)

    class Meta:
        model = ValidationRun
        fields = ["cluster", "verdict", "collective"]
