"""Every API response is what the published OpenAPI schema says: each GET route of the API (its access case builds
the URL from organization A's objects) is read as staff and as organization A's lead SA, and each 200 body is
validated against the operation's documented response (the schema drf-spectacular publishes at /api/schema/).
schemathesis fuzzes the same schema with generated requests (tests/fuzz); this check reads the real rows every
area's cases build, in every CI run, so a field that can be null where the schema says string fails here."""
from __future__ import annotations

import copy
import re

import jsonschema
import pytest
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator

from tests.access_cases import ROUTES
from tests.portal.test_routes import LazyObjects, all_routes

pytestmark = pytest.mark.django_db


def _inline(node, components: dict, seen: tuple = ()):
    """The schema with ``$ref``s inlined and OpenAPI 3.0's ``nullable`` written as JSON Schema's null type."""
    if isinstance(node, list):
        return [_inline(item, components, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in seen:
            return {}
        return _inline(copy.deepcopy(components[name]), components, (*seen, name))
    out = {key: _inline(value, components, seen) for key, value in node.items()}
    if "oneOf" in out:  # branches that differ only by ``format`` (blank or a URI): formats are annotations here
        out["anyOf"] = out.pop("oneOf")
    if out.pop("nullable", False):
        if "type" in out:
            out["type"] = [out["type"], "null"] if isinstance(out["type"], str) else [*out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        if "allOf" in out or "oneOf" in out or "anyOf" in out:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def _operations() -> list[tuple[re.Pattern, dict]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema.get("components", {}).get("schemas", {})
    found = []
    for path, item in schema["paths"].items():
        get = item.get("get")
        content = (get or {}).get("responses", {}).get("200", {}).get("content", {})
        body = content.get("application/json", {}).get("schema")
        if body is None:
            continue
        pattern = re.compile("^" + re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(path)) + "$")
        found.append((pattern, _inline(body, components)))
    return found


def test_every_api_read_answers_what_the_schema_documents(client, world):
    from tests.clusters.factories_clusters import ClusterFactory

    ClusterFactory(organization=world.org_a, name="no-blueprint", blueprint=None)  # "blueprint": null
    operations = _operations()
    objs = LazyObjects(world)
    routes = all_routes()
    checked, problems = 0, []
    for name, case in sorted(ROUTES.items()):
        route = routes.get(name)
        if not case.api or route is None or "format" in name or name.endswith(("api-root", "schema")):
            continue
        try:
            url = reverse(name, kwargs=case.kwargs(objs))
        except Exception:  # noqa: BLE001 - a route of another kind (a page mounted under /api/)
            continue
        documented = next((body for pattern, body in operations if pattern.match(url)), None)
        if documented is None:
            continue
        for user in (world.staff, world.lead_a):
            client.force_login(user)
            response = client.get(url, HTTP_ACCEPT="application/json")
            if response.status_code != 200 or not response.get("Content-Type", "").startswith("application/json"):
                continue
            checked += 1
            errors = sorted(jsonschema.Draft202012Validator(documented).iter_errors(response.json()), key=str)
            problems += [f"{url} as {user.username}: {e.message} at {list(e.absolute_path)}" for e in errors[:3]]
    assert checked > 40, checked
    assert not problems, "\n".join(problems)
