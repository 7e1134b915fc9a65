"""English, as the product writes it (lev/formats/__init__.py): Dec 7, 2026 and Dec 7, 2026 01:21 (UTC,
the site's time zone), the same in a list, a record's page, a deal's timeline and the home page."""

DATE_FORMAT = "M j, Y"
DATETIME_FORMAT = "M j, Y H:i"
TIME_FORMAT = "H:i"
SHORT_DATE_FORMAT = DATE_FORMAT
SHORT_DATETIME_FORMAT = DATETIME_FORMAT
MONTH_DAY_FORMAT = "M j"
YEAR_MONTH_FORMAT = "M Y"
