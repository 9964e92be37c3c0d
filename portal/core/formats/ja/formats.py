"""Dates on Japanese pages: the same ISO dates as the English ones (2026-12-01, 2026-12-01 19:52 in the display
time zone, settings.TIME_ZONE), which Japanese engineers read as readily as 2026/12/01 and which keep one date
written one way in pages, exports and the API; the long forms (month and day, year and month) in Japanese."""
DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
TIME_FORMAT = "H:i"
MONTH_DAY_FORMAT = "n月j日"
YEAR_MONTH_FORMAT = "Y年n月"
FIRST_DAY_OF_WEEK = 0
DECIMAL_SEPARATOR = "."
THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
