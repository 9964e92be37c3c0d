"""The OpenAPI schema documents the error answers every operation can give.

drf-spectacular documents the success answer only. The API also answers 400 (bad input anywhere:
body, filters, pagination, a NUL character), 401/403 (not signed in, or a role that may not),
404 for an object the caller may not see or that does not exist (the same answer for both), 409 for a
write the database refuses as conflicting (portal.core.api.errors), and 413
for an upload over the limit; clients and the API fuzzer read them from the schema.
"""
from __future__ import annotations

import re

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter

from portal.core import submissions

ERROR_BODY = {"type": "object", "additionalProperties": True,
              "description": "`detail`, or field names with their messages."}
DESCRIPTIONS = {
    "400": "Bad input: the body, a filter, limit/offset, or a NUL character.",
    "401": "Not signed in (no valid session or API token).",
    "403": "Signed in, but this role may not do this.",
    "404": "No such object, or one the caller may not see.",
    "409": "The change conflicts with the data (a row that refers to it, a change made at the same time, or a "
           "state that does not allow it now, such as a retry of a cluster that has not failed), or an "
           "Idempotency-Key was used before for a request with another body.",
    "412": "`If-Match` names a version the row no longer has: GET it again (its `ETag`) and re-apply the change.",
    "413": "The upload is over the limit.",
}


class PortalAutoSchema(AutoSchema):
    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        """A field validator may say what OpenAPI can express of its rule (``validator.openapi_schema``,
        a dict or a callable giving one): the schema then tells clients what the API refuses."""
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if "type" not in schema:
            return schema
        for validator in getattr(field, "validators", []):
            facts = getattr(validator, "openapi_schema", None)
            if facts is None:
                continue
            facts = dict(facts() if callable(facts) else facts)
            if "pattern" in facts and getattr(field, "allow_blank", False):
                facts["pattern"] = facts["pattern"].replace("^(", "^(|", 1)
            schema.update(facts)
        return schema

    def _get_filter_parameters(self):
        """Where a filterset declares its own ``ordering`` (django-filter's OrderingFilter, which refuses
        an unknown field with 400), document that one (the fields it accepts), not DRF's free-text one."""
        parameters = super()._get_filter_parameters()
        orderings = [p for p in parameters if p.get("name") == "ordering"]
        if len(orderings) > 1:
            free_text = [p for p in orderings if "enum" not in p.get("schema", {}).get("items", p.get("schema", {}))]
            parameters = [p for p in parameters if not any(p is f for f in free_text)] if len(free_text) < len(orderings) \
                else parameters
        return parameters

    def _honours_idempotency_key(self) -> bool:
        handler = getattr(self.view, getattr(self.view, "action", None) or self.method.lower(), None)
        return self.method == "POST" and getattr(handler, "honours_idempotency_key", False)

    def get_override_parameters(self):
        """A create that honours ``Idempotency-Key`` (portal.core.submissions) says so (a key reused with another
        body is the 409 every write documents)."""
        parameters = super().get_override_parameters()
        if self._honours_idempotency_key():
            parameters = [*parameters, OpenApiParameter(
                submissions.HEADER, {"type": "string", "pattern": f"^{submissions.KEY.pattern}$", "maxLength": 128},
                OpenApiParameter.HEADER, required=False,
                description=f"Any string of 1 to 128 visible ASCII characters, new for each request (a UUID). A "
                            f"repeat within {submissions.ttl()} answers the first request's status and body "
                            "(`Idempotent-Replayed: true`) and writes nothing.")]
        return parameters

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        codes = ["400", "401", "403"]
        if "{" in self.path:
            codes.append("404")
        if self.method in ("POST", "PUT", "PATCH", "DELETE"):
            codes.append("409")
        if self.method in ("PUT", "PATCH"):
            codes.append("412")
        if self.method in ("POST", "PUT", "PATCH") and any(
                "multipart" in p.media_type for p in getattr(self.view, "parser_classes", []) if hasattr(p, "media_type")):
            codes.append("413")
        for code in codes:
            responses.setdefault(code, {"content": {"application/json": {"schema": ERROR_BODY}},
                                        "description": DESCRIPTIONS[code]})
        return responses


# Links: which answer gives the id another operation needs (OpenAPI `links`), so a client, and the API
# fuzzer's stateful phase, can follow create → read/change/delete and a resource to its children.
METHODS = ("get", "post", "put", "patch", "delete")
DETAIL = re.compile(r"(?P<collection>.*/)\{(?P<param>\w+)\}/")
PARAM = re.compile(r"\{(\w+)\}")


def _schema_of(result: dict, response: dict) -> dict:
    schema = response.get("content", {}).get("application/json", {}).get("schema", {})
    ref = schema.get("$ref", "")
    if ref.startswith("#/components/schemas/"):
        return result["components"]["schemas"].get(ref.rsplit("/", 1)[-1], {})
    return schema


def _success(operation: dict) -> tuple[str, dict] | tuple[None, None]:
    for code in ("201", "200", "202"):
        if code in operation.get("responses", {}):
            return code, operation["responses"][code]
    return None, None


def _properties(result: dict, response: dict) -> dict:
    return _schema_of(result, response).get("properties", {})


def add_links(result, generator, request, public):
    """drf-spectacular postprocessing hook: add `links` to the success answers.

    - a create (201) or list (200, first row) to every operation on the created object and its actions;
    - an object's read, update and action answers to the object's other operations (same path ids);
    - an object to the collections nested under it (`/api/health/clusters/{cluster_id}/...` from a cluster);
    - an answer's related-object fields (`organization`, `workload`, `cluster`, ...) to that object's read.
    """
    paths = result.get("paths", {})
    operations = {(path, method): op for path, item in paths.items() for method, op in item.items() if method in METHODS}
    details = {}  # detail path -> (collection path, its id parameter)
    by_collection_name = {}  # "clusters" -> detail path with {id}
    for path in paths:
        match = DETAIL.fullmatch(path)
        if match:
            details[path] = (match["collection"], match["param"])
            name = match["collection"].rstrip("/").rsplit("/", 1)[-1]
            if match["param"] == "id" and PARAM.search(match["collection"]) is None:
                by_collection_name.setdefault(name, path)

    def link(source, target_key, parameters):
        code, response = _success(source)
        if response is None:
            return
        target = operations[target_key]
        target_params = {p["name"] for p in target.get("parameters", []) if p.get("in") == "path"}
        if not target_params or set(parameters) != target_params:
            return
        response.setdefault("links", {})[target["operationId"]] = {
            "operationId": target["operationId"], "parameters": parameters}

    def under(detail):
        """Operations on the object at `detail` and on its actions (paths with no further id)."""
        params = set(PARAM.findall(detail))
        return [(p, m) for (p, m) in operations if p.startswith(detail) and set(PARAM.findall(p)) == params]

    for detail, (collection, param) in details.items():
        outer = PARAM.findall(collection)  # ids already in the collection's path (nested collections)
        carried = {name: f"$request.path.{name}" for name in outer}
        field = param if param in ("id", "slug") else "id"
        for key in under(detail):
            create = operations.get((collection, "post"))
            if create and field in _properties(result, _success(create)[1] or {}):
                link(create, key, {**carried, param: f"$response.body#/{field}"})
            listing = operations.get((collection, "get"))
            if listing:
                rows = _properties(result, _success(listing)[1] or {}).get("results")
                if rows is not None:
                    link(listing, key, {**carried, param: f"$response.body#/results/0/{field}"})
            for source_key in under(detail):
                if source_key != key and source_key[1] != "delete":
                    link(operations[source_key], key, {name: f"$request.path.{name}" for name in PARAM.findall(detail)})

    # Collections nested under another resource's id: /api/health/clusters/{cluster_id}/metrics/ from a cluster.
    for path, method in list(operations):
        for name in PARAM.findall(path):
            parent = by_collection_name.get(name[:-3] + "s") if name.endswith("_id") else None
            if parent is None or set(PARAM.findall(path)) != {name}:
                continue
            parent_collection = details[parent][0]
            for source_key, expression in (((parent_collection, "post"), "$response.body#/id"),
                                           ((parent, "get"), "$response.body#/id")):
                if source_key in operations:
                    link(operations[source_key], (path, method), {name: expression})

    # Related-object fields of an answer to the related object's read.
    for source in operations.values():
        _, response = _success(source)
        for field_name, schema in _properties(result, response or {}).items():
            parent = by_collection_name.get(field_name.replace("_", "-") + "s")
            if parent and schema.get("type") == "integer" and (parent, "get") in operations:
                link(source, (parent, "get"), {"id": f"$response.body#/{field_name}"})
    return result


# The NUL guard (portal.core.middleware.RejectNulBytesMiddleware) answers 400 to a NUL character anywhere in the
# input: in a query parameter, a field, a field name, or a field the serializer does not know. The schema
# says so, so that a client (and the fuzzer) knows which strings are valid input.
NO_NUL = "^[^\\x00]*$"
DECIMAL = re.compile(r"\^-\?\\d\{0,(?P<whole>\d+)\}\(\?:\\\.\\d\{0,(?P<fraction>\d+)\}\)\?\$")
_SCALAR = {"anyOf": [{"type": "string", "pattern": NO_NUL}, {"type": "number"}, {"type": "boolean"}]}
EXTRA_FIELD = {  # what a field the serializer ignores may hold (and what it may be named)
    "anyOf": [*_SCALAR["anyOf"], {"type": "array", "items": _SCALAR},
              {"type": "object", "propertyNames": {"pattern": NO_NUL}, "additionalProperties": _SCALAR}],
}


def _forbid_nul(result: dict, schema, seen: set) -> None:
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref", "")
    if ref.startswith("#/components/schemas/"):
        name = ref.rsplit("/", 1)[-1]
        if name not in seen:
            seen.add(name)
            _forbid_nul(result, result["components"]["schemas"].get(name), seen)
        return
    decimal = DECIMAL.fullmatch(schema.get("pattern", "")) if schema.get("format") == "decimal" else None
    if decimal:  # drf-spectacular's pattern also admits "", "-" and "."; DRF wants at least one digit
        whole, fraction = decimal["whole"], decimal["fraction"]
        schema["pattern"] = rf"^-?(?:\d{{1,{whole}}}(?:\.\d{{0,{fraction}}})?|\.\d{{1,{fraction}}})$"
    if schema.get("type") == "string" and not ({"pattern", "enum", "format"} & set(schema)):
        schema["pattern"] = NO_NUL
    if schema.get("type") == "object" or "properties" in schema:
        schema.setdefault("propertyNames", {"pattern": NO_NUL})
        if schema.get("additionalProperties", True) is True:
            schema["additionalProperties"] = EXTRA_FIELD
    for key in ("properties",):
        for child in schema.get(key, {}).values():
            _forbid_nul(result, child, seen)
    for key in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(key), dict) and schema.get(key) is not EXTRA_FIELD:
            _forbid_nul(result, schema[key], seen)
    for key in ("allOf", "anyOf", "oneOf"):
        for child in schema.get(key, []):
            _forbid_nul(result, child, seen)


def forbid_nul_in_input(result, generator, request, public):
    """drf-spectacular postprocessing hook: every input string, and every field name, has no NUL."""
    seen: set = set()
    for item in result.get("paths", {}).values():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            for parameter in operation.get("parameters", []):
                _forbid_nul(result, parameter.get("schema"), seen)
            for media in operation.get("requestBody", {}).get("content", {}).values():
                _forbid_nul(result, media.get("schema"), seen)
    return result
