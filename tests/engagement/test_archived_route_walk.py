"""Every write route against an archived cycle's rows: nothing of an archived cycle changes.

The routes come from the URL resolver (``tests.portal.test_routes.all_routes``: every pattern, named or not, the API
router's actions included) and the methods from each view (``methods_of``), so a route added tomorrow is walked
without anyone listing it here; its payload is its access case's (``tests/access_cases.py``), the one the access
matrix proves valid for organization A. Every object of organization A is built, then every cycle is archived (rows
of no cycle given to it first) and a new one started: each write is sent by every role allowed to send it, and every
row that belongs to an archived cycle (through the policy's ``cycle_path``) must be as it was. Tearing a cluster
down is the one write an archived cycle allows (``access.TEAR_DOWN``, to wind a leaving organization down).
"""
from __future__ import annotations

import pytest
from django.apps import apps
from django.conf import settings
from django.urls import reverse

from portal.core import access
from portal.core.models import Cycle
from tests.access_cases import ROUTES
from tests.portal.test_access_matrix import WRITES, _send, methods_of
from tests.portal.test_routes import all_routes, module_world, signed_in_sessions

# Tearing down: (route, method) pairs that may change an archived cycle's cluster (and its launch job).
TEAR_DOWN = {("clusters:cluster_delete", "POST"), ("clusters-api:cluster-detail", "DELETE")}

CALLBACKS = {route_id: route.callback for route_id, route in all_routes().items()}
WALK = [
    (name, method, role)
    for name in sorted(CALLBACKS)
    if name in ROUTES and ROUTES[name].payload is not None
    for method in methods_of(CALLBACKS[name], ROUTES[name]) if method in WRITES
    for role in sorted(ROUTES[name].writers or {"staff"})
]


def cycled_models() -> list:
    """Every model whose rows belong to a program cycle (its own column or a parent's), the cycle itself aside."""
    return [m for m in apps.get_models() if m is not Cycle and access.cycle_path(m)]


def archived_rows() -> dict[str, list]:
    """Every row of every cycled model that belongs to an archived cycle, field by field."""
    return {m._meta.label: list(m._default_manager.filter(**{f"{access.cycle_path(m)}__status": access.ARCHIVED})
                                .order_by("pk").values())
            for m in cycled_models()}


def archive_everything() -> None:
    cycle = Cycle.objects.filter(status="active").first() or Cycle.objects.create(
        number=90, name="The walked cycle", status="active")
    for model in cycled_models():
        if access._has_cycle(model):
            model._default_manager.filter(cycle__isnull=True).update(cycle=cycle)
    Cycle.objects.exclude(status="archived").update(status="archived")
    number = max(Cycle.objects.values_list("number", flat=True)) + 1
    Cycle.objects.create(number=number, name=f"After the walk {number}", status="active")


@pytest.fixture(scope="module")
def walked(django_db_setup, django_db_blocker):
    with module_world(django_db_blocker) as built:
        archive_everything()
        built.sessions = signed_in_sessions(built.users)
        built.before = archived_rows()
        assert sum(len(rows) for rows in built.before.values()) > 20, "the archived cycle holds too little to walk"
        yield built


def test_the_walk_covers_the_remediation_and_validation_writes():
    walked_routes = {name for name, _method, _role in WALK}
    assert {"remediation-api:remediationaction-list", "remediation:action_propose",
            "remediation-api:remediationaction-cancel", "health:validationjob_cancel"} <= walked_routes
    assert {(name, method) for name, method, _role in WALK} >= TEAR_DOWN


@pytest.mark.parametrize(("name", "method", "role"), WALK, ids=[f"{n}-{m}-{r}" for n, m, r in WALK])
def test_no_write_changes_an_archived_cycles_rows(name, method, role, walked, db, client):
    case = ROUTES[name]
    url = reverse(name, kwargs=case.kwargs(walked.objs))
    if role != "anonymous":
        client.cookies[settings.SESSION_COOKIE_NAME] = walked.sessions[role]
    response = _send(client, method, url, case.api, case.payload(walked.objs))
    after = archived_rows()
    changed = {label: len(rows) for label, rows in after.items() if rows != walked.before[label]}
    if (name, method) in TEAR_DOWN:
        assert set(changed) <= {"clusters.Cluster", "clusters.LaunchJob"}, changed
        return
    assert not changed, (f"{role} {method} {url} answered {response.status_code} and changed rows of an archived "
                         f"cycle: {changed}")
