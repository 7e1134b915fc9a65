"""A deal's summary for a credit committee, built from its records alone (a pure read).

`deal_summary(deal=…, detail=…)` returns plain data: `text` for the person, with bracketed references
("[3]"), and `sources`, one per reference: the record and field each figure came from, the value, and
the REST path that serves it (`field` is a dotted path into that answer, list positions as numbers:
`quotes.0.all_in_rate`). Every value is written by the serializer of the endpoint that serves it, so
a figure here equals what the API answers for that record and field — derived figures (LTV, DSCR,
debt yield, all-in rate) included: they are the deal's financials and the quote comparison as served,
never computed again here.

Deterministic: the same records give the same bytes. The one date that is not a record's is `today`
(the comparison's: quotes expire by it, and placements wait for an answer up to it); the summary
says it (`as_of`). Nothing says when the summary was written.

Three levels of detail (`DETAILS`): brief (a few lines: the loan, the property, the stage, the key
ratios, the best quote and the first next steps), standard (each section with its leading items) and
memo (the fullest: every financial figure, more lenders, the placements one by one, more quotes with
their terms). Each shows at most a fixed number of properties, lenders, placements and quotes and
says how many it left out, so every level stays within the MCP byte budget whatever the deal's size.

The next steps are rules a broker would agree with, checked in order (docs/summaries.md):
archived or dead or closed deals have none; then what the deal lacks (loan amount, property, NOI and
value, interest rate); the lender search (none, failed, running, stale); then placements and quotes
(place the top lenders, send the drafts, follow up on unanswered placements naming the contact,
compare and choose, expiring quotes, work the winner to closing).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils import timezone
from rest_framework import serializers

from deals.finance import INTEREST_ONLY
from deals.models import Deal, DealFinancials
from deals.placements.comparison import EXPIRES_SOON_DAYS
from deals.placements.serializers import QuoteComparisonSerializer
from deals.searches.models import LenderSearch
from deals.searches.ranking.criteria import missing_for_search
from deals.serializers import DealFinancialsSerializer, DealPropertySerializer, DealSerializer
from deals.summaries.selectors import FOLLOW_UP_DAYS, SummaryRecords, summary_records
from lev.enums import RATE_INDEX_NAMES, SUMMARY_DETAILS

DETAILS = SUMMARY_DETAILS
DEFAULT_DETAIL = "standard"
NAME_SHOWN = 60  # characters of a name the text shows
PLACEMENTS_READ_LEFT_OUT = "Placements and quotes: left out (this credential lacks the placements:read scope)."
LENDERS_READ_LEFT_OUT = "Lender search: left out (this credential lacks the lenders:read scope)."


@dataclass(frozen=True)
class Level:
    properties: int
    matches: int
    quotes: int
    placements: int
    follow_ups: int
    steps: int
    full_financials: bool
    quote_terms: bool


LEVELS = {
    "brief": Level(properties=1, matches=1, quotes=1, placements=0, follow_ups=1, steps=2,
                   full_financials=False, quote_terms=False),
    "standard": Level(properties=3, matches=3, quotes=3, placements=0, follow_ups=3, steps=6,
                      full_financials=False, quote_terms=False),
    "memo": Level(properties=5, matches=8, quotes=6, placements=10, follow_ups=5, steps=8,
                  full_financials=True, quote_terms=True),
}
_DATETIME = serializers.DateTimeField()
REF = re.compile(r"\[(\d+)\]")


@dataclass
class Summary:
    deal_id: int
    detail: str
    as_of: dt.date
    text: str
    next_steps: list[dict[str, str]]
    left_out: list[str]
    sources: list[dict[str, Any]]


# --- words --------------------------------------------------------------------------------------------
def _num(value: Decimal) -> str:
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def money(value: Decimal) -> str:
    return f"${value:,.0f}" if value == value.to_integral_value() else f"${value:,.2f}"


def percent(value: Decimal) -> str:
    return f"{_num(value)}%"


def times(value: Decimal) -> str:
    return f"{value:.2f}x"


def label(value: str) -> str:
    return value.replace("_", " ")


def name(text: str) -> str:
    return text if len(text) <= NAME_SHOWN else text[:NAME_SHOWN - 1] + "…"


def local_date(moment: dt.datetime) -> dt.date:
    return timezone.localtime(moment).date()


def plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


class Citations:
    """The sources of a summary: each (record, id, field) once, numbered in order of first use."""

    def __init__(self) -> None:
        self.sources: list[dict[str, Any]] = []
        self._refs: dict[tuple[str, str], int] = {}

    def cite(self, record: str, record_id: int, path: str, field: str, value: Any) -> str:
        key = (path, field)
        if key not in self._refs:
            self._refs[key] = len(self.sources) + 1
            self.sources.append({"ref": self._refs[key], "record": record, "id": record_id, "field": field,
                                 "value": value, "path": path})
        return f"[{self._refs[key]}]"

    def numbered(self, text: str, steps: list[dict[str, str]]) -> tuple[str, list[dict[str, str]],
                                                                     list[dict[str, Any]]]:
        """The text with its references renumbered 1, 2, … in reading order, the next steps (lines of
        that text) renumbered alike, and their sources in that order; a source the text does not cite
        (a next step not shown) is dropped."""
        order: dict[int, int] = {}
        for ref in REF.findall(text):
            order.setdefault(int(ref), len(order) + 1)

        def renumber(words: str) -> str:
            return REF.sub(lambda match: f"[{order[int(match.group(1))]}]", words)

        by_ref = {source["ref"]: source for source in self.sources}
        return (renumber(text), [{**step, "text": renumber(step["text"])} for step in steps],
                [{**by_ref[old], "ref": new} for old, new in order.items()])


# --- the summary --------------------------------------------------------------------------------------
def deal_summary(*, deal: Deal, detail: str = DEFAULT_DETAIL, placements_read: bool = True,
                 lenders_read: bool = True, today: dt.date | None = None) -> Summary:
    """The summary of the caller's `deal` (read with deals.selectors.deal_get, which joins its stage,
    owner, sponsor and borrower). `placements_read` False: the placements and quotes are left out;
    `lenders_read` False: the lender search is; the summary says so."""
    level = LEVELS[detail]
    today = today or timezone.localdate()
    records = summary_records(deal=deal, today=today, matches_shown=level.matches,
                              placements_shown=level.placements, follow_ups_shown=level.follow_ups,
                              placements_read=placements_read, lenders_read=lenders_read)
    return _Writer(records, level, detail, today).write()


class _Writer:
    def __init__(self, records: SummaryRecords, level: Level, detail: str, today: dt.date) -> None:
        self.r, self.level, self.detail, self.today = records, level, detail, today
        self.deal = records.deal
        self.c = Citations()
        self.deal_data = DealSerializer(self.deal).data
        self.deal_path = f"/deals/{self.deal.pk}/"
        self.fin_data = DealFinancialsSerializer(records.financials).data if records.financials else None
        self.comparison = records.comparison
        self.quote_data = ([QuoteComparisonSerializer(q).data for q in self.comparison.quotes]
                           if self.comparison else [])
        self.left_out: list[str] = []

    # citations of each record kind
    def _deal(self, field: str) -> str:
        value: Any = self.deal_data
        for part in field.split("."):
            value = value[part]
        return self.c.cite("deal", self.deal.pk, self.deal_path, field, value)

    def _fin(self, field: str) -> str:
        return self.c.cite("deal_financials", self.deal.pk, f"/deals/{self.deal.pk}/financials/", field,
                           self.fin_data[field])

    def _from(self, field: str) -> str:
        """ " (from rent roll.xlsx, version 2 [n])" when the figure of `field` was applied from a document."""
        source = self.r.figure_sources.get(field)
        if source is None:
            return ""
        cite = self.c.cite("deal_financials", self.deal.pk, f"/deals/{self.deal.pk}/financials/",
                           f"sources.{field}", source)
        return f" (from {name(source['file_name'])}, version {source['version']} {cite})"

    def _quote(self, index: int, field: str) -> str:
        return self.c.cite("term_sheet_comparison", self.deal.pk, f"/deals/{self.deal.pk}/term-sheets/comparison/",
                           f"quotes.{index}.{field}", self.quote_data[index][field])

    def _search(self, field: str, value: Any) -> str:
        search = self.r.search
        return self.c.cite("lender_search", search.pk, f"/lender-searches/{search.pk}/", field, value)

    def _count(self, status: str | None) -> str:
        path = f"/deals/{self.deal.pk}/placements/" + (f"?status={status}" if status else "")
        value = self.r.placement_counts.get(status, 0) if status else sum(self.r.placement_counts.values())
        return self.c.cite("placement_list", self.deal.pk, path, "count", value)

    # sections
    def write(self) -> Summary:
        lines = [self.headline(), *self.properties(), *self.financials(), self.stage(), self.parties(),
                 *self.search()]
        if self.r.placements_read:
            lines += [*self.placements(), *self.quotes()]
        else:
            lines.append(PLACEMENTS_READ_LEFT_OUT)
            self.left_out.append("placements and quotes: the credential lacks the placements:read scope")
        steps = NextSteps(self).steps()
        shown = steps[:self.level.steps]
        lines.append("Next steps:" if shown else "Next steps: none.")
        lines += [f"{n}. {step['text']}" for n, step in enumerate(shown, start=1)]
        if len(steps) > len(shown) and self.detail != "brief":
            lines.append(f"({plural(len(steps) - len(shown), 'more step')}: ask for detail=memo.)")
        # The steps are numbered as the text is: a step cites the sources the text lists for it.
        text, shown, sources = self.c.numbered("\n".join(line for line in lines if line), shown)
        return Summary(deal_id=self.deal.pk, detail=self.detail, as_of=self.today, text=text,
                       next_steps=shown, left_out=self.left_out, sources=sources)

    def headline(self) -> str:
        deal = self.deal
        parts = [f"{name(deal.title)} (deal {deal.pk})"]
        if deal.loan_amount:
            parts.append(f": {money(deal.loan_amount)} {self._deal('loan_amount')}")
        else:
            parts.append(": loan amount not set")
        parts.append(f", {label(deal.loan_type)} loan {self._deal('loan_type')}")
        if deal.transaction_type != "tbd":
            parts.append(f", {label(deal.transaction_type)}")
        if deal.business_plan:
            parts.append(f", {label(deal.business_plan)}")
        text = "".join(parts) + "."
        if deal.archived:
            text += f" Archived {self._deal('archived')}"
            if deal.archived_at:
                text += f" on {local_date(deal.archived_at).isoformat()} {self._deal('archived_at')}"
            text += "."
        if deal.estimated_close_date and self.detail != "brief":
            text += f" Estimated close {deal.estimated_close_date.isoformat()} {self._deal('estimated_close_date')}."
        return text

    def properties(self) -> list[str]:
        props = self.r.properties
        if not props:
            return ["Property: none yet."]
        lines = []
        for prop in props[:self.level.properties]:
            data, path = DealPropertySerializer(prop).data, f"/deals/{self.deal.pk}/properties/{prop.pk}/"

            def cite(field: str, data=data, path=path, prop=prop) -> str:
                return self.c.cite("deal_property", prop.pk, path, field, data[field])

            place = ", ".join(p for p in (name(prop.city), prop.state) if p)
            bits = [label(prop.asset_type) if prop.asset_type else "asset type not set"]
            if place:
                bits.append(place)
            if prop.units is not None:
                bits.append(f"{prop.units:,} units {cite('units')}" + (self._from("units") if len(props) == 1 else ""))
            if prop.square_footage is not None:
                bits.append(f"{prop.square_footage:,} sq ft {cite('square_footage')}")
            if prop.year_built is not None and self.level.full_financials:
                bits.append(f"built {prop.year_built} {cite('year_built')}")
            lines.append(f"Property: {name(prop.name)}: " + ", ".join(bits) + ".")
        if len(props) > len(lines) and self.detail == "brief":
            lines[-1] += f" (+{plural(len(props) - 1, 'more property', 'more properties')})"
        elif len(props) > len(lines):
            more = len(props) - len(lines)
            lines.append(f"…and {plural(more, 'more property', 'more properties')} "
                         f"({plural(len(props), 'property', 'properties')} in all; list_deal_properties).")
        return lines

    def financials(self) -> list[str]:
        fin: DealFinancials | None = self.r.financials
        if fin is None or all(getattr(fin, f) is None for f in ("purchase_price", "estimated_value", "in_place_noi",
                                                                "stabilized_noi")):
            return ["Financials: none yet (no value or NOI).", *self.operations()]
        data = self.fin_data
        figures = []
        if self.detail != "brief":
            for field, words in (("estimated_value", "estimated value"), ("purchase_price", "purchase price"),
                                 ("in_place_noi", "in-place NOI"), ("stabilized_noi", "stabilized NOI")):
                if data[field] is not None and (self.level.full_financials or field in (
                        "estimated_value", "in_place_noi") or not (data["estimated_value"] or data["in_place_noi"])):
                    figures.append(f"{words} {money(data[field])} {self._fin(field)}{self._from(field)}")
        ratios = []
        if data["ltv"] is not None:
            ratios.append(f"LTV {percent(data['ltv'])} {self._fin('ltv')}")
        if data["dscr"] is not None:
            basis = "interest-only" if data["dscr_basis"] == INTEREST_ONLY else "amortizing"
            text = (f"DSCR {times(data['dscr'])} {self._fin('dscr')} on the {basis} payment "
                    f"{self._fin('dscr_basis')} (what lenders underwrite for a {label(self.deal.loan_type)} loan)")
            other = "dscr_amortizing" if data["dscr_basis"] == INTEREST_ONLY else "dscr_interest_only"
            if data[other] is not None and self.detail != "brief":
                words = "amortizing" if other == "dscr_amortizing" else "interest-only"
                text += f"; {words} {times(data[other])} {self._fin(other)}"
            ratios.append(text)
        elif data["in_place_noi"] is not None or data["stabilized_noi"] is not None:
            ratios.append("DSCR unavailable (no interest rate)" if data["interest_rate"] is None
                          else "DSCR unavailable")
        if data["debt_yield"] is not None:
            ratios.append(f"debt yield {percent(data['debt_yield'])} {self._fin('debt_yield')}")
        lines = []
        if figures:
            lines.append("Financials: " + ", ".join(figures) + ".")
        lines += self.operations()
        if ratios:
            lines.append("Ratios: " + "; ".join(ratios) + ".")
        if self.level.full_financials:
            terms = []
            for field, words, shown in (("interest_rate", "interest rate", percent), ("existing_debt",
                                        "existing debt", money), ("cash_out", "cash out", money)):
                if data[field] is not None:
                    terms.append(f"{words} {shown(data[field])} {self._fin(field)}")
            terms.append(f"amortization {data['amortization_years']} years {self._fin('amortization_years')}")
            if data["interest_only_months"]:
                terms.append(f"interest-only {data['interest_only_months']} months "
                             f"{self._fin('interest_only_months')}")
            lines.append("Terms asked: " + ", ".join(terms) + ".")
        return lines

    def operations(self) -> list[str]:
        """The rent roll's and T-12's figures applied to the financials, each with its document."""
        data = self.fin_data
        if data is None or self.detail == "brief":
            return []
        bits = []
        for field, words, shown in (("occupancy", "occupancy", percent), ("in_place_rent", "in-place rent a year",
                                    money), ("effective_gross_income", "EGI", money),
                                    ("operating_expenses", "operating expenses", money)):
            if data[field] is not None:
                bits.append(f"{words} {shown(Decimal(str(data[field])))} {self._fin(field)}{self._from(field)}")
        return ["Operations: " + ", ".join(bits) + "."] if bits else []

    def stage(self) -> str:
        deal = self.deal
        text = f"Stage: {deal.stage.name} {self._deal('stage.name')} ({deal.stage.kind} {self._deal('stage.kind')})"
        change = self.r.latest_change
        if change is not None:
            path = f"/deals/{deal.pk}/stage-changes/?page={self.r.stage_changes}&page_size=1"
            since = self.c.cite("stage_change", change.pk, path, "results.0.at", _DATETIME.to_representation(change.at))
            text += f" since {local_date(change.at).isoformat()} {since}"
        else:  # no move recorded (a deal made before the pipeline): in its stage since it was made
            text += f" since {local_date(deal.created_at).isoformat()} {self._deal('created_at')}"
        if deal.owner_id:
            text += f"; owner {name(deal.owner.get_username())}"
        return text + "."

    def parties(self) -> str:
        deal = self.deal
        found = [f"{role} {name(company.name)} {self._deal(role + '.name')}"
                 for role, company in (("sponsor", deal.sponsor), ("borrower", deal.borrower)) if company]
        if self.detail == "brief":
            return ""
        if not found:
            return "Sponsor and borrower: not set."
        return "Parties: " + "; ".join(found) + "."

    def search(self) -> list[str]:
        if not self.r.lenders_read:
            self.left_out.append("lender search: the credential lacks the lenders:read scope")
            return [LENDERS_READ_LEFT_OUT]
        search = self.r.search
        if search is None:
            return ["Lender search: none yet."]
        status = self._search("status", search.status)
        text = f"Lender search {search.pk}: {search.status} {status}"
        if search.deal_version != self.deal.version:
            text += f" (the deal changed since {self._search('deal_changed', True)})"
        if search.status == LenderSearch.Status.FAILED:
            # As the search's answer words it (deals.searches.serializers: `error`).
            message = search.error_message or "Internal error: the lender search failed."
            text += f": {name(message)} {self._search('error.message', message)}"
        elif search.status in (LenderSearch.Status.PENDING, LenderSearch.Status.RUNNING):
            text += f", {search.progress}% done {self._search('progress', search.progress)}"
        if search.status in (LenderSearch.Status.COMPLETED, LenderSearch.Status.PARTIAL):
            text += f", {plural(search.total_matches, 'lender')} matched {self._search('count', search.total_matches)}"
            if search.matches_purged_at is not None:
                text += " (its ranked results were removed: search again to see them)"
            elif self.r.matches:
                tops = [f"{name(m.lender_name)} (score {m.score} {self._search(f'results.{i}.score', m.score)})"
                        for i, m in enumerate(self.r.matches)]
                text += "; top: " + ", ".join(tops)
        return [text + "."]

    def placements(self) -> list[str]:
        counts = self.r.placement_counts
        if not counts:
            return ["Placements: none yet."]
        total = sum(counts.values())
        parts = [f"{counts[s]} {label(s)} {self._count(s)}" for s in counts]
        lines = [f"Placements: {total} {self._count(None)}: " + ", ".join(parts) + "."]
        for placement in self.r.placements:
            path = f"/placements/{placement.pk}/"
            status = self.c.cite("placement", placement.pk, path, "status", placement.status)
            contact = f", contact {name(placement.contact_name)}" if placement.contact_name else ""
            lines.append(f"- {name(placement.lender.name)}: {label(placement.status)} {status}{contact}")
        if self.r.placements and total > len(self.r.placements):
            lines.append(f"…and {plural(total - len(self.r.placements), 'more placement')} (list_placements).")
        return lines

    def quotes(self) -> list[str]:
        comparison = self.comparison
        if comparison is None or not comparison.quotes:
            return ["Quotes: none yet."] if self.r.placement_counts else []
        quotes = comparison.quotes
        shown = list(range(min(self.level.quotes, len(quotes))))
        winner = next((i for i, q in enumerate(quotes) if q.winning), None)
        if winner is not None and winner not in shown:
            shown.append(winner)
        if self.detail == "brief":
            lead = "Winner" if winner is not None else "Best"
            return [f"{lead} of {plural(len(quotes), 'quote')}: " + self.quote_line(winner or 0)]
        lines = [f"Quotes: {plural(len(quotes), 'quote')} compared, best first:"]
        lines += [self.quote_line(i) for i in shown]
        if len(quotes) > len(shown):
            lines.append(f"…and {plural(len(quotes) - len(shown), 'more quote')} (compare_term_sheets).")
        if self.detail != "brief":
            lines += [f"Not computable: {text}" for text in comparison.unavailable]
        return lines

    def quote_line(self, i: int) -> str:
        q = self.comparison.quotes[i]
        bits = []
        if q.all_in_rate is not None:
            rate = f"{percent(q.all_in_rate)} all-in {self._quote(i, 'all_in_rate')}"
        else:
            index = RATE_INDEX_NAMES.get(q.rate_index, q.rate_index)
            rate = (f"all-in rate unavailable (no {index} rate on or before {q.quoted_on.isoformat()}) "
                    f"{self._quote(i, 'all_in_rate')}")
        if q.rate_type == "floating":
            index = RATE_INDEX_NAMES.get(q.rate_index, q.rate_index)
            rate += f" ({index} + {q.spread_bps} bps {self._quote(i, 'spread_bps')})"
        else:
            rate += " (fixed)"
        bits.append(rate)
        bits.append(f"proceeds {money(q.proceeds)} {self._quote(i, 'proceeds')}")
        if q.dscr is not None:
            bits.append(f"DSCR {times(q.dscr)} {self._quote(i, 'dscr')}")
        if q.ltv is not None:
            bits.append(f"LTV {percent(q.ltv)} {self._quote(i, 'ltv')}")
        if self.level.quote_terms:
            if q.all_in_cost is not None and q.all_in_cost != q.all_in_rate:
                bits.append(f"all-in cost {percent(q.all_in_cost)} {self._quote(i, 'all_in_cost')}")
            if q.total_fees:
                bits.append(f"fees {money(q.total_fees)} {self._quote(i, 'total_fees')}")
            if q.term_months:
                bits.append(f"term {q.term_months} months {self._quote(i, 'term_months')}")
        # The winner and a missing all-in rate are said already.
        notes = [n for n in q.notes if n != "winning quote" and "all-in rate unknown" not in n]
        if notes and self.detail != "brief":
            bits.append("; ".join(notes[:4 if self.level.quote_terms else 2]))
        winning = f" WINNER {self._quote(i, 'winning')}" if q.winning else ""
        return f"#{q.rank} {name(q.lender_name)}{winning}: " + ", ".join(bits) + "."


class NextSteps:
    """The rules, in order; each step is {"rule": …, "text": …} (docs/summaries.md lists the rules)."""

    def __init__(self, writer: _Writer) -> None:
        self.w, self.r, self.deal = writer, writer.r, writer.deal
        self.out: list[dict[str, str]] = []

    def add(self, rule: str, text: str) -> None:
        self.out.append({"rule": rule, "text": text})

    def steps(self) -> list[dict[str, str]]:
        deal = self.deal
        if deal.archived:
            self.add("archived", "None: the deal is archived (kept for the record).")
            return self.out
        if deal.stage.kind == "dead":
            self.add("dead", f"None while it is in {deal.stage.name}, a dead stage: move it back with "
                             "move_deal_stage to revive it.")
            return self.out
        if deal.stage.kind == "won":
            self.add("closed", f"None: the deal is closed ({deal.stage.name}).")
            return self.out
        self.deal_gaps()
        # Once the deal is placed, the search has done its part.
        if self.r.lenders_read and not self.r.placement_counts:
            self.search_steps()
        if self.r.placements_read:
            self.placement_steps()
        return self.out

    def deal_gaps(self) -> None:
        missing = missing_for_search(self.deal, self.r.properties)
        if missing:
            self.add("complete_deal", "Complete the deal for a lender search: add " + ", ".join(missing)
                     + " (update_deal, add_deal_property).")
        fin = self.r.financials
        noi = fin.noi if fin else None
        value = (fin.estimated_value or fin.purchase_price) if fin else None
        if noi is None or value is None:
            lacking = " and ".join(w for w, v in (("NOI", noi), ("value", value)) if v is None)
            self.add("add_financials", f"Add the {lacking} (update_deal_financials) so LTV, DSCR and debt yield "
                                       "can be computed.")
        elif fin.interest_rate is None:
            self.add("add_rate", "Add the interest rate asked (update_deal_financials) for a DSCR.")

    def search_steps(self) -> None:
        search = self.r.search
        if missing_for_search(self.deal, self.r.properties):
            return
        if search is None:
            self.add("start_search", "Start a lender search (search_lenders_for_deal).")
        elif search.status == LenderSearch.Status.FAILED:
            self.add("search_failed", f"Lender search {search.pk} failed: start it again (search_lenders_for_deal).")
        elif search.status in (LenderSearch.Status.PENDING, LenderSearch.Status.RUNNING, LenderSearch.Status.PARTIAL):
            self.add("search_running", f"Wait for lender search {search.pk} to finish (get_lender_search_results).")
        elif search.deal_version != self.deal.version and not self.r.placement_counts:
            self.add("search_again", f"The deal changed since lender search {search.pk}: search again "
                                     "(search_lenders_for_deal).")

    def placement_steps(self) -> None:
        r, w = self.r, self.w
        counts = r.placement_counts
        quotes = r.comparison.quotes if r.comparison else []
        winner = next((i for i, q in enumerate(quotes) if q.winning), None)
        if winner is not None:
            q = quotes[winner]
            text = f"Work the winning quote {w._quote(winner, 'winning')} ({name(q.lender_name)}) to closing"
            if self.deal.stage.key != "closing":
                text += " and move the deal to Closing (move_deal_stage)"
            if not self.deal.estimated_close_date:
                text += "; set an estimated close date (update_deal)"
            self.add("closing", text + ".")
            return
        search = r.search
        if not counts:
            # From a search of the deal as it is now (a changed deal is searched again first).
            if (search is not None and search.status == LenderSearch.Status.COMPLETED and search.total_matches
                    and search.deal_version == self.deal.version):
                top = ", ".join(name(m.lender_name) for m in r.matches[:3])
                self.add("place_top_lenders", f"Place the top lenders of search {search.pk}"
                         + (f" ({top})" if top else "") + " (create_placements with search_id).")
            return
        if counts.get("draft"):
            self.add("send_drafts", f"Send the {plural(counts['draft'], 'draft placement')} "
                                    f"{w._count('draft')} (update_placement status sent).")
        for placement in r.stale:
            sent = w.c.cite("placement", placement.pk, f"/placements/{placement.pk}/", "sent_at",
                            _DATETIME.to_representation(placement.sent_at))
            days = (self.w.today - local_date(placement.sent_at)).days
            who = ", ".join(name(p) for p in (placement.contact_name, placement.contact_email) if p)
            self.add("follow_up", f"Follow up with {name(placement.lender.name)}" + (f" ({who})" if who else "")
                     + f": sent {local_date(placement.sent_at).isoformat()} {sent}, no answer in {days} days.")
        if r.stale_count > len(r.stale):
            self.add("follow_up", f"Follow up on {plural(r.stale_count - len(r.stale), 'more placement')} sent "
                                  f"{FOLLOW_UP_DAYS}+ days ago without an answer (list_placements status sent).")
        live = [i for i, q in enumerate(quotes) if not q.expired]
        if len(live) >= 2:
            comparison = r.comparison
            best_id = comparison.best_term_sheet_id if comparison is not None else None
            best = next((q for q in quotes if q.term_sheet_id == best_id), None)
            if best is not None:
                verdict = f"the best of alike quotes is {name(best.lender_name)} (#{best.rank})"
            elif comparison is not None and comparison.trade_offs:
                verdict = f"they are not alike, so weigh {comparison.trade_offs[0]}"
            else:
                verdict = "none is within its lender's limits yet"
            self.add("choose_winner", f"Compare the {len(live)} live quotes and choose a winner "
                                      f"(compare_term_sheets, select_winning_term_sheet): {verdict}.")
        elif len(live) == 1:
            self.add("choose_winner", f"One live quote ({name(quotes[live[0]].lender_name)}): choose it "
                                      "(select_winning_term_sheet) or wait for the other lenders.")
        for i, q in enumerate(quotes):
            if not q.expired and q.expires_on is not None and (q.expires_on - self.w.today).days <= EXPIRES_SOON_DAYS:
                self.add("quote_expiring", f"The quote of {name(q.lender_name)} expires "
                                           f"{q.expires_on.isoformat()} {w._quote(i, 'expires_on')}: decide or ask "
                                           "for an extension.")
        if r.comparison is not None and any(q.rate_type == "floating" and q.all_in_rate is None for q in quotes):
            self.add("base_rate", "Some floating quotes have no all-in rate (no market rate of their index on "
                                  "or before the day they were quoted): have an admin add it under Market rates "
                                  "(or import_market_rates) before choosing.")
        open_ = sum(counts.get(s, 0) for s in ("draft", "sent", "reviewing", "quoted", "no_response"))
        if not open_ and not quotes:
            self.add("place_more", "Every placement is closed without a quote: place more lenders "
                                   "(create_placements).")
