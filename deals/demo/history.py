"""A plausible, deterministic history of placements and term sheets for the demo directory, so the
lender ranking learns from records (deals.searches.ranking.evidence, deals.placements.activity) rather
than seeded counters.

`seed_market_history` creates, in the demo account itself (the ranking learns from an account's OWN
placements: issue 37), a few hundred past deals across the directory's markets, weighted toward the
markets of the account's demo deals (`focus`: their state, asset type, size and loan type), each placed
with lenders whose active programs cover its state, asset type, loan type and loan size. Each lender has
a temperament drawn from its place in the directory (how fast it answers, how often it quotes and wins;
one in eight never answers this team) and an appetite per asset type (keen: quotes nearly every such
deal; steady; declines them), so the demo deal's lenders differ the way they do in a real market.
Lenders answer, decline or stay silent; quotes arrive as term sheets; about half of the deals end with
a winner and the other open placements lost. Times run over the last `HISTORY_DAYS` days before `now`,
and nothing happens after `now`. The past deals are archived (and marked: `HISTORY_DESCRIPTION`), so
the deal team's lists (active deals by default) show its own demo deals.

Deterministic: the same directory, focus, seed and `now` give the same records (random draws follow the
directory's order by website, not database ids). Idempotent: nothing is created when the account's
history is already there (its archived past deals with placements; the demo deal's own placements do
not count). A database seeded before the history moved into the demo account has it in an account of
its own (`LEGACY_HISTORY_ACCOUNT_SLUG`, no members): `retire_legacy_history` deletes that account.

seed_demo does not generate it at seed time: it imports it (`import_demo_history`) through the history
import (deals.history.services), the path a team's own file takes, from `DEMO_HISTORY_FILE`, which
`manage.py demo_history_file` writes from `seed_market_history` and the exporter (docs/import-export.md,
"The demo's history"). The ranking's back-test still generates its markets here.
`seed_demo_pipeline` puts one demo deal in mid-placement (sent to a few lenders, two quotes in) through
the placement services, so the workflow can be tried at once. The market rates the quotes are compared
with (a dated history of every index) are deals.demo.rates'.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import random
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from deals.history.services import history_import
from deals.models import Deal, DealFinancials, DealProperty, Placement, TermSheet
from deals.placements.workflow import OPEN_STATUSES
from lenders.models import Lender, LenderProgram
from lev import limits
from lev.accounts.models import Account
from lev.enums import ASSET_TYPES

# Where an older version kept the history: an account of its own, with no members.
LEGACY_HISTORY_ACCOUNT_SLUG = "demo-market-history"
# Marks the past deals (archived) of the history, in words a team's own imported past deal would carry (issue
# 39: nothing a deal team reads says "demo"); a database seeded before says the earlier words.
HISTORY_DESCRIPTION = "A past deal of the team's, from its history before Lev."
EARLIER_HISTORY_DESCRIPTIONS = ("Demo market history.",)
HISTORY_DAYS = 150
# The share of past deals in the focus markets (the demo deals': their loan type too), and the chance a
# focus deal has the demo deal's transaction type and business plan.
FOCUS_SHARE = 0.45
FOCUS_PLAN = 0.6
# Lenders that never answer this team, whatever the deal; and each lender's appetite for an asset type.
SILENT_SHARE = 0.12
APPETITES = (("keen", 0.35), ("steady", 0.45), ("declines", 0.2))
# Where the demo deals are: the directory's headquarters markets (deals.demo.directory.CITIES) and a few more.
MARKETS = ("TX", "FL", "CA", "NY", "GA", "AZ", "NC", "CO", "IL", "TN", "WA", "OH", "PA", "MA", "MN", "NV", "UT")
FLOATING_TYPES = ("debt_fund", "private")
# The demo account's history as seed_demo imports it (`import_demo_history`): this module's history of the
# default demo directory, exported (`manage.py demo_history_file` writes it again).
DEMO_HISTORY_FILE = Path(__file__).resolve().parent / "history.csv"
DEMO_HISTORY_DATES = ("sent_on", "answered_on", "decided_on")


@dataclass(frozen=True)
class HistoryStats:
    deals: int = 0
    placements: int = 0
    term_sheets: int = 0
    won: int = 0

    def __str__(self) -> str:
        return (f"{self.deals} past deals, {self.placements} placements, {self.term_sheets} term sheets, "
                f"{self.won} won")


@dataclass(frozen=True)
class Market:
    """A kind of deal the history leans toward (a demo deal's): where, what, how much, which loan.
    `weight`: its share of the focus deals relative to the other focus markets."""

    state: str
    asset_type: str
    loan_amount: float
    loan_type: str = ""
    transaction_type: str = ""
    business_plan: str = ""
    weight: float = 1.0


@dataclass(frozen=True)
class Temperament:
    """How a lender behaves: how often brokers send it deals (reach), median hours to answer, and
    its chances to answer, quote and win; `silent`: it never answers this team."""

    reach: float
    median_hours: float
    answers: float
    quotes: float
    wins: float
    silent: bool = False

    def chances(self, appetite: str) -> tuple[float, float]:
        """(answers, quotes once it answered) for a deal of an asset type it has this appetite for."""
        if self.silent:
            return 0.05, self.quotes
        if appetite == "keen":
            return max(self.answers, 0.92), max(self.quotes, 0.9)
        if appetite == "declines":
            return 0.97, 0.03  # says no, and says it quickly
        return self.answers, self.quotes


def _temperament(rng: random.Random) -> Temperament:
    return Temperament(reach=math.exp(rng.gauss(0, 1)), median_hours=math.exp(rng.uniform(math.log(3), math.log(72))),
                       answers=rng.uniform(0.6, 0.97), quotes=rng.uniform(0.3, 0.8), wins=rng.uniform(0.2, 0.8),
                       silent=rng.random() < SILENT_SHARE)


def _appetite(seed: int, website: str, asset_type: str) -> str:
    """The lender's appetite for deals of one asset type: its own draw, whatever else is seeded."""
    roll, total = random.Random(f"{seed}:{website}:{asset_type}").random(), 0.0
    for name, share in APPETITES:
        total += share
        if roll < total:
            return name
    return APPETITES[-1][0]


def _cover(program_rows, markets: Sequence[str] = MARKETS
           ) -> dict[tuple[str, str], list[tuple[str, int, float, float, str, tuple[str, ...]]]]:
    """(state, asset type) -> [(website, lender id, min loan, max loan, lender type, loan types)] of
    active programs (loan types empty: any)."""
    cover: dict[tuple[str, str], list] = defaultdict(list)
    for lender_id, website, lender_types, states, assets, low, high, loan_types in program_rows:
        kind = (lender_types or ["bank"])[0]
        for state in states or markets:
            if state not in markets:
                continue
            for asset in assets or ASSET_TYPES:
                cover[(state, asset)].append((website, lender_id, float(low or 0), float(high or 1e12), kind,
                                              tuple(loan_types or ())))
    return cover


def history_deals(account: Account):
    """The account's past deals of the demo history (archived, marked), not its own demo deals."""
    return Deal.objects.filter(account=account, archived=True,
                               description__in=(HISTORY_DESCRIPTION, *EARLIER_HISTORY_DESCRIPTIONS))


def retire_legacy_history() -> int:
    """Delete the separate history account an older version seeded (no members; its deals, placements
    and quotes, its signals and activity go with it): the history is the demo account's own now. Returns
    the deals deleted with it (0 when there was none, or when people are members of it: then it is
    someone's account, and left alone)."""
    account = Account.objects.filter(slug=LEGACY_HISTORY_ACCOUNT_SLUG).first()
    if account is None or account.memberships.exists():
        return 0
    deals = Deal.objects.filter(account=account).count()
    account.delete()
    return deals


@dataclass(frozen=True)
class DemoImport:
    """What `import_demo_history` did: `stats`, what it wrote (zeros: nothing new); `rows`, the file's rows;
    `left_out`, those naming a lender the directory lacks; `shift_days`, how far its days were moved;
    `generated`: the account has a history this module generated (an older seed_demo), kept as it is."""

    stats: HistoryStats = HistoryStats()
    rows: int = 0
    left_out: int = 0
    shift_days: int = 0
    generated: bool = False


def import_demo_history(account: Account, *, path: Path = DEMO_HISTORY_FILE, today: dt.date | None = None,
                        user=None) -> DemoImport:
    """Import the bundled demo history (`DEMO_HISTORY_FILE`) into `account` through the history import
    (deals.history.services.history_import: the one path a team's own file takes), in three steps:

    1. its days moved by whole days so its last one is yesterday (the file was written on its own
       reference day; a demo seeded later has a history just as recent);
    2. its lenders matched by exact name to directory lenders, and given to the import as its mapping
       (never fuzzy: a smaller directory, `seed_demo --lenders N`, lacks some of the default directory's
       lenders, and a name it lacks must not land on a similar one): rows naming a lender the directory
       lacks are left out (counted in `left_out`), a deal with none left is not imported;
    3. that copy (a temporary file of the same name, so the deals' notes name the bundled file) imported.

    Once: the import skips the deals the account has by external id, so a second run writes nothing (and
    when the account has every deal of the file, the import is not even run: seed_demo stays quick). A
    past deal whose placements went with their lenders (a directory seeded afresh) is deleted first, to be
    imported anew. An account with a history generated in code (`seed_market_history`: marked, no external
    ids) keeps it, and nothing is imported. Raises what history_import raises (a bundled file it refuses
    is a bug: tests/deals/test_demo_history.py imports it)."""
    if Placement.objects.filter(deal__in=history_deals(account).filter(external_id="")).exists():
        return DemoImport(generated=True)
    history_deals(account).exclude(external_id="").exclude(
        pk__in=Placement.objects.values("deal_id")).delete()
    today = today or timezone.localdate()
    with path.open(encoding="utf-8-sig", newline="") as file:
        reader = csv.reader(file)
        header = next(reader)
        rows = list(reader)
    at = {name: index for index, name in enumerate(header)}
    days = [dt.date.fromisoformat(row[at[key]]) for row in rows for key in DEMO_HISTORY_DATES if row[at[key]]]
    shift = (today - dt.timedelta(days=1)) - max(days) if days else dt.timedelta()
    names = {row[at["lender"]] for row in rows}
    found: dict[str, list[int]] = defaultdict(list)
    for pk, name in Lender.objects.filter(account__isnull=True, name__in=names).values_list("pk", "name"):
        found[name].append(pk)
    mapping = {name: pks[0] for name, pks in found.items() if len(pks) == 1}
    kept = [row for row in rows if row[at["lender"]] in mapping]
    done = DemoImport(rows=len(rows), left_out=len(rows) - len(kept), shift_days=shift.days)
    ids = {row[at["deal_external_id"]] for row in kept}
    if not kept or len(ids) == Deal.objects.filter(account=account, external_id__in=ids).count():
        return done  # nothing to import, or every deal is there (the import would skip them all)
    for row in kept:
        for key in (*DEMO_HISTORY_DATES, "close_date"):
            if key in at and row[at[key]]:
                row[at[key]] = (dt.date.fromisoformat(row[at[key]]) + shift).isoformat()
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / path.name
        with copy.open("w", encoding="utf-8", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(header)
            writer.writerows(kept)
        result = history_import(account=account, path=copy, mapping=mapping, today=today, user=user)
    stats = HistoryStats(deals=result.deals, placements=result.placements, term_sheets=result.term_sheets,
                         won=result.won)
    return DemoImport(stats=stats, rows=done.rows, left_out=done.left_out, shift_days=done.shift_days)


def _money(value: float) -> Decimal:
    return Decimal(int(round(value, -4)))


def _clip(moment: dt.datetime, now: dt.datetime) -> dt.datetime | None:
    return moment if moment <= now else None


@transaction.atomic
def seed_market_history(account: Account, *, seed: int = 7, deals: int = 400, now: dt.datetime | None = None,
                        focus: Sequence[Market] = ()) -> HistoryStats:
    """Create the account's history (see the module docstring), `FOCUS_SHARE` of its deals in the
    `focus` markets; returns what was made (zeros when it exists)."""
    now = now or timezone.now()
    past = history_deals(account)
    if Placement.objects.filter(deal__in=past).exists():
        return HistoryStats()
    past.delete()  # a history whose lenders were deleted: made anew
    rows = (LenderProgram.objects.filter(status=LenderProgram.Status.ACTIVE, lender__category="demo",
                                         account__isnull=True)
            .order_by("lender__website", "id")
            .values_list("lender_id", "lender__website", "lender__lender_types", "sponsor_states", "asset_types",
                         "min_loan_amount", "max_loan_amount", "loan_types"))
    focus = [m for m in focus if m.state and m.asset_type and m.loan_amount]
    cover = _cover(rows, sorted({*MARKETS, *(m.state for m in focus)}))
    if not cover:
        return HistoryStats()
    websites = sorted({entry[0] for entries in cover.values() for entry in entries})
    temperaments = {w: _temperament(random.Random(f"{seed}:{w}")) for w in websites}
    rng = random.Random(seed)
    markets = sorted(cover)

    plans = []
    for index in range(deals):
        market = rng.choices(focus, weights=[m.weight for m in focus])[0] if (
            focus and rng.random() < FOCUS_SHARE) else None
        if market is not None:
            state, asset = market.state, market.asset_type
            amount = _money(market.loan_amount * math.exp(rng.uniform(math.log(0.6), math.log(1.6))))
            loan_type = market.loan_type or rng.choice(("permanent", "light_bridge"))
            same_plan = rng.random() < FOCUS_PLAN
            transaction_type = (market.transaction_type if same_plan and market.transaction_type
                                else rng.choice(("acquisition", "refinance")))
            plan = (market.business_plan if same_plan and market.business_plan
                    else rng.choice(("stabilized", "value_add")))
        else:
            state, asset = rng.choice(markets)
            amount = _money(math.exp(rng.uniform(math.log(2e6), math.log(60e6))))
            loan_type = "permanent" if rng.random() < 0.6 else "light_bridge"
            transaction_type = rng.choice(("acquisition", "refinance"))
            plan = rng.choice(("stabilized", "value_add"))
        candidates = cover.get((state, asset), [])
        fitting = sorted({(w, lid, kind) for w, lid, low, high, kind, types in candidates
                          if low <= amount <= high and (not types or loan_type in types)})
        if len(fitting) < 2:
            continue
        # Busy lenders get more deals: a weighted draw without replacement (keys u ** (1 / reach)).
        keyed = sorted(fitting, key=lambda f: -(rng.random() ** (1 / temperaments[f[0]].reach)))
        chosen = keyed[: rng.randint(3, 8)]
        started = now - dt.timedelta(days=rng.uniform(5, HISTORY_DAYS), hours=rng.uniform(0, 24))
        plans.append((index, state, asset, amount, started, chosen, loan_type, transaction_type, plan))

    deal_objects = Deal.objects.bulk_create([
        Deal(account=account, title=f"Past {asset.replace('_', ' ')} loan in {state} #{index + 1:03d}",
             loan_amount=amount, loan_type=loan_type, transaction_type=transaction_type, business_plan=plan,
             description=HISTORY_DESCRIPTION,
             # Past deals: archived, so a deal team's lists (active deals by default) show its own.
             archived=True, archived_at=now)
        for index, state, asset, amount, _started, _chosen, loan_type, transaction_type, plan in plans
    ])
    DealProperty.objects.bulk_create([
        DealProperty(deal=deal, name=f"Property of {deal.title}", state=state, asset_type=asset)
        for deal, (_i, state, asset, *_rest) in zip(deal_objects, plans, strict=True)
    ])
    DealFinancials.objects.bulk_create([
        DealFinancials(deal=deal, estimated_value=_money(float(amount) / rng.uniform(0.55, 0.75)),
                       in_place_noi=_money(float(amount) * rng.uniform(0.07, 0.1)))
        for deal, (_i, _s, _a, amount, *_rest) in zip(deal_objects, plans, strict=True)
    ])

    placements: list[Placement] = []
    quotes: list[tuple[int, dict]] = []  # (index in placements, term sheet fields)
    won = 0
    for deal, (_i, _state, asset, amount, started, chosen, *_rest) in zip(deal_objects, plans, strict=True):
        first_index = len(placements)
        quoted: list[int] = []
        for website, lender_id, kind in chosen:
            mood = temperaments[website]
            answers, quotes_chance = mood.chances(_appetite(seed, website, asset))
            sent = started + dt.timedelta(hours=rng.uniform(1, 48))
            placement = Placement(deal=deal, lender_id=lender_id, status="sent", sent_at=_clip(sent, now),
                                  created_at=min(started, now))
            placements.append(placement)
            if placement.sent_at is None:
                placement.status = "draft"
                continue
            if rng.random() > answers:
                if sent + dt.timedelta(days=10) <= now:
                    placement.status = "no_response"
                continue
            answered = _clip(sent + dt.timedelta(hours=mood.median_hours * math.exp(rng.gauss(0, 0.6))), now)
            if answered is None:
                continue
            placement.first_response_at = answered
            if rng.random() > quotes_chance:
                placement.status, placement.decided_at = "declined", answered
                continue
            placement.status = "reviewing"
            received = _clip(answered + dt.timedelta(days=rng.uniform(0.5, 12)), now)
            if received is None:
                continue
            placement.status = "quoted"
            quoted.append(len(placements) - 1)
            for revision in range(1 if rng.random() < 0.8 else 2):
                quotes.append((len(placements) - 1, quote_terms(rng, kind, amount,
                                                           received + dt.timedelta(days=3 * revision), now)))
        # About half of the deals that got quotes pick a winner, weighted by how often each lender wins,
        # some days after the last quote came in.
        last_received = max((fields["received_at"] for i, fields in quotes if i >= first_index), default=started)
        decided = max(started + dt.timedelta(days=rng.uniform(20, 45)),
                      last_received + dt.timedelta(days=rng.uniform(1, 7)))
        if quoted and decided <= now and rng.random() < 0.55:
            weights = [temperaments[chosen[i - first_index][0]].wins for i in quoted]
            winner = rng.choices(quoted, weights=weights)[0]
            for i in range(first_index, len(placements)):
                if i == winner:
                    placements[i].status, placements[i].decided_at = "won", decided
                elif placements[i].status in OPEN_STATUSES:
                    placements[i].status, placements[i].decided_at = "lost", decided
            won += 1

    placements = Placement.objects.bulk_create(placements, batch_size=1000)
    winners = {i for i, p in enumerate(placements) if p.status == "won"}
    last_quote = {i: n for n, (i, _fields) in enumerate(quotes)}
    TermSheet.objects.bulk_create([
        TermSheet(placement=placements[i], deal_id=placements[i].deal_id,
                  winning=i in winners and last_quote[i] == n, **fields)
        for n, (i, fields) in enumerate(quotes)
    ], batch_size=1000)
    return HistoryStats(deals=len(deal_objects), placements=len(placements), term_sheets=len(quotes), won=won)


def _exit_fee(rng: random.Random) -> Decimal:
    """0 to 1 percent; none under the quote form's floor (0.1: a smaller figure reads as a fraction)."""
    fee = Decimal(str(round(rng.uniform(0, 1), 2)))
    return fee if fee >= limits.FEE_PERCENT_FLOOR else Decimal(0)


def quote_terms(rng: random.Random, kind: str, amount: Decimal, received: dt.datetime, now: dt.datetime) -> dict:
    """A term sheet's fields as a lender of `kind` (its first lender type) would quote `amount`, received at
    `received` (never after `now`): floating for funds and private lenders, else mostly fixed."""
    received = min(received, now)
    floating = kind in FLOATING_TYPES
    bridge = floating or rng.random() < 0.2
    fields = {
        "quote_type": rng.choice(("indicative", "soft_quote", "term_sheet", "term_sheet")),
        "loan_amount": _money(float(amount) * rng.uniform(0.85, 1.05)),
        "rate_type": "floating" if floating else "fixed",
        "term_months": rng.choice((24, 36)) if bridge else rng.choice((60, 84, 120)),
        "amortization_months": None if bridge else 360,
        "interest_only_months": 0 if bridge else rng.choice((0, 0, 12, 24)),
        "max_ltv": Decimal(rng.randint(60, 80)),
        "min_dscr": Decimal(str(round(rng.uniform(1.15, 1.35), 2))),
        "recourse": rng.choice(("full", "partial", "non_recourse")),
        "origination_fee_percent": Decimal(str(round(rng.uniform(0.25, 1.5), 2))),
        "exit_fee_percent": _exit_fee(rng) if bridge else None,
        "prepayment": ("open after 12 months" if bridge
                       else rng.choice(("yield maintenance", "5-4-3-2-1", "defeasance"))),
        "expires_on": (received + dt.timedelta(days=30)).date(),
        "received_at": received,
        "created_at": received,
    }
    if floating:
        fields.update(rate_index="sofr", spread_bps=rng.randrange(250, 550, 5))
    else:
        fields.update(fixed_rate=Decimal(str(round(rng.uniform(5.4, 7.6), 3))))
    return fields


def seed_demo_search(*, deal: Deal, user=None, again: bool = False):
    """The demo deal's completed lender search: its latest completed one, else one started and run
    here, in-process, through the searches services (the same ranking every door gets; deterministic
    for the same directory and signals). `again`: start one even when there is a completed one (the
    history it learns from was just made; a recent search of the same deal version is reused). None
    when the deal cannot be searched."""
    from deals.searches import services as search_services
    from deals.searches.models import LenderMatch, LenderSearch
    from deals.searches.ranking import missing_for_search

    done = LenderSearch.objects.filter(deal=deal, status=LenderSearch.Status.COMPLETED).order_by("-id").first()
    if done is not None and not LenderMatch.objects.filter(search=done).exists() and done.ranked_matches:
        # Its ranked lenders went with the directory they ranked (a directory seeded afresh): rank again.
        LenderSearch.objects.filter(deal=deal).delete()
        done = None
    if (done is not None and not again) or deal.archived or missing_for_search(
            deal, list(deal.properties.order_by("id"))):
        return done
    search, _ = search_services.lender_search_start(deal=deal, user=user)
    search.refresh_from_db()
    if search.status == LenderSearch.Status.PENDING:
        # Run now, unless an in-process job already ran it on commit (then it is done); a queued job
        # finds it done.
        search_services.lender_search_run(search_id=search.pk)
        search.refresh_from_db()
    return search if search.status == LenderSearch.Status.COMPLETED else done


def seed_demo_pipeline(*, deal: Deal, user=None) -> int:
    """Rank lenders for `deal` (seed_demo_search), place it with its four best ranked lenders (their
    ranks kept) and record two of their quotes, through the services (the same rules as every door).
    Nothing when the deal has placements. Returns how many placements were made."""
    from deals.placements import services as placement_services

    if deal.archived or Placement.objects.filter(deal=deal).exists():
        return 0
    search = seed_demo_search(deal=deal, user=user)
    if search is None or not search.ranked_matches:
        return 0
    batch = placement_services.placements_create(deal=deal, user=user, search=search, top_n=4, send=True,
                                                 notes="Sent with the deal package.")
    if not batch.created:
        return 0
    amount = deal.loan_amount or Decimal("10000000")
    first, second = batch.created[0], batch.created[1] if len(batch.created) > 1 else None
    placement_services.term_sheet_add(placement=first, user=user, data={
        "quote_type": "term_sheet", "loan_amount": amount, "rate_type": "fixed", "fixed_rate": Decimal("6.150"),
        "term_months": 120, "amortization_months": 360, "interest_only_months": 24, "recourse": "non_recourse",
        "origination_fee_percent": Decimal("0.75"), "max_ltv": Decimal("75"), "min_dscr": Decimal("1.25"),
        "prepayment": "yield maintenance", "expires_on": timezone.localdate() + dt.timedelta(days=30),
    })
    if second is not None:
        placement_services.term_sheet_add(placement=second, user=user, data={
            "quote_type": "soft_quote", "loan_amount": _money(float(amount) * 1.05), "rate_type": "floating",
            "rate_index": "sofr", "spread_bps": 285, "term_months": 36, "interest_only_months": 36,
            "recourse": "full", "origination_fee_percent": Decimal("1"), "exit_fee_percent": Decimal("0.5"),
            "max_ltv": Decimal("78"), "prepayment": "open after 12 months",
            # Lapsing within two weeks: the home page's "Term sheets about to expire".
            "expires_on": timezone.localdate() + dt.timedelta(days=10),
        })
    return len(batch.created)
