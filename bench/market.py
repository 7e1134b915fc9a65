"""A seeded synthetic lending market whose lenders' true appetite differs from their stated programs:
the world the ranking's back-test (`deals.searches.ranking.backtest`, `manage.py backtest_ranking
--synthetic`) is run on, so it can show whether learning from an account's own placements beats
ranking by stated programs alone (CONVENTIONS.md, 20).

`seed_market` writes, through the ORM into a fresh account of its own:

* **lenders** (`lenders` of them, category `synthetic`, names and websites carrying the account's tag
  so they never collide with other lenders) with 1-3 stated programs each: asset types, states or
  nationwide, a loan range, max LTV, min DSCR, capital source, loan types. Each lender also has a
  hidden `TrueAppetite`, by archetype:

  - *honest* — quotes what it states;
  - *stale* — states a broad box (most asset types, nationwide) but rarely quotes any more;
  - *stretcher* — states a narrow box but quotes outside it too: other asset types, other states,
    loans above its stated maximum;
  - *specialist* — states a broad box, truly quotes one or two asset types, or one region;
  - *slow* — often never answers.

  Every lender's real sweet spot for size is narrower than its stated range and its real LTV limit
  lower than its stated one: the chance of a quote falls with leverage above it, coverage below it and
  size outside it.
* **past deals** (`past_deals`), spread over `years` before `split`, each placed the way brokers do:
  6-8 lenders, mostly from those whose stated programs take the deal, one or two outside. Outcomes are
  drawn from the true probabilities: a quote (term sheets; about half the deals then pick a winner,
  the others' placements lost), a decline, or no answer (`no_response`).
* **test deals** (`test_deals`) in the 60 days after `split`, each placed with a broad set — every
  lender whose stated programs pass the hard filters plus every lender placed before on a deal of
  its asset type — with outcomes drawn the same way (quoted, declined, or still `sent`), so who
  really quotes each one is known.

Deterministic: the same seed and sizes give the same market (draws come from `random.Random` seeded by
the seed and a name, never from database ids). The truth stays in memory on the returned `Market`
(`true_probability`, `true_ranking`) for tests that check the market itself.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import transaction

from deals import finance
from deals.demo.history import MARKETS, quote_terms
from deals.models import Deal, DealFinancials, DealProperty, Placement, Stage, TermSheet
from lenders.models import Lender, LenderProgram
from lev.accounts.models import Account

SPLIT = dt.datetime(2025, 7, 1, tzinfo=dt.UTC)
SMALL = {"lenders": 60, "past_deals": 300, "test_deals": 40}
BENCH = {"lenders": 200, "past_deals": 1000, "test_deals": 60}
CATEGORY = "synthetic"

ASSETS = ("multifamily", "industrial", "retail", "office", "mixed_use", "self_storage", "hospitality")
ASSET_WEIGHTS = (0.30, 0.15, 0.12, 0.10, 0.15, 0.10, 0.08)
STATES = MARKETS[:12]
LOAN_TYPE_WEIGHTS = {"permanent": 0.45, "light_bridge": 0.25, "heavy_bridge": 0.15, "construction": 0.15}
PLAN_OF_LOAN = {"permanent": "stabilized", "light_bridge": "value_add", "heavy_bridge": "value_add",
                "construction": "construction"}
# Lender type -> (capital source, the loan types its programs offer).
KINDS = {
    "bank": ("balance_sheet", ("permanent", "light_bridge", "construction")),
    "life_company": ("balance_sheet", ("permanent",)),
    "cmbs": ("securitized", ("permanent",)),
    "debt_fund": ("fund", ("light_bridge", "heavy_bridge")),
    "private": ("private", ("light_bridge", "heavy_bridge", "construction")),
}
ARCHETYPES = {"honest": 0.35, "stale": 0.15, "stretcher": 0.15, "specialist": 0.20, "slow": 0.15}
DSCR_RATE = Decimal("6.5")  # the rate the deals' financials state, for their DSCR
NO_RESPONSE_DAYS = 10  # a past placement unanswered this long was marked no_response by the broker


@dataclass(frozen=True)
class DealSpec:
    """A deal as the market draws it (one property)."""

    asset_type: str
    state: str
    loan_amount: float
    loan_type: str
    ltv: float  # percent
    dscr: float

    @property
    def business_plan(self) -> str:
        return PLAN_OF_LOAN[self.loan_type]


@dataclass(frozen=True)
class StatedProgram:
    title: str
    loan_types: tuple[str, ...]
    asset_types: tuple[str, ...]
    states: tuple[str, ...]  # () = nationwide
    min_loan: float
    max_loan: float
    max_ltv: float
    min_dscr: float
    capital_source: str

    def admits(self, deal: DealSpec) -> bool:
        """The ranking's hard filters (deals.searches.ranking.filters) for this program and deal."""
        return (deal.asset_type in self.asset_types and deal.loan_type in self.loan_types
                and (not self.states or deal.state in self.states)
                and self.min_loan <= deal.loan_amount <= self.max_loan)


@dataclass(frozen=True)
class TrueAppetite:
    """What a lender really does, hidden from the directory."""

    archetype: str
    answers: float  # chance to answer at all
    quotes: float  # chance to quote, once it answers, a deal squarely in its appetite
    assets: Mapping[str, float]  # multiplier per asset type
    states: Mapping[str, float]  # multiplier per state
    sweet_low: float
    sweet_high: float
    max_ltv: float
    min_dscr: float
    median_hours: float

    def quote_probability(self, deal: DealSpec) -> float:
        size = 1.0
        if deal.loan_amount < self.sweet_low:
            size = math.exp(-(math.log(self.sweet_low / deal.loan_amount) / 0.6) ** 2)
        elif deal.loan_amount > self.sweet_high:
            size = math.exp(-(math.log(deal.loan_amount / self.sweet_high) / 0.6) ** 2)
        leverage = 1.0 if deal.ltv <= self.max_ltv else math.exp(-(deal.ltv - self.max_ltv) / 6)
        coverage = 1.0 if deal.dscr >= self.min_dscr else math.exp(-(self.min_dscr - deal.dscr) / 0.15)
        return (self.answers * self.quotes * self.assets.get(deal.asset_type, 0.0)
                * self.states.get(deal.state, 0.0) * size * leverage * coverage)


@dataclass(frozen=True)
class MarketLender:
    index: int
    lender_type: str
    programs: tuple[StatedProgram, ...]
    truth: TrueAppetite
    reach: float  # how often brokers think of it

    def stated_fit(self, deal: DealSpec) -> bool:
        return any(program.admits(deal) for program in self.programs)


@dataclass(frozen=True)
class Market:
    """What `seed_market` wrote, and the truth behind it (in memory only)."""

    account: Account
    split: dt.datetime
    lenders: int
    past_deals: int
    test_deals: int
    placements: int
    term_sheets: int
    truth: Mapping[int, TrueAppetite] = field(repr=False)  # by lender id
    directory: Mapping[int, MarketLender] = field(repr=False)  # by lender id: stated programs and truth
    deals: Mapping[int, DealSpec] = field(repr=False)  # by deal id

    def true_probability(self, deal_id: int, lender_id: int) -> float:
        return self.truth[lender_id].quote_probability(self.deals[deal_id])

    def true_ranking(self, deal_id: int, limit: int) -> list[int]:
        """The market's lenders by their true chance to quote the deal (the best a ranking could know)."""
        spec = self.deals[deal_id]
        ranked = sorted(self.truth, key=lambda lender_id: (-self.truth[lender_id].quote_probability(spec), lender_id))
        return ranked[:limit]


def _weighted(rng: random.Random, weights: Mapping[str, float] | dict[str, float]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _lender(seed: int, index: int) -> MarketLender:
    rng = random.Random(f"{seed}:lender:{index}")
    archetype = _weighted(rng, ARCHETYPES)
    lender_type = rng.choice(sorted(KINDS))
    capital, loan_types = KINDS[lender_type]
    center = math.exp(rng.uniform(math.log(4e6), math.log(40e6)))
    low, high = center / math.exp(rng.uniform(1.0, 2.0)), center * math.exp(rng.uniform(1.0, 2.0))
    broad = archetype in ("stale", "specialist")
    if broad:
        assets = tuple(sorted(rng.sample(ASSETS, rng.randint(5, 7))))
        states: tuple[str, ...] = ()
        low, high = low / 1.5, high * 1.5
    else:
        assets = tuple(sorted(rng.sample(ASSETS, rng.randint(2, 4))))
        states = () if rng.random() < 0.3 else tuple(sorted(rng.sample(STATES, rng.randint(4, 7))))
    max_ltv, min_dscr = float(rng.choice((65, 70, 75, 80))), rng.choice((1.20, 1.25, 1.30))

    true_assets = {asset: 1.0 for asset in assets}
    true_states = {state: 1.0 for state in (states or STATES)}
    sweet_low, sweet_high = center / math.exp(rng.uniform(0.4, 0.9)), center * math.exp(rng.uniform(0.4, 0.9))
    answers, quotes = rng.uniform(0.75, 0.95), rng.uniform(0.45, 0.75)
    if archetype == "stale":
        quotes = rng.uniform(0.02, 0.06)
    elif archetype == "slow":
        answers = rng.uniform(0.2, 0.4)
    elif archetype == "specialist":
        if rng.random() < 0.6:  # one or two asset types
            core = set(rng.sample(assets, rng.randint(1, 2)))
            true_assets = {asset: 1.0 if asset in core else 0.05 for asset in assets}
        else:  # one region
            region = set(rng.sample(STATES, rng.randint(3, 4)))
            true_states = {state: 1.0 if state in region else 0.1 for state in STATES}
    elif archetype == "stretcher":
        for asset in rng.sample([a for a in ASSETS if a not in assets], rng.randint(1, 2)):
            true_assets[asset] = 0.9
        if states and rng.random() < 0.6:
            true_states = {state: 1.0 if state in states else 0.8 for state in STATES}
        sweet_high = high * rng.uniform(2.0, 4.0)  # larger loans than it states
    truth = TrueAppetite(archetype=archetype, answers=answers, quotes=quotes, assets=true_assets,
                         states=true_states, sweet_low=sweet_low, sweet_high=sweet_high,
                         max_ltv=max_ltv - rng.uniform(0, 6), min_dscr=min_dscr + rng.uniform(0, 0.1),
                         median_hours=math.exp(rng.uniform(math.log(4), math.log(72))))

    programs = []
    for number in range(rng.randint(1, 3)):
        kinds = loan_types if number == 0 else tuple(sorted(rng.sample(loan_types, rng.randint(1, len(loan_types)))))
        jitter = math.exp(rng.uniform(-0.3, 0.3))
        programs.append(StatedProgram(
            title=f"{' / '.join(k.replace('_', ' ').title() for k in kinds)} program {number + 1}",
            loan_types=kinds, asset_types=assets, states=states, min_loan=round(low * jitter, -4),
            max_loan=round(high * jitter, -4), max_ltv=max_ltv - 5 * number, min_dscr=min_dscr, capital_source=capital,
        ))
    return MarketLender(index=index, lender_type=lender_type, programs=tuple(programs), truth=truth,
                        reach=math.exp(rng.gauss(0, 0.7)))


def generate_lenders(*, seed: int, count: int) -> list[MarketLender]:
    """The market's lenders, stated and true (no database)."""
    return [_lender(seed, index) for index in range(count)]


def _deal_spec(rng: random.Random) -> DealSpec:
    return DealSpec(asset_type=rng.choices(ASSETS, weights=ASSET_WEIGHTS)[0], state=rng.choice(STATES),
                    loan_amount=round(math.exp(rng.uniform(math.log(2e6), math.log(60e6))), -4),
                    loan_type=_weighted(rng, LOAN_TYPE_WEIGHTS), ltv=rng.uniform(50, 80), dscr=rng.uniform(1.15, 1.9))


def _broker_picks(rng: random.Random, spec: DealSpec, lenders: list[MarketLender]) -> list[MarketLender]:
    """6-8 lenders, mostly from those whose stated programs take the deal (busy ones more often:
    a weighted draw without replacement, keys u ** (1 / reach)), one or two outside."""
    inside = [lender for lender in lenders if lender.stated_fit(spec)]
    outside = [lender for lender in lenders if not lender.stated_fit(spec)]
    wanted = rng.randint(6, 8)
    out = min(len(outside), rng.choice((0, 1, 1, 2)), wanted)
    by_reach = sorted(inside, key=lambda lender: -(rng.random() ** (1 / lender.reach)))
    picks = by_reach[: wanted - out]
    # Outside the box, brokers try lenders that state the asset type elsewhere first.
    near = sorted(outside, key=lambda lender: -(rng.random() ** (1 / (3.0 if any(
        spec.asset_type in p.asset_types for p in lender.programs) else 1.0))))
    return picks + near[: wanted - len(picks)]


@dataclass
class _Writer:
    """The rows of the history, gathered in memory and written in bulk."""

    account: Account
    lender_ids: dict[int, int]
    lenders: list[MarketLender]
    stages: dict[str, Stage]
    deals: list[tuple[DealSpec, str, str, dt.datetime]] = field(default_factory=list)  # spec, title, stage
    outcomes: list[list[tuple[int, dict, list[dict]]]] = field(default_factory=list)

    def add(self, rng: random.Random, spec: DealSpec, title: str, started: dt.datetime,
            placed: list[MarketLender], *, past: bool) -> None:
        rows: list[tuple[int, dict, list[dict]]] = []  # (market lender index, placement fields, quotes)
        quoted: list[int] = []
        for lender in placed:
            truth = lender.truth
            sent = started + dt.timedelta(hours=rng.uniform(1, 48))
            fields: dict = {"status": "sent", "sent_at": sent, "created_at": started}
            quotes: list[dict] = []
            rows.append((lender.index, fields, quotes))
            if rng.random() > truth.answers:
                if past:
                    fields["status"] = "no_response"
                continue
            answered = sent + dt.timedelta(hours=truth.median_hours * math.exp(rng.gauss(0, 0.6)))
            fields["first_response_at"] = answered
            # Given an answer, a quote with the rest of the true probability.
            if rng.random() > truth.quote_probability(spec) / truth.answers:
                fields.update(status="declined", decided_at=answered)
                continue
            fields["status"] = "quoted"
            quoted.append(len(rows) - 1)
            received = answered + dt.timedelta(days=rng.uniform(0.5, 10))
            for revision in range(1 if rng.random() < 0.8 else 2):
                at = received + dt.timedelta(days=3 * revision)
                quotes.append(quote_terms(rng, lender.lender_type, Decimal(str(spec.loan_amount)), at, at))
        stage = "in_market"
        if past:
            stage = "dead"
            if quoted and rng.random() < 0.5:
                stage = "closed"
                last = max(q["received_at"] for _, _, quotes in rows for q in quotes)
                decided = last + dt.timedelta(days=rng.uniform(1, 7))
                winner = rng.choices(quoted, weights=[self.lenders[rows[i][0]].truth.quotes for i in quoted])[0]
                for i, (_, fields, quotes) in enumerate(rows):
                    if i == winner:
                        fields.update(status="won", decided_at=decided)
                        quotes[-1]["winning"] = True
                    elif fields["status"] in ("sent", "quoted", "no_response"):
                        fields.update(status="lost", decided_at=decided)
        elif quoted:
            stage = "term_sheets"
        self.deals.append((spec, title, stage, started))
        self.outcomes.append(rows)

    def write(self) -> tuple[dict[int, DealSpec], int, int]:
        deal_rows = Deal.objects.bulk_create([
            Deal(account=self.account, title=title, loan_amount=Decimal(str(spec.loan_amount)),
                 loan_type=spec.loan_type, business_plan=spec.business_plan,
                 transaction_type="acquisition" if spec.loan_type != "permanent" else "refinance",
                 stage=self.stages[stage], description="Synthetic market (bench/market.py).")
            for spec, title, stage, _started in self.deals
        ])
        DealProperty.objects.bulk_create([
            DealProperty(deal=deal, name=f"Property of {deal.title}", state=spec.state, asset_type=spec.asset_type)
            for deal, (spec, *_rest) in zip(deal_rows, self.deals, strict=True)
        ])
        DealFinancials.objects.bulk_create([_financials(deal, spec) for deal, (spec, *_rest)
                                            in zip(deal_rows, self.deals, strict=True)])
        placements, quotes = [], []
        for deal, rows in zip(deal_rows, self.outcomes, strict=True):
            for index, fields, lender_quotes in rows:
                placement = Placement(deal=deal, lender_id=self.lender_ids[index], **fields)
                placements.append(placement)
                quotes += [(placement, terms) for terms in lender_quotes]
        Placement.objects.bulk_create(placements, batch_size=1000)
        TermSheet.objects.bulk_create([TermSheet(placement=placement, deal_id=placement.deal_id, **terms)
                                       for placement, terms in quotes], batch_size=1000)
        specs = {deal.pk: spec for deal, (spec, *_rest) in zip(deal_rows, self.deals, strict=True)}
        return specs, len(placements), len(quotes)


def _financials(deal: Deal, spec: DealSpec) -> DealFinancials:
    """Value from the LTV; NOI from the DSCR on a 30-year amortizing loan at DSCR_RATE."""
    loan = Decimal(str(spec.loan_amount))
    service = finance.amortizing_annual_payment(loan, DSCR_RATE, 360)
    return DealFinancials(deal=deal, estimated_value=round(loan * 100 / Decimal(str(spec.ltv)), -3),
                          in_place_noi=round(service * Decimal(str(spec.dscr)), -2), interest_rate=DSCR_RATE)


def _account(seed: int) -> tuple[Account, str]:
    """A new account of the market's own, and its tag (`s7`, then `s7-2`… when seeded again)."""
    tag, n = f"s{seed}", 1
    while Account.objects.filter(slug=f"synthetic-market-{tag}").exists():
        n += 1
        tag = f"s{seed}-{n}"
    return Account.objects.create(name=f"Synthetic market ({tag})", slug=f"synthetic-market-{tag}"), tag


def _write_lenders(tag: str, lenders: list[MarketLender]) -> dict[int, int]:
    rows = []
    for lender in lenders:
        row = Lender(name=f"Synthetic {tag} lender {lender.index + 1:03d}", category=CATEGORY,
                     website=f"https://lender-{lender.index + 1:03d}.{tag}.synthetic.example",
                     lender_types=[lender.lender_type], about="A lender of the back-test's synthetic market.")
        row.refresh_masks()  # as save() would (bulk_create skips it)
        rows.append(row)
    created = Lender.objects.bulk_create(rows)
    ids = {lender.index: row.pk for lender, row in zip(lenders, created, strict=True)}
    programs = []
    for lender in lenders:
        for stated in lender.programs:
            program = LenderProgram(
                lender_id=ids[lender.index], title=stated.title, loan_types=list(stated.loan_types),
                asset_types=list(stated.asset_types), sponsor_states=list(stated.states), positions=["senior"],
                min_loan_amount=Decimal(str(stated.min_loan)), max_loan_amount=Decimal(str(stated.max_loan)),
                max_ltv=Decimal(str(stated.max_ltv)), min_dscr=Decimal(str(stated.min_dscr)),
                capital_source_type=stated.capital_source, recourse_types=["non_recourse"])
            program.refresh_masks()
            programs.append(program)
    LenderProgram.objects.bulk_create(programs)
    return ids


@transaction.atomic
def seed_market(*, seed: int = 7, lenders: int = 60, past_deals: int = 300, test_deals: int = 40,
                split: dt.datetime = SPLIT, years: float = 3.0) -> Market:
    """Write the market (see the module docstring) into a new account; returns it with its truth."""
    account, tag = _account(seed)
    market = generate_lenders(seed=seed, count=lenders)
    lender_ids = _write_lenders(tag, market)
    stages = {stage.key: stage for stage in Stage.objects.filter(account=account).exclude(key="")}
    writer = _Writer(account=account, lender_ids=lender_ids, lenders=market, stages=stages)

    rng = random.Random(f"{seed}:history")
    history: dict[str, set[int]] = defaultdict(set)  # asset type -> lenders placed on such a deal before
    span = dt.timedelta(days=365 * years)
    for number in range(past_deals):
        spec = _deal_spec(rng)
        started = split - span + dt.timedelta(seconds=rng.uniform(0, (span - dt.timedelta(days=7)).total_seconds()))
        placed = _broker_picks(rng, spec, market)
        history[spec.asset_type].update(lender.index for lender in placed)
        writer.add(rng, spec, f"Past {spec.asset_type.replace('_', ' ')} loan in {spec.state} #{number + 1:04d}",
                   started, placed, past=True)

    rng = random.Random(f"{seed}:test")
    for number in range(test_deals):
        spec = _deal_spec(rng)
        started = split + dt.timedelta(days=rng.uniform(1, 60))
        placed = [lender for lender in market
                  if lender.stated_fit(spec) or lender.index in history[spec.asset_type]]
        writer.add(rng, spec, f"Test {spec.asset_type.replace('_', ' ')} loan in {spec.state} #{number + 1:03d}",
                   started, placed, past=False)

    specs, placements, term_sheets = writer.write()
    return Market(account=account, split=split, lenders=lenders, past_deals=past_deals, test_deals=test_deals,
                  placements=placements, term_sheets=term_sheets,
                  truth={lender_ids[lender.index]: lender.truth for lender in market},
                  directory={lender_ids[lender.index]: lender for lender in market}, deals=specs)
