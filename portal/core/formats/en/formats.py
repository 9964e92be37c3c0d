"""One date format across the portal (ISO-like, unambiguous for an international program): every date is
2026-12-01 and every time 2026-12-01 19:52, in the display time zone (settings.TIME_ZONE)."""
DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
TIME_FORMAT = "H:i"
MONTH_DAY_FORMAT = "F j"
YEAR_MONTH_FORMAT = "F Y"
