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
from tests.accounting import access_cases as _accounting
from tests.calls import access_cases as _calls
from tests.clusters import access_cases as _clusters
from tests.engagement import access_cases as _engagement
from tests.funder import access_cases as _funder
from tests.health import access_cases as _health
from tests.portal import access_cases as _portal
from tests.remediation import access_cases as _remediation
from tests.review import access_cases as _review
from tests.routecases import LOGIN, OBJECTS, OUTSIDERS, ROLES, ROUTES, Case  # noqa: F401
from tests.workloads import access_cases as _workloads
from tests.workloads.access_cases import INTERNAL_MARKER  # noqa: F401

_AREAS = (routecases, _portal, _workloads, _review, _clusters, _health, _remediation, _engagement, _accounting, _calls,
          _funder)
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
