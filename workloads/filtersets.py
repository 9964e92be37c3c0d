"""Filters shared by the pages and the API."""
from __future__ import annotations

import django_filters
from django import forms
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from portal.core.choices import REGION_CHOICES, MembershipRole
from portal.core.cycle_filter import CycleFilterMixin
from portal.core.forms import OrderingFilter, RestrictedFilterSet
from portal.core.models import Organization
from workloads.choices import FRAMEWORKS, Architecture, Orchestrator, RequestStatus, ReservationKind, WorkloadStatus
from workloads.models import CapacityReservation, InstanceQuota, QuotaChangeRequest, Workload


def _organizations(request):
    return Organization.objects.restrict(getattr(request, "user", None)) if request else Organization.objects.none()


def _leads(request):
    if request is None:
        return get_user_model().objects.none()
    return get_user_model().objects.filter(
        memberships__role=MembershipRole.LEAD_SA, memberships__organization__in=_organizations(request)
    ).distinct().order_by("username")


class InstanceTypeFilter(django_filters.CharFilter):
    """Matches the EC2 name and its ml.-prefixed SageMaker twin."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("label", _("Instance type"))
        super().__init__(*args, **kwargs)

    def filter(self, qs, value):
        if not value:
            return qs
        base = value[3:] if value.startswith("ml.") else value
        return qs.filter(**{f"{self.field_name}__in": [base, f"ml.{base}"]})


class WorkloadFilterSet(RestrictedFilterSet):
    q = django_filters.CharFilter(method="search", label=_("Search"))
    organization = django_filters.ModelChoiceFilter(queryset=_organizations, field_name="organization")
    framework = django_filters.ChoiceFilter(choices=list(FRAMEWORKS.items()), method="filter_framework", label=_("Framework"))
    model_family = django_filters.CharFilter(lookup_expr="icontains", label=_("Model family"))
    architecture = django_filters.ChoiceFilter(choices=Architecture.choices)
    instance_type = InstanceTypeFilter(field_name="target_instance_type", label=_("Instance type"))
    orchestrator = django_filters.ChoiceFilter(choices=Orchestrator.choices)
    status = django_filters.ChoiceFilter(choices=WorkloadStatus.choices)
    lead_sa = django_filters.ModelChoiceFilter(queryset=_leads, label=_("Lead SA"))
    ordering = OrderingFilter(
        fields=(("organization__name", "organization"), ("name", "name"), ("parameters_billions", "parameters"),
                ("target_instance_count", "instances"), ("status", "status"), ("updated", "updated")),
        field_labels={"organization__name": _("Organization"), "name": _("Name"), "parameters_billions": _("Parameters"),
                      "target_instance_count": _("Instances"), "status": _("Status"), "updated": _("Updated")},
        label=_("Sort by"),
    )

    class Meta:
        model = Workload
        fields = ["organization", "framework", "model_family", "architecture", "instance_type", "orchestrator",
                  "status", "lead_sa"]

    def search(self, queryset, name, value):
        return queryset.filter(Q(name__icontains=value) | Q(model_family__icontains=value)
                               | Q(organization__name__icontains=value))

    def filter_framework(self, queryset, name, value):
        if connection.features.supports_json_field_contains:
            return queryset.filter(frameworks__contains=[{"name": value}])
        # SQLite has no JSON containment; the serialized pair is exact enough (vocabulary keys are distinct).
        return queryset.filter(frameworks__icontains=f'"name": "{value}"')


class InstanceQuotaFilterSet(CycleFilterMixin, RestrictedFilterSet):
    organization = django_filters.ModelChoiceFilter(queryset=_organizations)
    instance_type = InstanceTypeFilter(field_name="instance_type_name")
    region = django_filters.ChoiceFilter(choices=REGION_CHOICES)
    active_on = django_filters.DateFilter(method="filter_active_on", label=_("Active on"))
    ends_before = django_filters.DateFilter(field_name="end", lookup_expr="lte", label=_("Ends by"))
    ordering = OrderingFilter(
        fields=("organization__name", ("instance_type_name", "instance_type"), "region", "count", "end"),
        field_labels={"organization__name": _("Organization"), "instance_type_name": _("Instance type"),
                      "region": _("Region"), "count": _("Count"), "end": _("End")},
    )

    class Meta:
        model = InstanceQuota
        fields = ["organization", "instance_type", "region"]

    def filter_active_on(self, queryset, name, value):
        return queryset.filter(start__lte=value, end__gte=value)


class CapacityReservationFilterSet(CycleFilterMixin, RestrictedFilterSet):
    organization = django_filters.ModelChoiceFilter(queryset=_organizations)
    instance_type = InstanceTypeFilter(field_name="instance_type_name")
    kind = django_filters.ChoiceFilter(choices=ReservationKind.choices)
    region = django_filters.ChoiceFilter(choices=REGION_CHOICES)
    ends_before = django_filters.DateFilter(field_name="end", lookup_expr="lte", label=_("Ends by"))

    class Meta:
        model = CapacityReservation
        fields = ["organization", "reservation_id", "kind", "instance_type", "region", "quota"]


class _QuotaField(forms.ModelChoiceField):
    def label_from_instance(self, obj) -> str:
        return f"{obj.organization.name} · {obj}"


class QuotaFilter(django_filters.ModelChoiceFilter):
    """Quotas named with their organization: two organizations' "8 × p5.48xlarge in ap-northeast-1" are
    different quotas, and the list would not say which is whose."""

    field_class = _QuotaField


class QuotaChangeRequestFilterSet(RestrictedFilterSet):
    organization = django_filters.ModelChoiceFilter(queryset=_organizations)
    status = django_filters.ChoiceFilter(choices=RequestStatus.choices)
    instance_type = InstanceTypeFilter(field_name="instance_type_name")
    quota = QuotaFilter(queryset=InstanceQuota.objects.select_related("organization"))

    class Meta:
        model = QuotaChangeRequest
        fields = ["organization", "status", "instance_type", "quota"]
