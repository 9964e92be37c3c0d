"""The OpenAPI schema documents the error answers every operation can give.

drf-spectacular documents the success answer only. The API also answers 400 (bad input anywhere:
body, filters, pagination, a NUL character), 401/403 (not signed in, or a role that may not),
404 for an object the caller may not see or that does not exist (the same answer for both), and 413
for an upload over the limit; clients and the API fuzzer read them from the schema.
"""
from __future__ import annotations

from drf_spectacular.openapi import AutoSchema

ERROR_BODY = {"type": "object", "additionalProperties": True,
              "description": "`detail`, or field names with their messages."}
DESCRIPTIONS = {
    "400": "Bad input: the body, a filter, limit/offset, or a NUL character.",
    "401": "Not signed in (no valid session or API token).",
    "403": "Signed in, but this role may not do this.",
    "404": "No such object, or one the caller may not see.",
    "413": "The upload is over the limit.",
}


class PortalAutoSchema(AutoSchema):
    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        codes = ["400", "401", "403"]
        if "{" in self.path:
            codes.append("404")
        if self.method in ("POST", "PUT", "PATCH") and any(
                "multipart" in p.media_type for p in getattr(self.view, "parser_classes", []) if hasattr(p, "media_type")):
            codes.append("413")
        for code in codes:
            responses.setdefault(code, {"content": {"application/json": {"schema": ERROR_BODY}},
                                        "description": DESCRIPTIONS[code]})
        return responses
