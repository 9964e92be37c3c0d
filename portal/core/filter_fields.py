"""Filter fields shared by every filterset."""
from datetime import UTC

import django_filters


class IsoDateTimeFilter(django_filters.IsoDateTimeFilter):
    """An ISO 8601 date-time filter that queries in UTC.

    Python accepts offsets up to ±23:59 but PostgreSQL only ±15:59; comparing in UTC makes any valid
    input a valid query instead of a database error.
    """

    def filter(self, qs, value):
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC)
        return super().filter(qs, value)
