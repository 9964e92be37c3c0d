"""Walk every URL pattern, named or not, the admin included: a pattern without an access case fails the
suite, and a case for a pattern that no longer exists fails it too.

What each role gets on each route is asserted by the access matrix (tests/portal/test_access_matrix.py)
and, for the admin, by tests/portal/test_admin_matrix.py.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace

from django.conf import settings
from django.db import transaction
from django.urls import URLPattern, URLResolver, get_resolver

from tests.access_cases import OBJECTS, ROUTES
from tests.portal.admin_cases import ADMIN_ROUTES


@dataclass(frozen=True)
class Route:
    """One URL pattern. ``id`` is its name with namespaces, or, for an unnamed pattern, the namespaces and
    the pattern's full route string (``admin:admin/<path:object_id>/``)."""

    id: str
    name: str | None
    pattern: str
    callback: object


def _join(namespace: str, name: str) -> str:
    return f"{namespace}:{name}" if namespace else name


def _walk(resolver: URLResolver, namespace: str = "", prefix: str = ""):
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            ns = entry.namespace or ""
            yield from _walk(entry, f"{namespace}:{ns}" if namespace and ns else (ns or namespace),
                             prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            full = prefix + str(entry.pattern)
            name = _join(namespace, entry.name) if entry.name else None
            yield Route(name or _join(namespace, full), name, full, entry.callback)


def _is_format_twin(route: Route) -> bool:
    return "format" in route.pattern and ("(?P<format>" in route.pattern or "<drf_format_suffix:format>" in route.pattern)


def all_routes() -> dict[str, Route]:
    """Every URL pattern by id. DRF's format-suffix twins (``.json``) fold into the route they double only
    when they serve the very same view; a twin with a view of its own stays a route of its own."""
    routes: dict[str, Route] = {}
    twins: list[Route] = []
    for route in _walk(get_resolver()):
        (twins if _is_format_twin(route) else []).append(route)
        if not _is_format_twin(route):
            assert route.id not in routes or routes[route.id].callback is route.callback, f"two views named {route.id}"
            routes.setdefault(route.id, route)
    for twin in twins:
        base = routes.get(twin.id)
        if base is None or base.callback is not twin.callback:
            routes[f"{twin.id}.<format>"] = twin
    return routes


def all_route_names() -> list[str]:
    return sorted(all_routes())


class LazyObjects(dict):
    """Organization A's objects, built on first use from ``OBJECTS`` (one of each per world)."""

    def __init__(self, world):
        super().__init__()
        self.world = world

    def __missing__(self, key):
        value = OBJECTS[key](self.world)
        self[key] = value
        return value


def test_the_walker_sees_unnamed_patterns_and_the_admin():
    routes = all_routes()
    assert any(r.name is None for r in routes.values())
    assert "admin:portal_organization_changelist" in routes
    assert "workloads-api:workload-list" in routes and "workloads-api:workload-list.<format>" not in routes


def test_every_route_has_an_access_case():
    cases = {**ROUTES, **ADMIN_ROUTES}
    missing = [name for name in all_route_names() if name not in cases]
    assert not missing, f"routes without an access case in tests/access_cases.py or admin_cases.py: {missing}"


def test_no_stale_access_cases():
    stale = sorted((set(ROUTES) | set(ADMIN_ROUTES)) - set(all_route_names()))
    assert not stale, f"access cases for routes that no longer exist: {stale}"


def signed_in_sessions(users: dict) -> dict[str, str]:
    """One signed-in session key per role, made once for a module (each test's changes to it roll back)."""
    from django.test import Client

    keys = {}
    for role, user in users.items():
        client = Client()
        client.force_login(user)
        keys[role] = client.cookies[settings.SESSION_COOKIE_NAME].value
    return keys


@contextmanager
def module_world(django_db_blocker, **extra_users):
    """One world with every object of ``OBJECTS`` built (a broken builder fails here, loudly) and the
    specialist, for a whole module; all of it is rolled back at the end, and each test runs in a savepoint
    inside. ``extra_users`` are built inside it by their factories (role → callable)."""
    from tests.conftest import build_world
    from tests.engagement.factories_engagement import specialist

    with django_db_blocker.unblock():
        atomic = transaction.atomic()
        atomic.__enter__()
        try:
            world = build_world()
            objs = LazyObjects(world)
            for key in OBJECTS:
                objs[key]
            users = {**world.users(), "specialist": specialist("specialist", "frameworks"),
                     **{role: make() for role, make in extra_users.items()}}
            yield SimpleNamespace(world=world, objs=objs, users=users)
        finally:
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)
