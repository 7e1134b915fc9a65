"""The deal team's admin: deals with their properties and financials (money as money, LTV, DSCR,
NOI), their lender searches and ranked lenders, and "Find lenders" — through the same services the
API uses, so the admin keeps every rule the API keeps (versions, archived deals, readiness).

Its rooms: `deal` (the deal list, its form and saving through the services), `deal_page` (the deal
page's summary and its own views: find lenders, place, choose the winner, the whole timeline), `forms`,
`inlines`, `filters` (the list's) and `properties` (the property list). Importing this package registers
them all, and the other rooms' admins of the deals app (companies, notes, placements, searches)."""

# The other rooms' admins first, then this room's: the order the admin's registry (and its URLs) had
# when this package was one module.
# isort: off
from deals.companies import admin as companies_admin  # noqa: F401  (registers companies, contacts; lender contacts)
from deals.notes import admin as notes_admin  # noqa: F401  (registers notes; their inlines on the company and contact pages)
from deals.placements import admin as placements_admin  # noqa: F401  (registers placements, term sheets)
from deals.outreach import admin as outreach_admin  # noqa: F401  (registers the outbox)
from deals.searches import admin as searches_admin  # noqa: F401  (registers lender searches)
from deals.outreach import inbound_admin  # noqa: F401  (registers lenders' replies; the chasing page)
from deals.admin import deal, properties  # noqa: F401  (registers deals and their properties)
# isort: on
