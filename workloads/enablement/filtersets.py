"""Filters of enablement sessions (by kind, date and cycle) and of their attendance."""
from portal.core.cycle_filter import CycleFilterMixin
from portal.core.forms import RestrictedFilterSet
from workloads.enablement.models import EnablementAttendance, EnablementSession


class EnablementSessionFilterSet(CycleFilterMixin, RestrictedFilterSet):
    class Meta:
        model = EnablementSession
        fields = ["kind", "date"]


class EnablementAttendanceFilterSet(RestrictedFilterSet):
    class Meta:
        model = EnablementAttendance
        fields = ["session", "organization", "satisfaction"]
