"""Route cases of capacity accounting: the organization's accounting settings and the reservation checks."""
from __future__ import annotations

from tests.routecases import FORBIDDEN, LEAD, LIST, OBJECTS, ROUTES, Case, _memo, _static, _writes
from tests.workloads.access_cases import _reservation


def _reservation_check(w):
    from django.utils import timezone

    from clusters.accounting.models import ReservationCheck

    reservation = _memo(w, "reservation", _reservation)
    return ReservationCheck.objects.create(reservation=reservation, organization=w.org_a, checked_at=timezone.now(),
                                           status="ok", aws_total=8, aws_in_use=0, portal_held=8, flagged=True)


def _accounting_settings(w):
    from clusters.accounting.models import AccountingSettings

    return AccountingSettings.objects.create(organization=w.org_a, idle_busy_percent=15)


OBJECTS["reservation_check"] = lambda w: _memo(w, "reservation_check", _reservation_check)
OBJECTS["accounting_settings"] = lambda w: _memo(w, "accounting_settings", _accounting_settings)
ROUTES.update({
    "accounting:settings": Case(kwargs=lambda o: {"slug": o["organization"].slug},
                                expect={"customer_a": FORBIDDEN, "pm": FORBIDDEN}),
    "accounting-api:api-root": Case(api=True, foreign=LIST),
    "accounting-api:reservationcheck-list": Case(api=True, foreign=LIST),
    "accounting-api:reservationcheck-detail": Case(api=True, kwargs=lambda o: {"pk": o["reservation_check"].pk}),
    "accounting-api:accountingsettings-list": Case(api=True, foreign=LIST),
    "accounting-api:accountingsettings-detail": Case(api=True,
                                                     kwargs=lambda o: {"pk": o["accounting_settings"].pk},
                                                     expect={"customer_a": 404}),
})
_writes("accounting:settings", _static({"idle_busy_percent": 20, "idle_hours": 12, "stall_minutes": 30}), LEAD)
