"""The words of outreach emails: the account's teaser and follow-up (OutreachTemplate), Lev's own when the
account saved none, and the placeholders filled from the deal's figures.

Safe substitution only. A template is the account's own text, so it is never given to Django's template
engine (which would let it read attributes, call filters, include files): a placeholder is `$name`,
`${name}` or `{{ name }}` from the fixed list `PLACEHOLDERS`, replaced by plain text, and nothing else in
the text means anything. An unknown placeholder is refused when the template is saved (`check_template`)
with the names it may use; a subject with a line break (a header injection) is refused too, and each
value put in a subject or a name is stripped of line breaks again when an email is composed.
"""

from __future__ import annotations

import re
from decimal import Decimal

from lev.errors import ValidationFailed
from lev.formatting import money, multiple, percent

# Every placeholder a template may use, with what it becomes (docs/outreach.md lists them).
PLACEHOLDERS: dict[str, str] = {
    "deal_title": "the deal's title",
    "loan_amount": "the loan amount asked ($18,500,000)",
    "loan_type": "the loan type (permanent, light bridge, ...)",
    "transaction_type": "acquisition, refinance, ... (blank while to be decided)",
    "property_type": "the properties' asset types (Multifamily)",
    "location": "the properties' cities and states (Austin, TX)",
    "units": "the properties' units, when known",
    "noi": "the in-place NOI, when known",
    "ltv": "the loan to value, when known",
    "dscr": "the debt service coverage lenders underwrite, when known",
    "lender_name": "the lender's name",
    "contact_name": "the lender contact's name (or \"there\")",
    "package_link": "the lender's own link to the deal package",
    "expires_on": "the day the link stops working",
    "sender_name": "who sends it (the user's name)",
    "account_name": "the account's name",
}

# $name, ${name}, {{ name }} (spaces optional); `$$` is a literal dollar sign.
_TOKEN = re.compile(r"\$\$|\$\{(?P<braced>[^}]*)\}|\$(?P<named>[A-Za-z_][A-Za-z0-9_]*)"
                    r"|\{\{\s*(?P<moustache>[^}]*?)\s*\}\}")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]")

DEFAULTS: dict[str, tuple[str, str]] = {
    "teaser": (
        "$deal_title: $loan_amount $loan_type loan request",
        "Hello $contact_name,\n\n"
        "We are arranging a $loan_amount $loan_type loan for $deal_title ($property_type, $location) and "
        "think it fits $lender_name.\n\n"
        "Key figures: NOI $noi, LTV $ltv, DSCR $dscr.\n\n"
        "The deal package, with the documents we are sharing with you, is here (your own link, until "
        "$expires_on):\n$package_link\n\n"
        "Reply to this email with questions or terms.\n\n"
        "$sender_name\n$account_name\n",
    ),
    "follow_up": (
        "Following up: $deal_title",
        "Hello $contact_name,\n\n"
        "Following up on $deal_title ($loan_amount $loan_type). Would $lender_name like to quote? "
        "The package is still at your link:\n$package_link\n\n"
        "A short reply either way helps us.\n\n"
        "$sender_name\n$account_name\n",
    ),
}


def placeholders_in(text: str) -> list[str]:
    """The placeholder names `text` uses, in order (unknown ones included)."""
    names = []
    for match in _TOKEN.finditer(text):
        name = match.group("braced") or match.group("named") or match.group("moustache")
        if name is not None:
            names.append(name.strip())
    return names


# The refusal of a placeholder not in PLACEHOLDERS ("body uses unknown placeholders: $who; use only: …").
UNKNOWN_PLACEHOLDERS = "uses unknown placeholders"


def check_template(*, subject: str, body: str) -> None:
    """Refuse (VALIDATION_ERROR) a subject with a line break or any placeholder not in PLACEHOLDERS."""
    fields: dict[str, list[str]] = {}
    if _LINE_BREAKS.search(subject):
        fields["subject"] = ["must be one line (no line breaks)"]
    for field_name, text in (("subject", subject), ("body", body)):
        unknown = sorted({name for name in placeholders_in(text) if name not in PLACEHOLDERS})
        if unknown:
            shown = ", ".join(f"${name}" if name else "(an empty placeholder)" for name in unknown)
            fields.setdefault(field_name, []).append(
                f"{UNKNOWN_PLACEHOLDERS}: {shown}; use only: {', '.join('$' + n for n in PLACEHOLDERS)}")
    if fields:
        first = next(iter(fields.items()))
        raise ValidationFailed(fields, message=f"Validation failed: {first[0]} {first[1][0]}")


def one_line(text: str) -> str:
    """`text` with every line break replaced by a space (for a header: a subject, a name)."""
    return " ".join(_LINE_BREAKS.sub(" ", text or "").split())


def fill(text: str, values: dict[str, str]) -> str:
    """`text` with each known placeholder replaced by its value (plain text, never read as a template)."""
    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = (match.group("braced") or match.group("named") or match.group("moustache") or "").strip()
        return values.get(name, match.group(0))

    return _TOKEN.sub(replace, text)


UNKNOWN = "not yet known"


def _label(value: str) -> str:
    return (value or "").replace("_", " ").capitalize()


def deal_figures(*, deal, financials, properties) -> dict[str, str]:
    """The deal's placeholders from its records: the deal, its financials (or None) and its properties
    (those not known read "not yet known")."""
    kinds = list(dict.fromkeys(_label(p.asset_type) for p in properties if p.asset_type))
    places = list(dict.fromkeys(", ".join(x for x in (p.city, p.state) if x) for p in properties
                                if p.city or p.state))
    units = sum(p.units or 0 for p in properties)
    values = {
        "deal_title": one_line(deal.title),
        "loan_amount": money(deal.loan_amount) if deal.loan_amount else UNKNOWN,
        "loan_type": _label(deal.loan_type).lower() if deal.loan_type and deal.loan_type != "tbd" else "",
        "transaction_type": _label(deal.transaction_type) if deal.transaction_type != "tbd" else "",
        "property_type": " and ".join(kinds) or "commercial",
        "location": "; ".join(places) or UNKNOWN,
        "units": f"{units:,}" if units else UNKNOWN,
        "noi": UNKNOWN, "ltv": UNKNOWN, "dscr": UNKNOWN,
    }
    if financials is not None:
        financials.deal = deal
        noi, ltv, dscr = financials.noi, financials.ltv, financials.dscr
        values["noi"] = money(noi) if noi is not None else UNKNOWN
        values["ltv"] = percent(ltv) if isinstance(ltv, Decimal) else UNKNOWN
        values["dscr"] = multiple(dscr) if isinstance(dscr, Decimal) else UNKNOWN
    return values
