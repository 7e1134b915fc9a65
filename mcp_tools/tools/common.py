"""Argument types and pagination shared by the tools.

Arguments mean exactly what the input schema says. The server validates them as JSON in pydantic's
strict mode (`LevMCP.call_tool_sync`): no true/false for a number, no number for a date or a string,
no string for a number. Every bound the API enforces comes from `lev.limits` and appears in the
schema, so an argument the schema allows is never refused by the API.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import math
import re
import sys
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from typing import Annotated, Any, Literal
from urllib.parse import parse_qs, urlsplit

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from lev.enums import (
    ASSET_TYPES,
    BUSINESS_PLANS,
    CAPITAL_SOURCE_TYPES,
    LENDER_TYPES,
    LOAN_TYPES,
    RATE_INDEXES,
    SUMMARY_DETAILS,
    TRANSACTION_TYPES,
    US_STATES,
)
from lev.errors import ErrorCode
from lev.limits import (
    LIST_CURSOR_MAX,
    LOAN_AMOUNT_MIN,
    MAX_ID,
    MONEY_DECIMAL_PLACES,
    MONEY_MAX,
    MONEY_MIN_POSITIVE,
    NON_BLANK_TEXT_PATTERN,
    PAGE_NUMBER_MAX,
    PAGE_SIZE_MAX,
    TEXT_PATTERN,
)
from lev.vocabulary import (
    MONEY_EXAMPLE,
    Slip,
    bps_from_percent,
    bps_message,
    canonical_choice,
    date_message,
    dates_from_text,
    loan_amount_too_small_message,
    money_text_message,
    percent_fraction_message,
)
from mcp_tools import budget
from mcp_tools.addresses import Address
from mcp_tools.errors import ToolFailure, validation_failure
from mcp_tools.registry import lev


def _choice(values: tuple[str, ...]) -> Callable[[Any], Any]:
    """Normalise an enum argument as the API does (`lev.vocabulary.canonical_choice`): case and
    separators ignored, aliases such as state names accepted, known slips refused with their message."""

    def normalise(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return canonical_choice(value, values)
        except Slip as slip:
            raise PydanticCustomError("enum_slip", str(slip)) from None

    return normalise


# Enums are matched ignoring case and separators ("Value-Add" is value_add), states also by name
# ("Texas" is TX); the schema lists the canonical values.
LoanType = Annotated[Literal[LOAN_TYPES], BeforeValidator(_choice(LOAN_TYPES))]  # type: ignore[valid-type]
TransactionType = Annotated[Literal[TRANSACTION_TYPES],  # type: ignore[valid-type]
                            BeforeValidator(_choice(TRANSACTION_TYPES))]
BusinessPlan = Annotated[Literal[BUSINESS_PLANS], BeforeValidator(_choice(BUSINESS_PLANS))]  # type: ignore[valid-type]
AssetType = Annotated[Literal[ASSET_TYPES], BeforeValidator(_choice(ASSET_TYPES))]  # type: ignore[valid-type]
LenderType = Annotated[Literal[LENDER_TYPES], BeforeValidator(_choice(LENDER_TYPES))]  # type: ignore[valid-type]
StateCode = Annotated[Literal[US_STATES], BeforeValidator(_choice(US_STATES))]  # type: ignore[valid-type]
RateIndex = Annotated[Literal[RATE_INDEXES], BeforeValidator(_choice(RATE_INDEXES))]  # type: ignore[valid-type]
CapitalSource = Annotated[Literal[CAPITAL_SOURCE_TYPES],  # type: ignore[valid-type]
                          BeforeValidator(_choice(CAPITAL_SOURCE_TYPES))]
SummaryDetail = Annotated[Literal[SUMMARY_DETAILS],  # type: ignore[valid-type]
                          BeforeValidator(_choice(SUMMARY_DETAILS))]


# Id and Text are capitalised: they stand where a type does in tool signatures.
def Id(description: str | None) -> Any:
    """A row id: a whole number from 1 to the largest id the database can hold."""
    return Annotated[int, Field(ge=1, le=MAX_ID, description=description)]


def Text(max_length: int, description: str | None = None, *, required: bool = False) -> Any:
    """Text the API stores: at most `max_length` characters, no control characters (tab, newline
    and carriage return are fine); a required text also needs something besides whitespace,
    because the API trims it and refuses a blank value."""
    if required:
        return Annotated[str, Field(min_length=1, max_length=max_length, pattern=NON_BLANK_TEXT_PATTERN,
                                    description=description)]
    return Annotated[str, Field(max_length=max_length, pattern=TEXT_PATTERN, description=description)]


# --- money ---------------------------------------------------------------------------------------
_CENT = Decimal(1).scaleb(-MONEY_DECIMAL_PLACES)


def _money_number(value: Any) -> Any:
    """Money is a JSON number: a string or true/false is refused with a message saying what to send
    (for text such as "18.5M", the number it stands for). A validator and not the schema's type
    alone, so the agent reads this message rather than "must be a number"."""
    if isinstance(value, bool):
        raise PydanticCustomError("money_type", f"must be {MONEY_EXAMPLE}, not true or false")
    if isinstance(value, str):
        raise PydanticCustomError("money_type", money_text_message(value, not_a_string=True))
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _finite(value: int | float) -> bool:
    """True for an integer (however many digits: math.isfinite would raise OverflowError for one
    past a float's range, about 1.8e308) and a finite float."""
    return isinstance(value, int) or math.isfinite(value)


# The largest finite float; an integer beyond it has no float value.
FLOAT_MAX = sys.float_info.max


def _within_float_range(minimum: float, maximum: float) -> Callable[[Any], Any]:
    """Refuse an integer no float holds with the bound it breaks, before pydantic converts it.

    JSON numbers have no size limit: an integer of 310 digits or more has no float value (Python's
    float() raises OverflowError; pydantic calls it "not a valid number"). It is simply out of range,
    so the agent reads "must be at most <maximum>" (or "at least <minimum>") as for any other number
    too large or too small. (A literal such as 1e400 reads as infinity: "must be a finite number".)"""

    def check(value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > FLOAT_MAX:
            if value > 0:
                raise PydanticCustomError("less_than_equal", "must be at most {le}", {"le": maximum})
            raise PydanticCustomError("greater_than_equal", "must be at least {ge}", {"ge": minimum})
        return value

    return check


def Number(minimum: float, maximum: float, *checks: Callable[[Any], Any]) -> Any:
    """A number argument from `minimum` to `maximum`: a finite JSON number; one of any size outside
    the range is refused naming the bound. `checks` are before-validators that see the number first."""
    return Annotated[float, Field(ge=minimum, le=maximum, allow_inf_nan=False),
                     BeforeValidator(_within_float_range(minimum, maximum)), *checks]


def Percent(maximum: float, floor: Decimal, places: int) -> Any:
    """A percent from 0 to `maximum`, kept to `places` decimals (rounded half up, as the API does);
    a value above 0 and below `floor` is a fraction sent for a percent (0.0725 for 7.25) and is
    refused, before rounding, with the value probably meant (lev.vocabulary, the API's words)."""

    def not_a_fraction(value: Any) -> Any:
        if _is_number(value) and _finite(value):
            message = percent_fraction_message(Decimal(repr(value)), floor=floor, maximum=Decimal(maximum),
                                               places=places)
            if message is not None:
                raise PydanticCustomError("percent_fraction", message)
        return value

    quantum = Decimal(1).scaleb(-places)

    def rounded(value: float) -> float:
        return float(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP))

    # The schema states the gap, so no schema-valid value is refused (null passes: "type" in the `not`).
    gap = {"not": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": int(floor) if floor == int(floor)
                   else float(floor)}}
    return Annotated[Number(0, maximum, BeforeValidator(not_a_fraction)), Field(json_schema_extra=gap),
                     AfterValidator(rounded)]


def _positive(value: Any) -> Any:
    # The reference's wording for 0 and below; (0, 0.01) is caught by the schema's minimum, and
    # -Infinity by the finite check.
    if _is_number(value) and _finite(value) and value <= 0:
        raise PydanticCustomError("greater_than", "must be greater than {gt}", {"gt": 0})
    return value


def _to_the_cent(value: float) -> float:
    """Round to the cent, as the API stores money.

    The schema cannot say "at most 2 decimal places" in a way clients check correctly: JSON Schema's
    `multipleOf: 0.01` is evaluated in binary floating point by common validators (python-jsonschema
    calls 0.07 or 1234567.89 invalid), so clients would refuse good amounts. So the tool rounds half
    up, and every field description says so."""
    return float(Decimal(repr(value)).quantize(_CENT, rounding=ROUND_HALF_UP))


def _plausible_loan(value: Any) -> Any:
    """A loan amount above 0 and below LOAN_AMOUNT_MIN is a unit slip: say the amount it likely means."""
    if _is_number(value) and _finite(value):
        amount = Decimal(repr(value))
        if 0 < amount < LOAN_AMOUNT_MIN:
            raise PydanticCustomError("loan_amount_small", loan_amount_too_small_message(amount))
    return value


def _money_type(minimum: Decimal | int, *checks: Callable[[Any], Any]) -> Any:
    """US dollars from `minimum` to MONEY_MAX, a JSON number, rounded to the cent; `checks` run on
    the number first, each able to refuse it with its own message.

    Each argument's own description says what the amount is; every one says it is rounded to the
    cent. The Field comes first so its bounds land on the number itself (and read as
    minimum/maximum in the schema); before-validators run last-listed first."""
    return Annotated[(Number(float(minimum), float(MONEY_MAX), *(BeforeValidator(check) for check in checks)),
                      BeforeValidator(_money_number), AfterValidator(_to_the_cent))]


Money = _money_type(MONEY_MIN_POSITIVE, _positive)
# A deal's loan amount (and a loan size to look lenders up by): at least LOAN_AMOUNT_MIN.
LoanAmount = _money_type(LOAN_AMOUNT_MIN, _plausible_loan, _positive)
MoneyFilter = _money_type(0)  # 0 or more, e.g. a range filter


# --- dates ---------------------------------------------------------------------------------------
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _iso_date(value: Any) -> dt.date:
    # pydantic alone also reads 0, "0" or "1700000000" as a Unix time; the schema promises YYYY-MM-DD.
    if not (isinstance(value, str) and _ISO_DATE.fullmatch(value)):
        # "Feb 26, 2027" or "2/26/2027": the API's words, with the ISO date read from it (lev.vocabulary).
        wanted = "must be a date in YYYY-MM-DD format"
        if dates_from_text(value):
            raise PydanticCustomError("date_written", date_message(value, wanted))
        raise PydanticCustomError("date_type", "must be a date string in YYYY-MM-DD format")
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise PydanticCustomError("date_parsing", "must be a real calendar date in YYYY-MM-DD format") from None


Date = Annotated[dt.date, BeforeValidator(_iso_date)]


# --- basis points --------------------------------------------------------------------------------
def BasisPoints(minimum: int, maximum: int, description: str | None = None) -> Any:
    """Whole basis points from `minimum` to `maximum`; a number with decimals that reads as a percent
    (2.85 for 285 bps) is refused with the basis points meant, in the API's words."""

    def not_a_percent(value: Any) -> Any:
        if _is_number(value) and bps_from_percent(value, maximum=maximum) is not None:
            raise PydanticCustomError("bps_from_percent", bps_message(value, maximum=maximum))
        return value

    return Annotated[int, Field(ge=minimum, le=maximum, description=description), BeforeValidator(not_a_percent)]


# --- pages ---------------------------------------------------------------------------------------
# Our cursors are under 40 characters; the bound keeps a forged one from costing anything to read.
CURSOR_MAX = 100

Limit = Annotated[
    int,
    Field(ge=1, le=PAGE_SIZE_MAX),
]
Cursor = Annotated[
    str | None,
    Field(min_length=1, max_length=CURSOR_MAX,
          description="next_cursor of the previous page."),
]


def cursor_failure(reason: str = "is not a cursor this server issued; pass next_cursor back unchanged"):
    return validation_failure({"cursor": [reason]})


# The page cursor, one codec.
# A tools' page cursor names a page of a REST list by number: the page and page size ("p", "l"), and,
# for a list that shortens a page to fit the byte budget, how many items of that page were already
# returned ("s", skip). A page cut after k items points its next_cursor at the same page with skip k,
# so the rest comes next, without gaps or repeats; a cursor without "s" reads as skip 0, and none is
# written with skip 0, so a plain page cursor is the same text whichever list issued it.
#
# Why not lev.pagination's signed cursor: that one is the API's keyset position (the last row's sort
# value), and the tools pass it through unchanged (ListCursor). This one only carries numbers the API
# checks again itself, so it needs no signature; signing it now would also void every cursor an agent
# holds.
def encode_page_cursor(page: int, size: int, skip: int = 0) -> str:
    data: dict[str, int] = {"p": page, "l": size}
    if skip:
        data["s"] = skip
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_page_cursor(cursor: str | None, limit: int, *, skips: bool = True) -> tuple[int, int, int]:
    """(page, page size, skip) for a cursor of `encode_page_cursor`; the first page of `limit` items
    for None. The cursor fixes the page size. `skips=False` is for a list that never shortens a page,
    whose cursors never carry a skip.

    Anything but a cursor this module made (forged numbers such as 1e999, other JSON, bad base64 or
    UTF-8) is a VALIDATION_ERROR naming `cursor`."""
    if cursor is None:
        return 1, limit, 0
    if not cursor:  # the schema says so too; "" is no page this server issued
        raise cursor_failure("may not be empty; omit cursor for the first page")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, binascii.Error, RecursionError):  # UnicodeDecodeError is a ValueError
        raise cursor_failure() from None
    if not isinstance(data, dict) or set(data) not in (({"p", "l"}, {"p", "l", "s"}) if skips else ({"p", "l"},)):
        raise cursor_failure()
    page, size, skip = data["p"], data["l"], data.get("s", 0)
    # type() and not isinstance(): true is an int to Python, and 1e999 parses as a float infinity.
    if any(type(v) is not int for v in (page, size, skip)):
        raise cursor_failure()
    if not (1 <= page <= PAGE_NUMBER_MAX and 1 <= size <= PAGE_SIZE_MAX and 0 <= skip < size):
        raise cursor_failure()
    return page, size, skip


def decode_cursor(cursor: str | None, limit: int) -> tuple[int, int]:
    """(page, page size) for the cursor of a list that never shortens a page (`decode_page_cursor`)."""
    page, size, _ = decode_page_cursor(cursor, limit, skips=False)
    return page, size


# Lists that grow with an account or the directory (list_deals, search_lender_directory) page by key:
# their cursor is the one the API signed (lev.pagination), passed through unchanged.
ListCursor = Annotated[
    str | None,
    Field(min_length=1, max_length=LIST_CURSOR_MAX,
          description="next_cursor of the previous page (same filters)."),
]


def list_page_query(cursor: str | None, limit: int) -> dict[str, Any]:
    """The API's query parameters for one page of a keyset list.

    A cursor the API signed (it holds a ':', which base64 never does) goes back to it as it came; the
    API refuses a forged or foreign one. A page-number cursor, as the tools issued before these lists
    paged by key, still reaches its page by number (so an agent paging across an upgrade goes on),
    and the page it gets hands out a keyset cursor."""
    if cursor is not None and ":" in cursor:
        return {"cursor": cursor, "page_size": limit}
    page, size = decode_cursor(cursor, limit)
    return {"page": page, "page_size": size} if page > 1 else {"page_size": size}


def list_page_result(key: str, body: dict[str, Any], items: list[Any]) -> dict[str, Any]:
    """A keyset REST page (`count`, `count_capped`, a `next` link with its cursor) as the tools' page shape."""
    next_link = body.get("next")
    next_cursor = parse_qs(urlsplit(next_link).query).get("cursor", [None])[0] if next_link else None
    result: dict[str, Any] = {key: items, "total": body.get("count", len(items))}
    if body.get("count_capped"):
        result["total_capped"] = True
    result.update(has_more=next_cursor is not None, next_cursor=next_cursor)
    return result


def page_result(key: str, body: dict[str, Any], page: int, size: int, items: list[Any]) -> dict[str, Any]:
    """A REST page (`count`, `next`) as the tools' page shape."""
    has_more = bool(body.get("next"))
    return {
        key: items,
        "total": body.get("count", len(items)),
        "has_more": has_more,
        "next_cursor": encode_page_cursor(page + 1, size) if has_more else None,
    }


def drop_none(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


# --- pages that may be cut short ------------------------------------------------------------------
def cursor_at(offset: int, size: int) -> str:
    """The cursor of pages of `size` items that starts at item `offset` (0-based) of the list."""
    return encode_page_cursor(offset // size + 1, size, offset % size)


def get_page(path: Address | str, query: dict[str, Any], page: int) -> dict[str, Any]:
    """One page of a REST list; a page past the end (the list got shorter since the cursor was
    made: the API's bare "Resource not found", where a missing parent names itself) is a cursor error."""
    try:
        return lev().get(path, query)
    except ToolFailure as failure:
        if failure.code == ErrorCode.NOT_FOUND and page > 1 and (failure.details or {}).get("resource") == "resource":
            raise cursor_failure("points past the last page (the list changed); omit cursor to start "
                                 "again from the first page") from None
        raise


def read_page(body: dict[str, Any], key: str, page: int, size: int, skip: int, items: list[Any],
              steps: list[Callable[[dict[str, Any]], dict[str, Any]]] = ()) -> dict[str, Any]:
    """A REST page (`count`, `next`) as the tools' page shape, without the `skip` items an earlier
    shortened answer already returned, fitted to the byte budget: detail trimmed by `steps` first
    (`fit_budget`), then the page shortened (`shorten_to_fit`)."""
    payload = {
        key: items[skip:],
        "total": body.get("count", len(items)),
        "has_more": bool(body.get("next")),
        "next_cursor": encode_page_cursor(page + 1, size) if body.get("next") else None,
    }
    payload = fit_budget(payload, key, list(steps))
    return shorten_to_fit(payload, key, lambda kept: encode_page_cursor(page, size, skip + kept)
                          if skip + kept < len(items) else payload["next_cursor"])


# --- byte budget -----------------------------------------------------------------------------------
# What the budget counts is in mcp_tools.budget: the text content and structuredContent together.
def clip(text: str | None, limit: int) -> str | None:
    return text if text is None or len(text) <= limit else text[: limit - 1] + "…"


def fit_budget(payload: dict[str, Any], key: str,
               steps: list[Callable[[dict[str, Any]], dict[str, Any]]]) -> dict[str, Any]:
    """Keep a page under LEV_MCP_MAX_RESPONSE_BYTES (as mcp_tools.budget counts it) by trimming
    detail, never items: each step shrinks every item a little more until the page fits. Items stay
    in place, so cursors still page without gaps; `compacted: true` tells the agent detail was
    trimmed."""
    for step in steps:
        if budget.fits(payload):
            break
        payload[key] = [step(item) for item in payload[key]]
        payload["compacted"] = True
    return payload


def shorten_to_fit(payload: dict[str, Any], key: str,
                   cursor_after: Callable[[int], str | None] | None) -> dict[str, Any]:
    """Keep a page under the budget by returning fewer items, never fewer than one: the page ends
    early with `truncated: true`, has_more true and a next_cursor (`cursor_after(kept)`) that
    continues right after the last item returned. Detail is never trimmed this way. Without
    `cursor_after` (a best-N list such as compare_term_sheets) the leading items are kept."""
    items = payload[key]
    if budget.fits(payload) or not items:
        return payload

    def cut(kept: int) -> dict[str, Any]:
        paging = {"has_more": True, "next_cursor": cursor_after(kept)} if cursor_after else {"has_more": True}
        return {**payload, key: items[:kept], **paging, "truncated": True}

    # Never fewer than one item: the server's guard answers for one too large.
    return cut(_most_that_fit(1, len(items), cut))


def cut_nested(payload: dict[str, Any], holder: str, key: str, total: int,
               continue_with: Callable[[int], dict[str, Any]]) -> dict[str, Any]:
    """Fit a detail answer whose object `payload[holder]` carries a list `key` (a deal's properties, a
    lender's programs): keep the leading items that fit, and when any of the `total` is left out say
    so with `truncated: true` and `continue_with` ({"tool", "arguments", "remaining"}: the call that
    returns the rest, from `continue_with(kept)`). Zero items may be kept: the object itself comes first."""
    obj = payload[holder]
    items = obj[key]
    if len(items) == total and budget.fits(payload):
        return payload

    def shaped(kept: int) -> dict[str, Any]:
        rest = {**continue_with(kept), "remaining": total - kept}
        return {**payload, holder: {**obj, key: items[:kept]}, "truncated": True, "continue_with": rest}

    kept = _most_that_fit(0, len(items), shaped)
    return shaped(kept) if kept < total else payload


def _most_that_fit(low: int, high: int, shaped: Callable[[int], dict[str, Any]]) -> int:
    """The largest count in [low, high] whose answer `shaped(count)` fits the budget (a binary search:
    the size grows with the count), or `low` when none does."""
    while low < high:
        middle = (low + high + 1) // 2
        if budget.fits(shaped(middle)):
            low = middle
        else:
            high = middle - 1
    return low
