"""The access matrix: every route × every role × every method the route serves.

Roles: anonymous; customer of organization A (whose objects the URLs name); customer of B; lead SA
assigned to A; lead SA of B only; program manager; staff. Reads follow each route's Case; writes by
anyone outside organization A never succeed, and nothing answers 5xx. Built from the URL
configuration, so a new route joins the matrix by itself (and fails test_routes until it has a Case).
"""
from __future__ import annotations

import pytest
from django.db import transaction
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.access_cases import ROUTES, SKIP_NAMESPACES
from tests.conftest import MARKER_A
from tests.portal.test_routes import LazyObjects

ROLES = ("anonymous", "customer_a", "customer_b", "lead_a", "lead_b", "pm", "staff")
OUTSIDERS = ("customer_b", "lead_b")
WRITES = ("POST", "PUT", "PATCH", "DELETE")


def _callbacks(resolver: URLResolver, namespace: str = "") -> dict:
    found = {}
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            if (entry.namespace or "") in SKIP_NAMESPACES:
                continue
            ns = entry.namespace or ""
            found.update(_callbacks(entry, f"{namespace}:{ns}" if namespace and ns else (ns or namespace)))
        elif isinstance(entry, URLPattern) and entry.name and "format" not in entry.pattern.regex.groupindex:
            found[f"{namespace}:{entry.name}" if namespace else entry.name] = entry.callback
    return found


def methods_of(callback, case) -> tuple[str, ...]:
    if case.methods is not None:
        return case.methods
    actions = getattr(callback, "actions", None)
    if actions:  # a DRF viewset route
        return tuple(sorted(m.upper() for m in actions))
    view_class = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
    if view_class is not None:
        allowed = [m.upper() for m in view_class.http_method_names
                   if m not in ("options", "head", "trace") and hasattr(view_class, m)]
        return tuple(sorted(allowed))
    return ("GET",)


CALLBACKS = _callbacks(get_resolver())
MATRIX = [
    (name, method)
    for name in sorted(ROUTES)
    if name in CALLBACKS
    for method in methods_of(CALLBACKS[name], ROUTES[name])
]


def _request(client, method: str, url: str, api: bool):
    if method == "GET":
        return client.get(url)
    if api:
        return getattr(client, method.lower())(url, data={}, content_type="application/json")
    return getattr(client, method.lower())(url, data={})


def _write_succeeded(response, api: bool) -> bool:
    """API: any 2xx. Pages: a redirect or an htmx 204 (a 200 re-renders the form with its errors)."""
    code = response.status_code
    if api:
        return 200 <= code < 300
    return code in (201, 204) or (code in (301, 302, 303) and "/login/" not in response.get("Location", ""))


def _expected_get(case, role: str) -> tuple[int, ...]:
    if role in case.expect:
        return case.expect[role]
    if role in OUTSIDERS:
        return case.foreign
    return (200,) if not case.public else (200, 302, 405, 503)


@pytest.mark.parametrize(("name", "method"), MATRIX, ids=[f"{n}-{m}" for n, m in MATRIX])
def test_access_matrix(name, method, world, client):
    case = ROUTES[name]
    objs = LazyObjects(world)
    url = reverse(name, kwargs=case.kwargs(objs))
    users = world.users()
    failures = []
    for role in ROLES:
        with transaction.atomic():
            client.logout()
            if role != "anonymous":
                client.force_login(users[role])
            response = _request(client, method, url, case.api)
            code = response.status_code
            if code >= 500:
                failures.append(f"{role} {method}: {code}")
            elif role == "anonymous" and not case.public:
                ok = code in (401, 403) if case.api else (code == 302 and "/login/" in response["Location"])
                if not ok:
                    failures.append(f"anonymous {method}: {code}")
            elif method == "GET":
                expected = _expected_get(case, role)
                if code not in expected:
                    failures.append(f"{role} GET: {code}, expected {expected}")
                elif (
                    role in OUTSIDERS
                    and code == 200
                    and not getattr(response, "streaming", False)
                    and MARKER_A in response.content.decode(errors="replace")
                ):
                    failures.append(f"{role} GET shows organization A's data")
            elif role in OUTSIDERS and not case.public and _write_succeeded(response, case.api):
                failures.append(f"{role} {method}: {code}: a write outside their organization succeeded")
            transaction.set_rollback(True)
    assert not failures, f"{name} ({url}): " + "; ".join(failures)
