"""Enumerations shared by deals and lenders. Values are lowercase slugs on the wire; the order of
each tuple is stable because lenders and their programs store bit masks built from it (`mask_of`
below; lenders.models.Lender/LenderProgram.refresh_masks)."""

from __future__ import annotations

LOAN_TYPES = ("construction", "heavy_bridge", "light_bridge", "permanent", "land", "predevelopment", "tbd")
# What a program offers: "tbd" is what a deal says before it knows its loan type; no program offers it.
PROGRAM_LOAN_TYPES = tuple(t for t in LOAN_TYPES if t != "tbd")
TRANSACTION_TYPES = ("tbd", "acquisition", "refinance", "new_construction")
BUSINESS_PLANS = ("stabilized", "value_add", "construction", "land")
ASSET_TYPES = (
    "multifamily", "office", "retail", "industrial", "hospitality", "self_storage", "mixed_use",
    "senior_housing", "student_housing", "manufactured_housing", "healthcare", "land",
)
LENDER_TYPES = ("bank", "credit_union", "life_company", "cmbs", "agency", "debt_fund", "private", "sba")
POSITIONS = ("senior", "mezzanine", "preferred_equity")
# What a company is to the account (deals.companies).
COMPANY_KINDS = ("sponsor", "borrower", "broker", "other")
# What a note records (deals.notes): a plain note, or a call, email or meeting with someone.
NOTE_KINDS = ("note", "call", "email", "meeting")
# The kinds of entry of a deal's timeline (deals.notes.timeline), a closed list: docs/notes.md.
TIMELINE_KINDS = (
    "stage_changed", "search_started", "search_finished", "placement_sent", "placement_status",
    "quote_received", "quote_removed", "winner_chosen", "note",
    # Outreach (deals.outreach): the teaser or follow-up emailed, an email refused, the lender's package
    # opened, a document downloaded, a reply received.
    "lender_emailed", "email_refused", "package_opened", "document_downloaded", "lender_replied",
)
# What a deal's document is (deals.documents); "other" for anything else.
DOCUMENT_KINDS = (
    "offering_memorandum", "rent_roll", "t12", "photo", "term_sheet", "appraisal", "financial_statement",
    "other",
)
# How a document's version came: uploaded by the team, or attached to a lender's reply.
DOCUMENT_SOURCES = ("upload", "email")
# What an outreach email is (deals.outreach): the deal's teaser, or a follow-up to a silent lender.
OUTREACH_KINDS = ("teaser", "follow_up")
# What happened on a lender's side of the outreach (deals.outreach): the deal's timeline shows them.
OUTREACH_EVENT_KINDS = ("emailed", "opened", "downloaded", "replied", "refused")
RECOURSE_TYPES = ("full", "partial", "non_recourse")
CAPITAL_SOURCE_TYPES = ("balance_sheet", "securitized", "agency", "fund", "private")
US_STATES = (
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA",
    "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM",
    "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA",
    "WV", "WI", "WY", "PR",
)


def choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    """(value, label) pairs; codes such as states keep their case as the label."""
    return [(v, v if v.isupper() else v.replace("_", " ").title()) for v in values]


def mask_of(values: list[str] | tuple[str, ...] | None, universe: tuple[str, ...]) -> int:
    """Bit mask of `values` within `universe` (bit i = universe[i]); unknown values are ignored."""
    mask = 0
    for value in values or ():
        if value in universe:
            mask |= 1 << universe.index(value)
    return mask


# Term sheets (deals.placements.models). Placement statuses are the workflow's table
# (deals.placements.workflow), which also says how a placement moves between them.
QUOTE_TYPES = ("indicative", "soft_quote", "term_sheet", "commitment")
RATE_TYPES = ("fixed", "floating")
# Base rate indexes a floating quote is priced over; lenders.rates.MarketRate holds each one's dated rates.
RATE_INDEXES = ("sofr", "term_sofr_1m", "term_sofr_3m", "treasury_5y", "treasury_7y", "treasury_10y", "prime")
RATE_INDEX_NAMES = {
    "sofr": "SOFR", "term_sofr_1m": "1-month Term SOFR", "term_sofr_3m": "3-month Term SOFR",
    "treasury_5y": "5-year Treasury", "treasury_7y": "7-year Treasury", "treasury_10y": "10-year Treasury",
    "prime": "Prime",
}

# The pipeline (deals/pipeline): what a stage means for a deal in it. `open` deals are being worked;
# `won` (closed) and `dead` end a deal's run, so no automatic move takes a deal out of them.
STAGE_KINDS = ("open", "won", "dead")
# Where a deal is in its run, as the lists filter by it (deals.pipeline.models.deal_status_q says what
# each means): `active` is being worked — not archived, in an `open` stage; `closed` and `dead` are not
# archived, in a `won` or a `dead` stage; `archived` is kept for the record; `all` is every deal.
DEAL_STATUSES = ("active", "closed", "dead", "archived", "all")
# The default stages every account starts with, in order: (key, name, kind). The key is the stage's
# role, stable whatever an admin renames it to: the automatic moves find "in_market" and "closing" by it.
DEFAULT_STAGES = (
    ("intake", "Intake", "open"),
    ("underwriting", "Underwriting", "open"),
    ("in_market", "In market", "open"),
    ("term_sheets", "Term sheets", "open"),
    ("closing", "Closing", "open"),
    ("closed", "Closed", "won"),
    ("dead", "Dead", "dead"),
)
STAGE_KEYS = tuple(key for key, _, _ in DEFAULT_STAGES)

# How much a deal's summary says (deals/summaries): a few lines, each section's lead items, or the fullest.
SUMMARY_DETAILS = ("brief", "standard", "memo")
