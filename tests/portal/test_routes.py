"""Walk every URL pattern and API route: anonymous is refused, a customer of organization B never
reaches organization A's objects, and a route missing from tests/access_cases.py fails the suite."""
from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.access_cases import OBJECTS, ROUTES, SKIP_NAMESPACES
from tests.conftest import MARKER_A


def _walk(resolver: URLResolver, namespace: str = ""):
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            ns = entry.namespace or ""
            full = f"{namespace}:{ns}" if namespace and ns else (ns or namespace)
            if ns in SKIP_NAMESPACES:
                continue
            yield from _walk(entry, full)
        elif isinstance(entry, URLPattern) and entry.name:
            if "format" in entry.pattern.regex.groupindex:
                continue  # DRF's ".json" suffix twins share the view of the route they double
            yield f"{namespace}:{entry.name}" if namespace else entry.name


def all_route_names() -> list[str]:
    return sorted(set(_walk(get_resolver())))


class LazyObjects(dict):
    def __init__(self, world):
        super().__init__()
        self.world = world

    def __missing__(self, key):
        value = OBJECTS[key](self.world)
        self[key] = value
        return value


def test_every_route_has_an_access_case():
    missing = [name for name in all_route_names() if name not in ROUTES]
    assert not missing, f"routes without an access case in tests/access_cases.py: {missing}"


def test_no_stale_access_cases():
    stale = sorted(set(ROUTES) - set(all_route_names()))
    assert not stale, f"access cases for routes that no longer exist: {stale}"


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_anonymous_is_refused(name, world, client):
    case = ROUTES[name]
    url = reverse(name, kwargs=case.kwargs(LazyObjects(world)))
    response = client.get(url)
    if case.public:
        assert response.status_code in (200, 302, 405, 503)
    elif case.api:
        assert response.status_code in (401, 403), f"{name}: {response.status_code}"
    else:
        assert response.status_code == 302 and "/login/" in response["Location"], f"{name}: {response.status_code}"


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_customer_of_another_organization_is_refused(name, world, client):
    case = ROUTES[name]
    url = reverse(name, kwargs=case.kwargs(LazyObjects(world)))
    client.force_login(world.customer_b)
    response = client.get(url)
    assert response.status_code in case.foreign, f"{name}: got {response.status_code}, expected {case.foreign}"
    if response.status_code == 200 and not getattr(response, "streaming", False):
        assert MARKER_A not in response.content.decode(errors="replace"), f"{name} shows organization A's data"
