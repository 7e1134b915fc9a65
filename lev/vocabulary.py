"""What people and agents send for our values, and what to tell them when it is a common slip.

One place for the REST serializers (`lev.serializers`) and the MCP argument types
(`mcp_tools.tools.common`), so both doors accept and refuse the same input with the same words:

* enum values are matched ignoring case and separators: "Value-Add", "value add" and "VALUE_ADD"
  all mean `value_add`;
* a US state may be sent by name: "Texas" or "new york" mean TX and NY;
* the words people use for a value are that value (`SYNONYMS`, one table, documented in
  docs/vocabulary.md): "apartments" or "Multi-Family" mean multifamily, "refi" means refinance;
* "bridge" is not a loan type: the message explains light vs heavy bridge and names both values;
* money is a number of US dollars: "18.5M" or "$18,500,000" get a message saying so, with the
  number meant when the text reads as an amount;
* a loan amount below `LOAN_AMOUNT_MIN` is refused with the amount it was likely meant to be
  (18.5 -> 18500000);
* a percent sent as a fraction (an interest rate of 0.0725) is refused with the percent it was
  likely meant to be (7.25), below each field's floor (`lev.limits.RATE_PERCENT_FLOOR`, …).

Messages here follow a field name (`Validation failed: loan_type "bridge" is ...`), as every
validation message of the API does.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from lev.enums import (
    ASSET_TYPES,
    BUSINESS_PLANS,
    LENDER_TYPES,
    LOAN_TYPES,
    PROGRAM_LOAN_TYPES,
    QUOTE_TYPES,
    RATE_TYPES,
    RECOURSE_TYPES,
    TRANSACTION_TYPES,
    US_STATES,
)
from lev.limits import LOAN_AMOUNT_MIN, MONEY_MAX


class Slip(ValueError):
    """A value that is a known slip: its message says what to send instead."""


# --- enums ---------------------------------------------------------------------------------------
_SEPARATORS = re.compile(r"[\s\-]+")

STATE_NAMES = {
    "ALABAMA": "AL", "ALASKA": "AK", "ARIZONA": "AZ", "ARKANSAS": "AR", "CALIFORNIA": "CA", "COLORADO": "CO",
    "CONNECTICUT": "CT", "DELAWARE": "DE", "DISTRICT OF COLUMBIA": "DC", "WASHINGTON DC": "DC",
    "FLORIDA": "FL", "GEORGIA": "GA", "HAWAII": "HI", "IDAHO": "ID", "ILLINOIS": "IL", "INDIANA": "IN",
    "IOWA": "IA", "KANSAS": "KS", "KENTUCKY": "KY", "LOUISIANA": "LA", "MAINE": "ME", "MARYLAND": "MD",
    "MASSACHUSETTS": "MA", "MICHIGAN": "MI", "MINNESOTA": "MN", "MISSISSIPPI": "MS", "MISSOURI": "MO",
    "MONTANA": "MT", "NEBRASKA": "NE", "NEVADA": "NV", "NEW HAMPSHIRE": "NH", "NEW JERSEY": "NJ",
    "NEW MEXICO": "NM", "NEW YORK": "NY", "NORTH CAROLINA": "NC", "NORTH DAKOTA": "ND", "OHIO": "OH",
    "OKLAHOMA": "OK", "OREGON": "OR", "PENNSYLVANIA": "PA", "RHODE ISLAND": "RI", "SOUTH CAROLINA": "SC",
    "SOUTH DAKOTA": "SD", "TENNESSEE": "TN", "TEXAS": "TX", "UTAH": "UT", "VERMONT": "VT", "VIRGINIA": "VA",
    "WASHINGTON": "WA", "WEST VIRGINIA": "WV", "WISCONSIN": "WI", "WYOMING": "WY", "PUERTO RICO": "PR",
}

BRIDGE_MESSAGE = (
    '"bridge" is two loan types here; send light_bridge (a mostly leased property needing light '
    "work or lease-up) or heavy_bridge (major renovation, repositioning or a largely vacant property)"
)

# Per enum (its values tuple): normalised input -> the message of a slip that names no one value.
SLIPS: dict[tuple[str, ...], dict[str, str]] = {
    LOAN_TYPES: {"bridge": BRIDGE_MESSAGE, "bridge_loan": BRIDGE_MESSAGE},
}
# Per enum: normalised input -> the value it names.
ALIASES: dict[tuple[str, ...], dict[str, str]] = {
    US_STATES: STATE_NAMES,
}

# The words agents and people write for a value, per enum: value -> its synonyms, written as a person
# would (matched ignoring case, and with spaces, hyphens, underscores, slashes and dots all alike:
# "Multi-Family", "multi family" and "MULTI_FAMILY" are one synonym). Only words that name one value
# with no doubt: "bridge" names two loan types and stays a slip (BRIDGE_MESSAGE); "medical office"
# (office or healthcare?) and "flex" are left out. docs/vocabulary.md shows this table; a test
# checks the two agree.
SYNONYMS: dict[tuple[str, ...], dict[str, tuple[str, ...]]] = {
    ASSET_TYPES: {
        "multifamily": ("apartments", "apartment", "apartment building", "multi family", "mf"),
        "self_storage": ("storage", "mini storage", "self storage facility"),
        "hospitality": ("hotel", "hotels", "motel", "lodging"),
        "industrial": ("warehouse", "warehouses", "logistics", "distribution"),
        "retail": ("shopping center", "shopping centre", "strip center", "strip mall"),
        "office": ("offices", "office building"),
        "senior_housing": ("seniors housing", "assisted living", "independent living"),
        "manufactured_housing": ("mobile home park", "mobile homes", "mhp", "manufactured home community"),
        "healthcare": ("health care",),
    },
    LOAN_TYPES: {
        "permanent": ("perm", "perm loan", "permanent loan", "permanent financing"),
        "construction": ("construction loan",),
        "land": ("land loan",),
        "predevelopment": ("pre development", "predevelopment loan"),
        "light_bridge": ("light bridge loan",),
        "heavy_bridge": ("heavy bridge loan",),
        "tbd": ("to be determined",),
    },
    TRANSACTION_TYPES: {
        "acquisition": ("purchase", "acq"),
        "refinance": ("refi", "refinancing", "cash out refi", "cash out refinance"),
        "new_construction": ("ground up", "ground up construction", "development"),
        "tbd": ("to be determined",),
    },
    BUSINESS_PLANS: {
        "stabilized": ("stabilised",),
    },
    LENDER_TYPES: {
        "life_company": ("life co", "lifeco", "life insurance company", "insurance company"),
        "cmbs": ("conduit",),
        "debt_fund": ("credit fund",),
        "agency": ("fannie mae", "freddie mac", "gse"),
        "private": ("private lender", "hard money"),
    },
    RECOURSE_TYPES: {
        "non_recourse": ("nonrecourse",),
        "full": ("full recourse",),
        "partial": ("partial recourse",),
    },
    RATE_TYPES: {
        "fixed": ("fixed rate",),
        "floating": ("floating rate", "variable", "variable rate", "adjustable"),
    },
    QUOTE_TYPES: {
        "indicative": ("indication", "indicative quote"),
        "soft_quote": ("soft",),
        "commitment": ("commitment letter",),
    },
}
_PHRASE_SEPARATORS = re.compile(r"[\s\-_/.,]+")


def phrase(text: str) -> str:
    """How a synonym is matched: lower case, words apart by one space ("Multi-Family" -> "multi family")."""
    return _PHRASE_SEPARATORS.sub(" ", text).strip().lower()


def _synonym_index() -> dict[tuple[str, ...], dict[str, str]]:
    index: dict[tuple[str, ...], dict[str, str]] = {}
    for values, table in SYNONYMS.items():
        found = index.setdefault(values, {})
        for value, words in table.items():
            if value not in values:
                raise ValueError(f"synonyms of {value!r}, which is not a value of its enum")
            for word in words:
                if found.setdefault(phrase(word), value) != value:
                    raise ValueError(f"{word!r} is a synonym of two values")
    return index


_SYNONYM_INDEX = _synonym_index()


def synonyms_of(values: tuple[str, ...]) -> dict[str, str]:
    """The synonyms (matched phrase -> value) of an enum; a program's loan types are the deal's less
    tbd, so they take the deal's synonyms of the values they hold."""
    if values in _SYNONYM_INDEX:
        return _SYNONYM_INDEX[values]
    if values == PROGRAM_LOAN_TYPES:
        return {word: value for word, value in _SYNONYM_INDEX[LOAN_TYPES].items() if value in values}
    return {}


def canonical_choice(value: str, values: tuple[str, ...]) -> str:
    """The value of `values` that `value` names, ignoring case, surrounding space and separators
    (spaces and hyphens read as underscores), or a known alias such as a state's name, or a synonym
    (`SYNONYMS`: "apartments" is multifamily).

    What names none comes back normalised (the caller refuses it, listing the values); a known
    slip raises `Slip` with a message that says what to send instead.
    """
    upper = all(v.isupper() for v in values)
    text = value.strip().upper() if upper else value.strip().lower()
    if text in values:  # includes values with their own punctuation, e.g. "-created_at"
        return text
    key = _SEPARATORS.sub("_", text)
    if key in values:
        return key
    name = " ".join(text.replace(".", "").replace(",", " ").split()).upper()
    alias = ALIASES.get(values, {}).get(name)
    if alias is not None:
        return alias
    synonym = synonyms_of(values).get(phrase(text))
    if synonym is not None:
        return synonym
    slip = SLIPS.get(values, {}).get(key)
    if slip is not None:
        raise Slip(slip)
    return text


# --- money ---------------------------------------------------------------------------------------
MONEY_EXAMPLE = "a number of US dollars, e.g. 18500000"
_SHORTHAND = re.compile(
    r"^(?:usd|us\$|\$)?\s*(?P<number>[0-9][0-9,]*(?:\.[0-9]+)?|\.[0-9]+)\s*"
    r"(?P<unit>k|thousand|m|mm|mn|mil|million|b|bn|billion)?\s*(?:usd|dollars)?$",
    re.IGNORECASE,
)
_UNITS = {"k": 3, "thousand": 3, "m": 6, "mm": 6, "mn": 6, "mil": 6, "million": 6, "b": 9, "bn": 9, "billion": 9}
# Longer text is no amount anyone typed; it is not read (nor quoted back).
_SHORTHAND_MAX = 30


def _plain(amount: Decimal) -> str:
    """18500000, or 18500000.5: the JSON number to send."""
    text = format(amount.quantize(Decimal("0.01")), "f")
    return text.removesuffix(".00")


def money_from_text(text: str) -> Decimal | None:
    """The amount that text such as "18.5M", "$18,500,000" or "2.5 million" stands for, or None."""
    if len(text) > _SHORTHAND_MAX:
        return None
    match = _SHORTHAND.match(text.strip())
    if match is None:
        return None
    try:
        amount = Decimal(match["number"].replace(",", ""))
    except InvalidOperation:
        return None
    if match["unit"]:
        amount = amount.scaleb(_UNITS[match["unit"].lower()])
    return amount if 0 < amount <= MONEY_MAX else None


def money_text_message(text: Any, *, not_a_string: bool = False) -> str:
    """The message for money sent as text: say it is a number of US dollars, and the number meant
    when the text reads as an amount ("18.5M" -> send 18500000)."""
    message = "must be " + MONEY_EXAMPLE + (", not a string" if not_a_string else "")
    amount = money_from_text(text) if isinstance(text, str) else None
    if amount is not None:
        message += f'; send {_plain(amount)} for "{text.strip()}"'
    return message


# --- loan amounts --------------------------------------------------------------------------------
# How tool descriptions and the OpenAPI description state the rule.
LOAN_AMOUNT_RULE = (f"at least {LOAN_AMOUNT_MIN} (no commercial real estate loan is smaller; a smaller amount is "
                    "refused with the amount it likely means, e.g. 18.5 -> did you mean 18500000?)")


def likely_loan_amounts(amount: Decimal) -> list[Decimal]:
    """What a too-small loan amount was probably meant to be: millions for an amount below 1,000
    (18.5 -> 18.5 million), thousands from 100 up (250 -> 250 thousand, 18500 -> 18.5 million)."""
    candidates = []
    if amount < 1000:
        candidates.append(amount.scaleb(6))
    if amount >= 100:
        candidates.append(amount.scaleb(3))
    return [c for c in candidates if LOAN_AMOUNT_MIN <= c <= MONEY_MAX]


def _spoken(amount: Decimal) -> str:
    for exponent, word in ((9, "billion"), (6, "million"), (3, "thousand")):
        if amount >= Decimal(10) ** exponent:
            number = format((amount.scaleb(-exponent)).normalize(), "f")
            return f"${number} {word}"
    return f"${_plain(amount)}"


def loan_amount_too_small_message(amount: Decimal) -> str:
    """The message for a loan amount above 0 and below LOAN_AMOUNT_MIN, suggesting the likely unit."""
    message = (f"must be at least {LOAN_AMOUNT_MIN} US dollars (no commercial real estate loan is smaller; "
               "send whole dollars, not thousands or millions)")
    guesses = likely_loan_amounts(amount)
    if guesses:
        message += "; did you mean " + " or ".join(f"{_plain(g)} ({_spoken(g)})" for g in guesses) + "?"
    return message


# --- percents ------------------------------------------------------------------------------------
def percent_fraction_message(value: Decimal, *, floor: Decimal, maximum: Decimal | int, places: int = 3) -> str | None:
    """The message for a percent field's value above 0 and below `floor` (a fraction such as 0.0725
    sent for 7.25 %), naming value * 100 (to the field's `places`) when that is a value the field
    takes, at least `floor` and at most `maximum`; None for any other value (the field's own bounds
    judge it)."""
    if not 0 < value < floor:
        return None
    message = f"must be a percent, not a fraction: 0, or {_number(floor)} to {_number(Decimal(maximum))}"
    meant = value.scaleb(2).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if floor <= meant <= maximum:
        message += f"; did you mean {_number(meant)}?"
    return message


def sentence(message: str) -> str:
    """An API message ("must be a percent, …; did you mean 7.25?") as a form shows it beside its
    field: capitalised, ending in a full stop unless it asks a question."""
    return message[0].upper() + message[1:] + ("" if message.endswith(("?", ".")) else ".")


# --- whole numbers -------------------------------------------------------------------------------
# What the API, the tools and the forms say of a count sent with decimals (a spread of 2.85 bps, a
# term of 10.5 months).
WHOLE_NUMBER_MESSAGE = "must be a whole number"


def _number(value: Decimal) -> str:
    """7.25, 30, 0.1: the JSON number to send, without trailing zeros or an exponent."""
    return format(value.normalize(), "f")


# --- basis points --------------------------------------------------------------------------------
def bps_from_percent(value: Any, *, maximum: int) -> int | None:
    """The basis points a spread sent with decimals was likely meant as: a percent (2.85 -> 285 bps),
    when value x 100 is a whole number of basis points from 1 to `maximum`; None otherwise (2.855 or
    285.5 read as no percent anyone writes, and are only told to be whole)."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal | str):
        return None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    if not number.is_finite() or number == number.to_integral_value():
        return None
    meant = number.scaleb(2)
    if meant != meant.to_integral_value() or not 1 <= meant <= maximum:
        return None
    return int(meant)


def bps_message(value: Any, *, maximum: int) -> str:
    """The message for a spread in basis points that is not a whole number: with the basis points meant
    when it reads as a percent ("2.85" -> "did you mean 285 (2.85 % over the index)?")."""
    meant = bps_from_percent(value, maximum=maximum)
    if meant is None:
        return WHOLE_NUMBER_MESSAGE
    return (f"{WHOLE_NUMBER_MESSAGE} of basis points (a percent times 100); did you mean {meant} "
            f"({_number(Decimal(meant).scaleb(-2))} % over the index)?")


# --- dates ---------------------------------------------------------------------------------------
# Dates are ISO (YYYY-MM-DD) everywhere; one written another common way is refused with the date read
# from it, so the agent resends it without guessing. Month names are English; "2/26/2027" is read as
# month/day (26 is no month), "26.02.2027" as day.month; "3/4/2027" could be either and names both.
_MONTHS = {name: number for number, names in enumerate((
    ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
    ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
    ("dec", "december"),
), start=1) for name in names}
_MONTH = r"(?P<month>[a-z]+)\.?"
_DAY = r"(?P<day>[0-9]{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>[0-9]{4})"
_WRITTEN_DATES = (
    re.compile(rf"^(?:[a-z]+,?\s+)?{_MONTH}\s+{_DAY},?\s+{_YEAR}$"),    # Feb 26, 2027 / Friday, February 26th 2027
    re.compile(rf"^(?:[a-z]+,?\s+)?{_DAY}\s+{_MONTH},?\s+{_YEAR}$"),    # 26 Feb 2027
    re.compile(rf"^{_YEAR}[/.](?P<month>[0-9]{{1,2}})[/.](?P<day>[0-9]{{1,2}})$"),  # 2027/02/26
    re.compile(r"^(?P<day>[0-9]{1,2})\.(?P<month>[0-9]{1,2})\.(?P<year>[0-9]{4})$"),  # 26.02.2027
)
_SLASHED = re.compile(r"^(?P<first>[0-9]{1,2})[/-](?P<second>[0-9]{1,2})[/-](?P<year>[0-9]{4})$")  # 2/26/2027
_DATE_TEXT_MAX = 40


def _day_of(year: str, month: str | int, day: str) -> dt.date | None:
    number = month if isinstance(month, int) else (int(month) if month.isdigit() else _MONTHS.get(month))
    if number is None:
        return None
    try:
        return dt.date(int(year), number, int(day))
    except ValueError:
        return None


def dates_from_text(text: Any) -> list[dt.date]:
    """The dates that text written another common way stands for: one ("Feb 26, 2027", "26 Feb 2027",
    "2/26/2027"), two ("3/4/2027": March 4 or April 3) or none."""
    if not isinstance(text, str) or len(text) > _DATE_TEXT_MAX:
        return []
    cleaned = " ".join(text.strip().lower().split())
    for pattern in _WRITTEN_DATES:
        match = pattern.match(cleaned)
        if match:
            day = _day_of(match["year"], match["month"], match["day"])
            return [day] if day else []
    match = _SLASHED.match(cleaned)
    if match is None:
        return []
    first, second, year = match["first"], match["second"], match["year"]
    found = [d for d in (_day_of(year, first, second), _day_of(year, second, first)) if d is not None]
    return sorted(set(found))


def date_message(text: Any, message: str) -> str:
    """`message` (the field's "must be a date in YYYY-MM-DD format"), with the ISO date meant when the
    text is a date written another common way."""
    found = dates_from_text(text)
    if not found:
        return message
    return message + "; did you mean " + " or ".join(d.isoformat() for d in found) + "?"
