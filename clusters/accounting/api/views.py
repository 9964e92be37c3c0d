from __future__ import annotations

from clusters.accounting.api.serializers import AccountingSettingsSerializer, ReservationCheckSerializer
from clusters.accounting.models import AccountingSettings, ReservationCheck
from portal.core.api.base import PortalReadOnlyViewSet


class ReservationCheckViewSet(PortalReadOnlyViewSet):
    """What AWS last said of each recorded reservation against the instances the portal counts held on it;
    ``flagged`` where AWS reports fewer in use than held. The error text is kept to the pages of lead SAs."""

    queryset = ReservationCheck.objects.select_related("reservation")
    serializer_class = ReservationCheckSerializer
    filterset_fields = ["organization", "flagged", "status"]


class AccountingSettingsViewSet(PortalReadOnlyViewSet):
    """Organizations' idle and stall thresholds where their lead SAs set them (defaults otherwise)."""

    queryset = AccountingSettings.objects.all()
    serializer_class = AccountingSettingsSerializer
