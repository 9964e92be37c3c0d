"""Bounded limit/offset pagination: a page is at most ``MAX_LIMIT`` rows, and a limit or offset that
is not a number in range is a 400 (not a silent default, and never a database error)."""
from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination

MAX_LIMIT = 500
MAX_OFFSET = 2**31 - 1


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = MAX_LIMIT

    @staticmethod
    def _number(request, name: str, low: int, high: int) -> int | None:
        raw = request.query_params.get(name)
        if raw is None or raw == "":
            return None
        if not raw.isascii() or not raw.isdigit() or not low <= int(raw) <= high:
            raise ValidationError({name: [f"Give a whole number from {low} to {high}."]})
        return int(raw)

    def get_limit(self, request):
        limit = self._number(request, self.limit_query_param, 1, self.max_limit)
        return self.default_limit if limit is None else limit

    def get_offset(self, request):
        return self._number(request, self.offset_query_param, 0, MAX_OFFSET) or 0

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.limit_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_limit)
            elif parameter["name"] == self.offset_query_param:
                parameter["schema"].update(minimum=0, maximum=MAX_OFFSET)
        return parameters
