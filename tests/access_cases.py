"""Every route case of the portal, the registry the route walker and the access matrix read.

Each area registers its cases (``OBJECTS`` builders of organization A's objects, ``ROUTES`` cases, their
writes) in its own module, ``tests/<area>/access_cases.py``, on the registry of ``tests/routecases.py``
(``Case`` and the helpers are explained there). This module loads them all, in one order, and is what the
tests import: ``from tests.access_cases import OBJECTS, ROUTES``. A route with no case anywhere still fails
tests/portal/test_routes.py.

A block appended at the end of this file keeps working: every name of the registry and of the areas' modules
is available here as it was when all the cases lived in this one file. Such a block moves to its area's module.
"""
from __future__ import annotations

from tests import routecases
from tests.clusters import access_cases as _clusters
from tests.engagement import access_cases as _engagement
from tests.health import access_cases as _health
from tests.portal import access_cases as _portal
from tests.remediation import access_cases as _remediation
from tests.review import access_cases as _review
from tests.routecases import LOGIN, OBJECTS, OUTSIDERS, ROLES, ROUTES, Case  # noqa: F401
from tests.workloads import access_cases as _workloads
from tests.workloads.access_cases import INTERNAL_MARKER  # noqa: F401

_AREAS = (routecases, _portal, _workloads, _review, _clusters, _health, _remediation, _engagement)
for _area in _AREAS:
    globals().update({name: value for name, value in vars(_area).items()
                      if not name.startswith("__") and name not in ("annotations", "OBJECTS", "ROUTES")})


def _cycle_first() -> None:
    """The cycle first: its builder archives the active cycle, and rows of an archived cycle are read-only, so
    every other object must be made in the cycle it starts. (In place: the registry is one dict.)"""
    ordered = {"cycle": OBJECTS.pop("cycle"), **OBJECTS}
    OBJECTS.clear()
    OBJECTS.update(ordered)


_cycle_first()


# --- validation routes ---
# NCCL validation started from the portal: the cluster's panel and start form, a job's page, the API (start, list,
# detail), the bandwidth trend, and the route a running job posts its outputs to with its own token.
def _validation_job(w):
    from clusters.health.models import ValidationJob

    return ValidationJob.objects.create(cluster=LAZY_CLUSTER(w), key="access-case", expected=["all_reduce"],
                                        collectives=["all_reduce"], upload_base="http://portal.invalid",
                                        state="done", verdict="pass", summary="ZZ-ORG-A-SECRET summary")


OBJECTS["validation_job"] = lambda w: _memo(w, "validation_job", _validation_job)
_VJ = lambda o: {"pk": o["validation_job"].pk}  # noqa: E731
ROUTES.update({
    "health:validationjob_panel": Case(kwargs=_CL),
    "health:validationjob_add": Case(kwargs=_CL),
    "health:validationjob_detail": Case(kwargs=_VJ),
    "health-api:validationjob-list": Case(api=True, foreign=LIST),
    "health-api:validationjob-detail": Case(api=True, kwargs=_VJ),
    "health-api:validation-trend": Case(api=True, kwargs=lambda o: {"cluster_id": o["cluster"].pk}),
    # Authenticated by the job's own upload token, not by a user: every user gets 401 on it.
    "health-api:validation-output": Case(api=True, kwargs=_VJ, foreign=401, expect={r: 401 for r in ROLES}),
})
_STARTERS = {"customer_a", "lead_a", "staff"}
_writes("health:validationjob_add", _static({"collectives": ["all_reduce"]}), _STARTERS)
_writes("health-api:validationjob-list", lambda o: {"cluster": o["cluster"].pk, "collectives": ["all_reduce"]},
        _STARTERS, success=201, refused={**_UNSEEN_ORG, "pm": 400})
_writes("health-api:validation-output", _static({}), (), refused={r: 401 for r in ROLES})
# --- remediation routes ---
# Opening an AWS Support case from an escalated action: lead SAs and staff; the access case's action was not
# escalated, so a writer is sent back to the action with the reason and nothing is written.
ROUTES["remediation:action_support_case"] = Case(kwargs=_ACT)
_writes("remediation:action_support_case", _static({}), LEAD, success=302, writes_rows=False)
# --- i18nweb routes ---
# The language switcher: anyone may choose a language (signed in, it is remembered for them); GET is not served.
ROUTES["set_language"] = Case(public=True, foreign=405, expect={r: 405 for r in ROLES})
_writes("set_language", _static({"language": "ja", "next": "/"}), ROLES, success=302, writes_rows=False)
# --- cycle routes ---
def _scheduled_cycle(w):
    """The next cycle, scheduled to start in a week (the active one is organization A's cycle)."""
    import datetime

    from django.utils import timezone

    from portal.engagement.models import Cycle, CycleParticipation

    if not Cycle.objects.filter(number=90, status="active").exists():
        OBJECTS["cycle"](w)
    # Numbered past the next (91), so that starting the next cycle is not refused as already scheduled.
    nxt = Cycle.objects.create(number=95, name="Cycle 95", status="planned",
                               starts_on=timezone.localdate() + datetime.timedelta(days=7))
    CycleParticipation.objects.create(cycle=nxt, organization=w.org_a)
    return nxt


OBJECTS["scheduled_cycle"] = lambda w: _memo(w, "scheduled_cycle", _scheduled_cycle)
ROUTES["engagement:cycle_schedule"] = Case(kwargs=lambda o: {"pk": o["scheduled_cycle"].pk}, foreign=FORBIDDEN,
                                           expect={"customer_a": FORBIDDEN, "lead_a": FORBIDDEN})


def _move_start(o):
    import datetime

    from django.utils import timezone

    return {"action": "move", "confirm": "yes",
            "starts_on": (timezone.localdate() + datetime.timedelta(days=9)).isoformat()}


_writes("engagement:cycle_schedule", _move_start, PM)
# --- accounting routes ---
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
