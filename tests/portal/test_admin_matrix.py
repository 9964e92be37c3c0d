"""The admin's access matrix: every admin route (tests/portal/admin_cases.py) × every role, one exact status.

Anonymous users and everyone who is not staff are sent to the admin's sign-in page; staff without model
permissions are refused on model pages; a superuser reaches every page the ModelAdmin permits. A POST
of the delete confirmation by anyone but the superuser deletes nothing.
"""
from __future__ import annotations

import functools

import pytest
from django.conf import settings

from tests.access_cases import LOGIN
from tests.portal.admin_cases import ADMIN_LOGIN, ADMIN_NO_DELETE, ADMIN_ROLES, ADMIN_ROUTES, REDIRECT, admin_object
from tests.portal.test_routes import module_world, signed_in_sessions

MATRIX = [(name, role) for name in sorted(ADMIN_ROUTES) for role in ADMIN_ROLES]
# Rows the superuser's delete confirmation cannot remove: other rows protect them.
# A funder report once sent is kept with its sendings (the record of what the funder received).
PROTECTED = frozenset({"portal.organization", "portal.escalationtarget", "clusters.blueprint", "funder.funderreport"})
DELETES = sorted(name for name, case in ADMIN_ROUTES.items() if case.view == "delete")


@pytest.fixture(scope="module")
def admin_world(django_db_setup, django_db_blocker):
    from tests.factories import UserFactory

    superuser = functools.partial(UserFactory, username="superuser", is_staff=True, is_superuser=True)
    with module_world(django_db_blocker, superuser=superuser) as built:
        for case in ADMIN_ROUTES.values():  # every model page's row, made before any test's savepoint
            if case.model is not None:
                admin_object(built.objs, case.model)
        built.sessions = signed_in_sessions(built.users)
        yield built


def _matches(response, expected) -> bool:
    code, where = response.status_code, response.get("Location", "")
    if expected == LOGIN:
        return code == 302 and where.startswith("/login/")
    if expected == ADMIN_LOGIN:
        return code == 302 and where.startswith("/admin/login/")
    if expected == REDIRECT:
        return code == 302 and not where.startswith("/admin/login/")
    return code == expected


@pytest.mark.parametrize(("name", "role"), MATRIX, ids=[f"{n}-{r}-GET" for n, r in MATRIX])
def test_admin_matrix(name, role, admin_world, db, client):
    case = ADMIN_ROUTES[name]
    url = case.url(admin_world.objs)
    if role != "anonymous":
        client.cookies[settings.SESSION_COOKIE_NAME] = admin_world.sessions[role]
    response = client.get(url)
    expected = case.expected(role)
    assert _matches(response, expected), (
        f"{role} GET {url}: {response.status_code} {response.get('Location', '')}, expected {expected}")


@pytest.mark.parametrize(("name", "role"), [(n, r) for n in DELETES for r in ADMIN_ROLES],
                         ids=[f"{n}-{r}-POST" for n in DELETES for r in ADMIN_ROLES])
def test_admin_delete_confirmation(name, role, admin_world, db, client):
    """The delete confirmation: only a superuser's deletes the row (then the changelist follows)."""
    case = ADMIN_ROUTES[name]
    row = admin_object(admin_world.objs, case.model)
    if role != "anonymous":
        client.cookies[settings.SESSION_COOKIE_NAME] = admin_world.sessions[role]
    response = client.post(case.url(admin_world.objs), {"post": "yes"})
    key = row._meta.pk.attname  # a proxy's ``pk`` may be another field (DRF's TokenProxy: the user id)
    exists = case.model._default_manager.filter(**{key: getattr(row, key)}).exists()
    if role == "superuser" and case.model._meta.label_lower in ADMIN_NO_DELETE:
        assert response.status_code == 403 and exists, f"superuser deleted {row!r} ({response.status_code})"
    elif role == "superuser":
        # Deleted, then on to the changelist; where protected rows block it, the page lists them (200).
        blocked = case.model._meta.label_lower in PROTECTED
        assert response.status_code == (200 if blocked else 302), f"superuser: {response.status_code}"
        assert exists == blocked, f"row still there: {exists}"
    else:
        assert _matches(response, case.expected(role)), f"{role}: {response.status_code}"
        assert exists, f"{role} deleted {row!r}"
