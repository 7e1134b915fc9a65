"""Every bound the API enforces, in one place.

Serializers, models and MCP tool signatures all read these, so a tool's input schema never
promises what the API refuses (and never refuses what the API accepts).
"""

from __future__ import annotations

from decimal import Decimal

# Ids are PostgreSQL bigints; a larger number can name no row and must never reach a query.
MAX_ID = 2**63 - 1

# Money: DecimalField(max_digits=14, decimal_places=2) -> below 1,000,000,000,000 US dollars.
MONEY_MAX_DIGITS = 14
MONEY_DECIMAL_PLACES = 2
MONEY_MAX = Decimal("999999999999.99")
MONEY_MIN_POSITIVE = Decimal("0.01")

# Text.
DEAL_TITLE_MAX = 200
DEAL_DESCRIPTION_MAX = 5000
PROPERTY_NAME_MAX = 200
PROPERTY_ADDRESS_MAX = 255
PROPERTY_CITY_MAX = 100
SEARCH_TEXT_MAX = 200
ZIP_PATTERN = r"^\d{5}(-\d{4})?$"

# Property figures.
UNITS_MAX = 1_000_000
SQUARE_FOOTAGE_MAX = 100_000_000
YEAR_BUILT_MIN = 1700
YEAR_BUILT_MAX = 2100

# Financials.
INTEREST_RATE_MAX = 30  # percent per year
AMORTIZATION_YEARS_MIN = 1
AMORTIZATION_YEARS_MAX = 50

# Lists and pages.
PAGE_SIZE_MAX = 100
PROPERTIES_PER_CREATE_MAX = 50

# Idempotency keys: visible ASCII (no spaces or control characters), 1 to 255 characters.
IDEMPOTENCY_KEY_MAX = 255
IDEMPOTENCY_KEY_PATTERN = r"^[!-~]{1,255}$"

# Requests: Django's DATA_UPLOAD_* settings read these; past them the API answers 413 / 400.
REQUEST_BODY_MAX_BYTES = 2_621_440  # 2.5 MiB, Django's default, now named
REQUEST_FIELDS_MAX = 1000  # query parameters, or fields of a form body
# JSON bodies nested deeper than this are refused: no schema of the API comes near it, and deep
# nesting only exhausts the stack of whatever walks the data next.
JSON_MAX_DEPTH = 64

# Derived ratios, sized so that any inputs the money fields accept read back: LTV (percent) is at
# most MONEY_MAX / MONEY_MIN_POSITIVE * 100 (12 + 2 + 2 whole digits), DSCR at most MONEY_MAX / 0.01
# (a debt service is rounded to cents; 12 + 2 whole digits).
RATIO_DECIMAL_PLACES = 2
LTV_MAX_DIGITS = MONEY_MAX_DIGITS + 4
DSCR_MAX_DIGITS = MONEY_MAX_DIGITS + 2
