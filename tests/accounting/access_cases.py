"""Route cases of capacity accounting: the organization's accounting settings and the reservation checks."""
from __future__ import annotations

from tests.routecases import FORBIDDEN, LEAD, LIST, OBJECTS, PM, ROUTES, Case, _memo, _static, _writes
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


def _reservation_request(w):
    import datetime

    from clusters.accounting.models import ReservationRequest

    return ReservationRequest.objects.create(
        organization=w.org_a, award_key="calls.application:0:0", awarded_by="ZZ-ORG-A-SECRET call",
        instance_type_name="p5.48xlarge", region="ap-northeast-1", count=8, weeks=4,
        start=datetime.date(2027, 1, 4), end=datetime.date(2027, 1, 31), offering_kind="capacity_block",
        offering_id="cb-0123456789abcdef0")


OBJECTS["reservation_request"] = lambda w: _memo(w, "reservation_request", _reservation_request)
_request_pk = lambda o: {"pk": o["reservation_request"].pk}  # noqa: E731
_FULFIL = {"reservation_id": "cr-0a1b2c3d4e5f60718", "availability_zone": "ap-northeast-1a"}
ROUTES.update({
    "accounting:request_list": Case(foreign=LIST),
    "accounting:request_detail": Case(kwargs=_request_pk),
    "accounting:request_fulfil": Case(kwargs=_request_pk),
    "accounting:request_decline": Case(kwargs=_request_pk),
    "accounting-api:reservationrequest-list": Case(api=True, foreign=LIST),
    "accounting-api:reservationrequest-detail": Case(api=True, kwargs=_request_pk),
    "accounting-api:reservationrequest-fulfil": Case(api=True, kwargs=_request_pk),
    "accounting-api:reservationrequest-decline": Case(api=True, kwargs=_request_pk),
})
_writes("accounting:request_fulfil", _static(_FULFIL), PM)
_writes("accounting:request_decline", _static({"note": "The offering expired"}), PM)
_writes("accounting-api:reservationrequest-fulfil", _static(_FULFIL), PM, success=200)
_writes("accounting-api:reservationrequest-decline", _static({"note": "The offering expired"}), PM, success=200)
