"""The access matrix: every route × every role × every method the route serves, one exact status each.

Roles: anonymous; customer of organization A (whose objects the URLs name); customer of B; lead SA of A;
lead SA of B only; program manager; staff; a specialist of the "frameworks" escalation team. Reads follow
each route's Case (tests/access_cases.py); outsiders never see organization A's marker. Writes send the
Case's payload, valid for organization A's objects, as every role: a role without the right gets the
exact refusal and nothing is written (no INSERT, UPDATE or DELETE reaches the database); a role with the
right succeeds with the same payload and writes, so the payload is known to be valid. Each test runs in
its own savepoint on one world per module, so no row leaks from one case to the next.
"""
from __future__ import annotations

import re
from contextlib import contextmanager

import pytest
from django.conf import settings
from django.db import connection
from django.urls import reverse

from tests.access_cases import INTERNAL_MARKER, LOGIN, OUTSIDERS, ROLES, ROUTES
from tests.conftest import MARKER_A
from tests.portal.test_routes import all_routes, module_world, signed_in_sessions

WRITES = ("POST", "PUT", "PATCH", "DELETE")
# Rows a request may write whoever sends it: the session and the sign-in throttle's log.
BOOKKEEPING = re.compile(r'^"?(django_session|axes_\w+|audit_auditevent)"?$')


def _allowed_methods(callback) -> tuple[str, ...] | None:
    """The methods a function view admits through ``require_http_methods`` (``require_GET``, ...)."""
    func = callback
    while func is not None:
        for cell in getattr(func, "__closure__", None) or ():
            value = cell.cell_contents
            if isinstance(value, list | tuple) and value and all(
                isinstance(m, str) and m.upper() == m and m.isalpha() for m in value
            ):
                return tuple(sorted(value))
        func = getattr(func, "__wrapped__", None)
    return None


def methods_of(callback, case) -> tuple[str, ...]:
    if case.methods is not None:
        return case.methods
    actions = getattr(callback, "actions", None)
    if actions:  # a DRF viewset route: the router's methods the viewset admits
        return tuple(sorted(m.upper() for m in actions if m in callback.cls.http_method_names))
    view_class = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
    if view_class is not None:
        allowed = [m.upper() for m in view_class.http_method_names
                   if m not in ("options", "head", "trace") and hasattr(view_class, m)]
        return tuple(sorted(allowed))
    declared = _allowed_methods(callback)
    assert declared is not None, f"{callback}: a function view without require_http_methods needs Case.methods"
    return tuple(m for m in declared if m not in ("HEAD", "OPTIONS"))


CALLBACKS = {route_id: route.callback for route_id, route in all_routes().items()}
MATRIX = [
    (name, role, method)
    for name in sorted(ROUTES)
    if name in CALLBACKS
    for method in methods_of(CALLBACKS[name], ROUTES[name])
    for role in ROLES
]


@pytest.fixture(scope="module")
def matrix(django_db_setup, django_db_blocker):
    """One world and one set of organization A's objects for the whole module, rolled back at its end;
    each test runs in a savepoint inside it."""
    with module_world(django_db_blocker) as built:
        built.sessions = signed_in_sessions(built.users)
        yield built


@contextmanager
def record_writes():
    """The INSERTs, UPDATEs and DELETEs a request leaves in the database (bookkeeping tables aside): a
    statement undone by a rollback to a savepoint (a check after the save refused it) does not count."""
    written: list[str] = []
    marks: dict[str, int] = {}
    statement = re.compile(r'^\s*(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+("?[\w.]+"?)', re.IGNORECASE)
    savepoint = re.compile(r'^\s*(SAVEPOINT|ROLLBACK TO SAVEPOINT|RELEASE SAVEPOINT)\s+"?(\w+)"?', re.IGNORECASE)

    def wrapper(execute, sql, params, many, context):
        if match := savepoint.match(sql):
            verb, name = match.group(1).upper(), match.group(2)
            if verb == "SAVEPOINT":
                marks[name] = len(written)
            elif verb.startswith("ROLLBACK") and name in marks:
                del written[marks[name]:]
        elif (match := statement.match(sql)) and not BOOKKEEPING.match(match.group(2)):
            written.append(f"{match.group(1).split()[0].upper()} {match.group(2)}")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        yield written


def _send(client, method: str, url: str, api: bool, payload: dict | None):
    if method == "GET":
        return client.get(url)
    send = getattr(client, method.lower())
    if api:
        return send(url, data=payload or {}, content_type="application/json")
    if method == "POST":
        return client.post(url, data=payload or {})
    # Django parses form bodies of POST requests only: a page's PUT sends the same fields, url-encoded.
    from urllib.parse import urlencode

    return send(url, data=urlencode(payload or {}, doseq=True), content_type="application/x-www-form-urlencoded")


def _errors(response) -> str:
    """What a refused or invalid write says, to tell an access check from a validation error."""
    if response.status_code not in (200, 400, 409, 422) or getattr(response, "streaming", False):
        return ""
    context = getattr(response, "context", None)
    form = context.get("form") if context else None
    if form is not None and getattr(form, "errors", None):
        return f" form errors: {dict(form.errors)}"
    if response.get("Content-Type", "").startswith("application/json"):
        return f" {response.content[:300]!r}"
    return ""


def _matches(response, expected) -> bool:
    code = response.status_code
    if expected == LOGIN:
        return code == 302 and response["Location"].startswith("/login/")
    if code in (301, 302, 303) and isinstance(expected, int) and expected == code:
        return not response["Location"].startswith("/login/")
    return code == expected


@pytest.mark.parametrize(("name", "role", "method"), MATRIX, ids=[f"{n}-{r}-{m}" for n, r, m in MATRIX])
def test_access_matrix(name, role, method, matrix, db, client):
    case = ROUTES[name]
    url = reverse(name, kwargs=case.kwargs(matrix.objs))
    if role != "anonymous":
        client.cookies[settings.SESSION_COOKIE_NAME] = matrix.sessions[role]
    payload = None
    if method in WRITES:
        assert case.payload is not None, f"{name} serves {method}: its Case needs a payload builder"
        payload = case.payload(matrix.objs)
    expected = case.expected(role, method)
    with record_writes() as written:
        response = _send(client, method, url, case.api, payload)
    where = response.get("Location", "")
    assert _matches(response, expected), (
        f"{role} {method} {url}: {response.status_code} {where}, expected {expected}" + _errors(response))
    if method == "GET":
        if role in OUTSIDERS and role not in case.shown_to and response.status_code == 200 and not getattr(response, "streaming", False):
            assert MARKER_A not in response.content.decode(errors="replace"), f"{role} sees organization A's data"
        if role.startswith("customer") and response.status_code == 200 and not getattr(response, "streaming", False):
            assert INTERNAL_MARKER not in response.content.decode(errors="replace"), f"{role} sees an internal entry"
        return
    if case.succeeds(role, method):
        assert written, f"{role} {method} {url} answered {response.status_code} but wrote nothing"
    elif role not in case.writers:
        assert not written, f"{role} {method} {url} was refused but wrote: {written}"


def test_every_write_route_has_a_payload():
    lacking = sorted({name for name, _, method in MATRIX if method in WRITES and ROUTES[name].payload is None})
    assert not lacking, f"write routes without a payload: {lacking}"
