"""Every bound the API enforces, in one place.

Serializers, models and MCP tool signatures all read these, so a tool's input schema never
promises what the API refuses (and never refuses what the API accepts).
"""

from __future__ import annotations

from decimal import Decimal
from types import MappingProxyType

# Ids are PostgreSQL bigints; a larger number can name no row and must never reach a query.
MAX_ID = 2**63 - 1

# Money: DecimalField(max_digits=14, decimal_places=2) -> below 1,000,000,000,000 US dollars.
MONEY_MAX_DIGITS = 14
MONEY_DECIMAL_PLACES = 2
MONEY_MAX = Decimal("999999999999.99")
MONEY_MIN_POSITIVE = Decimal("0.01")
# Digits and decimal places of a decimal column, as DecimalField keyword arguments (models, serializers
# and admin forms alike): `models.DecimalField(**limits.MONEY_COLUMN, null=True)`. Read-only.
MONEY_COLUMN = MappingProxyType({"max_digits": MONEY_MAX_DIGITS, "decimal_places": MONEY_DECIMAL_PLACES})
# The smallest loan a deal may ask for. No commercial real estate loan is below $100,000, so a
# smaller amount is a unit slip (18.5 meant as $18.5 million, 18500 as $18.5 million in thousands):
# it is refused with the amount it likely means (lev.vocabulary), instead of ranking lenders for
# an $18.50 loan. Loan amount filters (list_deals' min/max) are not bound by it.
LOAN_AMOUNT_MIN = Decimal("100000")

# Text.
DEAL_TITLE_MAX = 200
DEAL_DESCRIPTION_MAX = 5000
PROPERTY_NAME_MAX = 200
PROPERTY_ADDRESS_MAX = 255
PROPERTY_CITY_MAX = 100
SEARCH_TEXT_MAX = 200
ZIP_MAX = 10  # 12345-6789
# ASCII digits only: `\d` also matches other scripts' digits in Python and in pydantic's regex engine.
ZIP_PATTERN = r"^[0-9]{5}(-[0-9]{4})?$"

# Control characters: PostgreSQL refuses NUL in text, and the other C0 controls (tab, newline and
# carriage return aside) are never meant in a title or an address. Both the API's text fields and the
# tools' text arguments refuse them. The patterns are written for JSON Schema (ECMA-262), Python `re`
# and pydantic's regex engine (Rust `regex`) alike: only `\xHH` / `\uHHHH` escapes, `\v` and `\f` (U+000B,
# U+000C: every schema carries this class, so its bytes count; `\0` and `\b` would be shorter still but
# pydantic's engine refuses them) and character classes.
CONTROL_CHARACTERS = r"\x00-\x08\v\f\x0e-\x1f"
TEXT_PATTERN = rf"^[^{CONTROL_CHARACTERS}]*$"
# A required text must hold something besides whitespace, because the API strips it and then refuses a
# blank value. The class lists what Python's str.strip() removes (so the schema and the API agree).
WHITESPACE = r"\x09-\x0d\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# The middle class refuses whitespace and control characters alike; \x00-\x20 is the two together
# below U+0021, written once (every tool schema carries this pattern, so its length is context an agent
# pays for; tests/mcp_tools/test_catalogue_budget.py checks it refuses exactly what the long form did).
NON_BLANK_TEXT_PATTERN = (rf"^[^{CONTROL_CHARACTERS}]*"
                          r"[^\x00-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
                          rf"[^{CONTROL_CHARACTERS}]*$")
# A name that goes into an email header (a contact's): one line. CR and LF (and the controls) only at its
# ends, which the API trims away; inside it, a line break would start a header of its own. Required, it
# also holds something besides whitespace.
_ONE_LINE = r"[^\x00-\x08\n-\x1f]"
ONE_LINE_TEXT_PATTERN = rf"^[{WHITESPACE}]*{_ONE_LINE}*[{WHITESPACE}]*$"
NON_BLANK_ONE_LINE_TEXT_PATTERN = (rf"^[{WHITESPACE}]*{_ONE_LINE}*"
                                   r"[^\x00-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
                                   rf"{_ONE_LINE}*[{WHITESPACE}]*$")

# Property figures.
UNITS_MAX = 1_000_000
SQUARE_FOOTAGE_MAX = 100_000_000
YEAR_BUILT_MIN = 1700
YEAR_BUILT_MAX = 2100

# Financials.
INTEREST_RATE_MAX = 30  # percent per year
AMORTIZATION_YEARS_MIN = 1
AMORTIZATION_YEARS_MAX = 50
AMORTIZATION_YEARS_DEFAULT = 30  # a deal's amortization when none is given
INTEREST_ONLY_MONTHS_MAX = 600  # the interest-only period of a deal's loan or a quote (50 years, a term's bound)

# Percent fields refuse a value sent as a fraction (0.0725 meant as 7.25 %): a value above 0 and
# below the field's floor is refused with value * 100 as the value probably meant (lev.vocabulary.
# percent_fraction_message). 0 stays allowed (no fee; a 0 % rate). The floors are the smallest figures
# no real loan has: a rate or a max LTV below 1 %, a fee below 0.1 % (fees of 0.25-1 % are common, so
# their floor is lower: 0.01 meant as 1 % is still caught). A market rate (lenders.rates) is checked
# against the same floor where a file is imported (an index such as SOFR stood below 1 % in 2020-21:
# such a rate is set in the admin, which does not refuse it).
RATE_PERCENT_FLOOR = Decimal(1)  # a deal's interest_rate, a quote's fixed_rate, an imported market rate
LTV_PERCENT_FLOOR = Decimal(1)  # a quote's max_ltv
FEE_PERCENT_FLOOR = Decimal("0.1")  # a quote's origination and exit fees
# A lender program's minimum debt yield (NOI / loan, percent): 6-12 % is usual; a debt yield below 1 % is
# a fraction (0.08 meant as 8 %), above 50 % no lender asks for.
DEBT_YIELD_PERCENT_FLOOR = Decimal(1)
DEBT_YIELD_PERCENT_MAX = 50

# Lists and pages.
PAGE_SIZE_DEFAULT = 20
PAGE_SIZE_MAX = 100
# No list has ten million pages; the bound keeps `(page - 1) * page_size` within a 32-bit rank column.
PAGE_NUMBER_MAX = 10_000_000
PROPERTIES_PER_CREATE_MAX = 50
# Deal and lender lists page by key (lev.pagination): a cursor carries the last row's sort value, at
# most a 200-character title (800 bytes of UTF-8), signed; 2,000 characters always hold one.
LIST_CURSOR_MAX = 2000
# A list's count stops here: counting every deal of a 100k-deal account on every page cost more
# than the page itself. Past it the count says "more than this" (count_capped / total_capped).
LIST_COUNT_MAX = 1000

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

# OAuth and bearer credentials (lev.accounts.scopes, lev/oauth/). A bearer credential longer than this is no key or
# token this site issued (keys are 50 characters, access tokens 30-40): refused before any lookup.
BEARER_CREDENTIAL_MAX = 512
# Dynamic Client Registration (RFC 7591) and Client ID Metadata Documents: what one client may declare.
OAUTH_REGISTRATION_BODY_MAX_BYTES = 16 * 1024
OAUTH_REDIRECT_URIS_MAX = 10
OAUTH_REDIRECT_URI_MAX = 2000
OAUTH_CLIENT_NAME_MAX = 100
# The longest client_id a request may carry (a Client ID Metadata Document URL; the column holds 255).
OAUTH_CLIENT_ID_MAX = 255

# Admin pages: ranked lenders per page of a search's page; the top matches on a deal's page and in
# every score chart; recent searches listed on a deal's page; and deals one "Find lenders" action
# may start searches for (each may rank in-process where jobs run in-process).
ADMIN_MATCHES_PER_PAGE = 50
ADMIN_TOP_MATCHES = 10
ADMIN_DEAL_RECENT_SEARCHES = 5
ADMIN_DEAL_PLACEMENTS = 25  # placements listed on the deal page (the rest: the placement list, filtered)
ADMIN_DEAL_QUOTES = 10  # quotes compared on the deal page, best first (the rest: the term sheet list, filtered)
ADMIN_WINNER_OTHERS_SHOWN = 20  # other open placements named on the "choose the winner" confirmation
ADMIN_FIND_LENDERS_MAX_DEALS = 20
# Sponsor states listed before "+N more" where a program's coverage is shown.
COVERAGE_STATES_SHOWN = 8
# Asset types a lender list row names before "+N more".
LENDER_LIST_ASSET_TYPES_SHOWN = 2
# A lender's profile page: its most active markets, the latest placements and the contacts it names.
LENDER_PROFILE_MARKETS_SHOWN = 5
LENDER_PROFILE_PLACEMENTS_SHOWN = 5
LENDER_PROFILE_CONTACTS_SHOWN = 10

# Placements and term sheets.
PLACEMENTS_PER_CREATE_MAX = 50  # lenders one create_placements call may place
PLACEMENT_TOP_N_DEFAULT = 5  # the top N of a search placed when no lender ids are given
PLACEMENT_NOTES_MAX = 2000
CONTACT_NAME_MAX = 200
EMAIL_MAX = 254
EMAIL_SUBJECT_MAX = 255
EMAIL_BODY_MAX = 20_000
DOCUMENT_NAME_MAX = 200
DOCUMENT_FILE_NAME_MAX = 200
# Outreach (deals.outreach): the placements one send emails, the documents one package shares, how long a
# package link may live, and the longest package token a URL is looked up with.
OUTREACH_PLACEMENTS_MAX = 200
OUTREACH_DOCUMENTS_MAX = 50
PACKAGE_EXPIRES_DAYS_MAX = 365
PACKAGE_TOKEN_MAX = 64
# A document's upload (deals.documents.api) may carry this much besides its file (the form's boundaries,
# headers and the kind, name and document_id fields) within LEV_DOCUMENT_UPLOAD_MAX_BYTES.
DOCUMENT_FORM_OVERHEAD_BYTES = 64 * 1024
# The same pattern in the API and the tools' schemas, so both accept exactly the same addresses
# (Django's EmailValidator accepts and refuses addresses no JSON Schema pattern can mirror).
EMAIL_PATTERN = r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$"
TERM_SHEET_NOTES_MAX = 2000
PREPAYMENT_TEXT_MAX = 500
# A quoted rate or base rate, percent per year, kept to 3 decimals (6.125 = 6.125 %).
RATE_PERCENT_MAX = INTEREST_RATE_MAX
RATE_DECIMAL_PLACES = 3
# The columns of rates, percent per year to 3 decimals: a deal's interest rate (up to 99.999), a
# quote's fixed rate and a base rate (up to 999.999).
INTEREST_RATE_COLUMN = MappingProxyType({"max_digits": 5, "decimal_places": RATE_DECIMAL_PLACES})
RATE_COLUMN = MappingProxyType({"max_digits": 6, "decimal_places": RATE_DECIMAL_PLACES})
SPREAD_BPS_MAX = 3000  # basis points over the index (3000 = 30 %)
TERM_MONTHS_MAX = 600  # 50 years
AMORTIZATION_MONTHS_MAX = 600
LTV_PERCENT_MAX = 100
DSCR_INPUT_MAX = 10
FEE_PERCENT_MAX = 10  # origination / exit fee, percent of the loan
# The columns that hold them (a lender program's max LTV and min DSCR too).
LTV_PERCENT_COLUMN = MappingProxyType({"max_digits": 5, "decimal_places": 2})  # up to 999.99
DSCR_INPUT_COLUMN = MappingProxyType({"max_digits": 4, "decimal_places": 2})  # up to 99.99
FEE_PERCENT_COLUMN = MappingProxyType({"max_digits": 6, "decimal_places": 3})  # up to 999.999
# Market rates (lenders.rates): a quote compared with an index's rate dated more than this many days
# before the quote's date says which date's rate was used; the days of history get_market_rates reads
# at most (one page of business days); the rows one import may hold; a rate's source text.
MARKET_RATE_STALE_DAYS = 7
MARKET_RATE_HISTORY_DAYS_MAX = 92
MARKET_RATE_IMPORT_ROWS_MAX = 100_000
MARKET_RATE_SOURCE_MAX = 100
# Live quotes (not removed) one deal may hold: bounds the comparison's work and size.
TERM_SHEETS_PER_DEAL_MAX = 200
# The pipeline (deals/pipeline): an account's stages, their names, and why a deal moved.
STAGES_PER_ACCOUNT_MAX = 30
STAGE_NAME_MAX = 60
STAGE_REASON_MAX = 500

# A lender and a program of the directory or of an account's own (lenders.models; what the REST input, the
# admin and the MCP tools accept of a team's own).
LENDER_NAME_MAX = 200
LENDER_WEBSITE_MAX = 200
LENDER_CITY_MAX = 100
LENDER_ABOUT_MAX = 5000
PROGRAM_TITLE_MAX = 200
# A program's min DSCR is above 0 (lenders.program_terms): the least its column (2 decimals) holds.
PROGRAM_MIN_DSCR_LEAST = Decimal("0.01")

# Companies and contacts (deals.companies).
COMPANY_NAME_MAX = 200
COMPANY_WEBSITE_MAX = 200
COMPANY_LOCATION_MAX = 200
COMPANY_NOTES_MAX = 5000
CONTACT_TITLE_MAX = 100
CONTACT_NOTES_MAX = 2000
CONTACT_PHONE_MAX = 40
# Notes on deals, placements, companies and contacts (deals.notes): a note's body; a timeline page.
NOTE_BODY_MAX = 10000
# The deal page's timeline panel shows the latest entries, a screenful (issue 39: 50 made the demo deal's
# page 1,000 px taller); the whole timeline is its own page, and the API pages through all of them.
ADMIN_TIMELINE_ENTRIES = 8
# http(s) and a host, nothing else (no javascript: or data: links in the admin); the same in the API and
# the tools' schemas. Path, query and fragment are RFC 3986's characters (percent-encode the rest: a
# backtick, a space, a second #), so what is kept is a URI as the answers' `format: uri` says. Python,
# ECMA-262 and pydantic's regex engine read this pattern alike.
_URI_CHAR = r"[A-Za-z0-9._~!$&'()*+,;=:@/-]|%[0-9A-Fa-f]{2}"
WEBSITE_PATTERN = (rf"^https?://[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{{1,5}})?(/({_URI_CHAR})*)?"
                   rf"(\?({_URI_CHAR}|\?)*)?(#({_URI_CHAR}|\?)*)?$")
# Digits with the usual separators, an optional leading + and an optional extension: "+1 (212) 555-0100 x12".
PHONE_PATTERN = r"^\+?[0-9(][0-9 ().-]{5,30}[0-9]( ?(x|ext\.?) ?[0-9]{1,6})?$"
# The deal team's home page (deals/workspace): a placement sent this many days ago with no answer yet is
# waiting on its lender; a live quote expiring within this many days is about to expire; quotes received
# within this many days are this week's; the rows each list of the page shows (the rest are counted).
HOME_WAITING_DAYS = 5
HOME_EXPIRING_DAYS = 14
HOME_QUOTES_DAYS = 7
HOME_PANEL_ROWS = 8

# History files (deals/history: import_history, export_history; docs/import-export.md). A file is
# refused before it is read when larger than the byte bound; an XLSX is refused before it is inflated
# when its members declare more than the uncompressed bound or inflate a member more than the ratio
# (a zip bomb); a cell over the character bound and a header over the column bound are refused with
# their line and column. 100,000 placements with long titles fit well inside each.
HISTORY_FILE_MAX_BYTES = 50 * 1024 * 1024
HISTORY_XLSX_UNCOMPRESSED_MAX_BYTES = 250 * 1024 * 1024
HISTORY_XLSX_RATIO_MAX = 100
HISTORY_CELL_MAX_CHARS = 10_000
HISTORY_COLUMNS_MAX = 100
HISTORY_ROWS_MAX = 250_000
DEAL_EXTERNAL_ID_MAX = 100
DECLINE_REASON_MAX = 500


# Per-user rate limits (lev.throttling; settings LEV_RATE_LIMIT_READS / LEV_RATE_LIMIT_WRITES override them).
# Writes are sized from a measured agent run (tests/mcp_tools/test_write_limits.py; README, "Per-user rate limits"):
# setting up one real deal through MCP (sponsor and borrower with their people, a $24M deal of three
# properties, its figures, a contact at each of six lenders, a stage move, a search, placements to the top
# five, updates, three quotes, the winner, notes) makes 33 writes; all in one minute, that is the
# peak. The limit leaves room for three such deals in a minute (30/min throttled the one: issue 39), and a
# runaway loop is still refused within a minute.
RATE_LIMIT_READS_DEFAULT = "200/min"
RATE_LIMIT_WRITES_DEFAULT = "120/min"


# Figures read from a rent roll or T-12 (deals/documents/figures; docs/documents.md): the file read whole
# (a 5,000-unit Yardi export is about 1 MB), its workbook unpacked at most this much (checked from the
# ZIP's declared sizes before anything is inflated), and the rows and columns read.
FIGURES_FILE_MAX_BYTES = 25 * 1024 * 1024
FIGURES_XLSX_UNCOMPRESSED_MAX_BYTES = 200 * 1024 * 1024
FIGURES_XLSX_RATIO_MAX = 100
FIGURES_ROWS_MAX = 60_000
FIGURES_COLUMNS_MAX = 60
FIGURES_CELL_MAX_CHARS = 1_000
FIGURES_HEADER_ROWS = 40  # how far down a header is looked for
FIGURES_PROBLEMS_MAX = 200  # problems listed (then "and n more")
# A document's versions its page, the REST detail and get_deal_document list, newest first (versions_count
# says how many there are; an older one still downloads with ?version=N): the answer stays bounded.
DOCUMENT_VERSIONS_SHOWN = 20
