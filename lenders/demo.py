"""A realistic synthetic lender directory, deterministic for a given seed.

Used by `seed_demo` (hundreds of lenders) and by the ranking benchmark (up to 100k programs).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from decimal import Decimal

from django.db import transaction

from lenders.models import Lender, LenderActivity, LenderProgram
from lenders.ranking.scoring import activity_score
from lev.enums import ASSET_TYPES, LENDER_TYPES, US_STATES

PREFIXES = ("First", "Summit", "Harbor", "Granite", "Pioneer", "Liberty", "Keystone", "Cedar", "Beacon",
            "Northstar", "Meridian", "Atlas", "Sterling", "Evergreen", "Ironwood", "Bluewater", "Redwood",
            "Pinnacle", "Cornerstone", "Heritage", "Lakeshore", "Frontier", "Capitol", "Oakmont")
SUFFIXES = {
    "bank": ("Bank", "National Bank", "Savings Bank", "Bank & Trust"),
    "credit_union": ("Credit Union", "Federal Credit Union"),
    "life_company": ("Life Insurance", "Mutual Life"),
    "cmbs": ("Commercial Mortgage", "CMBS Lending"),
    "agency": ("Multifamily Finance", "Agency Lending"),
    "debt_fund": ("Real Estate Credit", "Debt Partners", "Credit Fund"),
    "private": ("Private Capital", "Capital Group", "Bridge Lending"),
    "sba": ("Business Lending",),
}
CITIES = {"NY": "New York", "CA": "Los Angeles", "TX": "Dallas", "FL": "Miami", "IL": "Chicago",
          "GA": "Atlanta", "MA": "Boston", "WA": "Seattle", "CO": "Denver", "AZ": "Phoenix",
          "NC": "Charlotte", "OH": "Columbus", "PA": "Philadelphia", "TN": "Nashville", "MN": "Minneapolis"}
PROFILES = {
    # lender type: (loan types, min loan range, max loan range, capital source, max LTV, min DSCR)
    "bank": (("permanent", "construction", "light_bridge"), (1e6, 5e6), (10e6, 60e6), "balance_sheet",
             (65, 75), (1.20, 1.35)),
    "credit_union": (("permanent", "light_bridge"), (5e5, 2e6), (5e6, 20e6), "balance_sheet",
                     (65, 75), (1.20, 1.35)),
    "life_company": (("permanent",), (5e6, 15e6), (50e6, 250e6), "balance_sheet", (55, 65), (1.30, 1.50)),
    "cmbs": (("permanent",), (2e6, 5e6), (40e6, 150e6), "securitized", (65, 75), (1.25, 1.40)),
    "agency": (("permanent",), (1e6, 5e6), (50e6, 200e6), "agency", (75, 80), (1.20, 1.30)),
    "debt_fund": (("heavy_bridge", "light_bridge", "construction", "predevelopment"), (5e6, 15e6),
                  (50e6, 300e6), "fund", (70, 85), (1.00, 1.15)),
    "private": (("heavy_bridge", "light_bridge", "land", "predevelopment", "construction"), (5e5, 3e6),
                (10e6, 50e6), "private", (65, 80), (1.00, 1.15)),
    "sba": (("permanent", "construction"), (2.5e5, 1e6), (5e6, 15e6), "balance_sheet", (80, 90), (1.15, 1.25)),
}


def _money(value: float) -> Decimal:
    return Decimal(int(round(value, -4)))


def generate(count: int, *, seed: int = 7, programs: tuple[int, int] = (1, 4)
             ) -> Iterator[tuple[Lender, list[LenderProgram]]]:
    """Yield `count` unsaved lenders with their unsaved programs (masks filled in)."""
    rng = random.Random(seed)
    for index in range(count):
        lender_type = rng.choice(LENDER_TYPES)
        state = rng.choice(tuple(CITIES))
        name = f"{rng.choice(PREFIXES)} {rng.choice(SUFFIXES[lender_type])} {index + 1:05d}"
        lender = Lender(
            name=name, website=f"https://lender{index + 1:05d}.example.com", city=CITIES[state], state=state,
            about=f"{lender_type.replace('_', ' ').title()} lender headquartered in {CITIES[state]}.",
            lender_types=[lender_type], category="demo",
        )
        lender.lender_type_mask = 1 << LENDER_TYPES.index(lender_type)
        loan_types, min_range, max_range, capital, ltv_range, dscr_range = PROFILES[lender_type]
        program_list = []
        for n in range(rng.randint(*programs)):
            regional = lender_type in ("bank", "credit_union") or rng.random() < 0.4
            states = sorted(set([state, *rng.sample(US_STATES, rng.randint(2, 8))])) if regional else []
            assets = sorted(set(rng.sample(ASSET_TYPES[:10], rng.randint(1, 5))))
            if lender_type == "agency":
                assets = sorted({"multifamily", *[a for a in assets if a.endswith("housing")]})
            # Drawn in the original order, so a seed gives the same directory as before.
            title = (f"{rng.choice(('Core', 'Growth', 'Select', 'Flex', 'Prime'))} "
                     f"{rng.choice(loan_types).replace('_', ' ').title()} Program {n + 1}")
            program_loan_types = sorted(set(rng.sample(loan_types, rng.randint(1, len(loan_types)))))
            if "land" in program_loan_types:
                assets = sorted({*assets, "land"})  # land loans are made on land
            program = LenderProgram(
                title=title,
                loan_types=program_loan_types,
                recourse_types=sorted(set(rng.sample(("full", "partial", "non_recourse"), rng.randint(1, 2)))),
                min_loan_amount=_money(rng.uniform(*min_range)),
                max_loan_amount=_money(rng.uniform(*max_range)),
                capital_source_type=capital,
                positions=(["senior"] if rng.random() < 0.85
                           else sorted({"senior", rng.choice(("mezzanine", "preferred_equity"))})),
                sponsor_states=states,
                asset_types=assets,
                max_ltv=Decimal(rng.randint(*ltv_range)),
                min_dscr=Decimal(str(round(rng.uniform(*dscr_range), 2))),
                status=LenderProgram.Status.ACTIVE if rng.random() < 0.92 else LenderProgram.Status.INACTIVE,
            )
            program.refresh_masks()
            program_list.append(program)
        yield lender, program_list


@transaction.atomic
def seed_directory(count: int, *, seed: int = 7, batch: int = 2000, programs: tuple[int, int] = (1, 4),
                   with_activity: bool = True, max_programs: int | None = None) -> tuple[int, int]:
    """Create the first `count` lenders of the stream that are not there yet (matched by website).

    With `max_programs`, stop once that many programs were created (the benchmark sizes its
    directories by programs). Returns (lenders created, programs created). Running it twice
    creates nothing the second time.
    """
    existing = set(Lender.objects.filter(category="demo").values_list("website", flat=True))
    rng = random.Random(seed + 1)
    made_lenders = made_programs = 0
    pending: list[tuple[Lender, list[LenderProgram]]] = []

    def flush() -> None:
        nonlocal made_lenders, made_programs
        if not pending:
            return
        lenders = Lender.objects.bulk_create([lender for lender, _ in pending], batch_size=batch)
        programs_out: list[LenderProgram] = []
        activity: list[LenderActivity] = []
        for lender, (_, programs_) in zip(lenders, pending, strict=True):
            for program in programs_:
                program.lender_id = lender.pk
                programs_out.append(program)
            if with_activity:
                for market in sorted({lender.state, *[s for p in programs_ for s in p.sponsor_states[:2]]}):
                    quotes = rng.randint(0, 40)
                    closings = rng.randint(0, quotes // 3 + 1)
                    hours = round(rng.uniform(2, 96), 1)
                    activity.append(LenderActivity(
                        lender_id=lender.pk, state=market, quotes_90d=quotes, closings_90d=closings,
                        avg_response_hours=hours, score=activity_score(quotes, closings, hours),
                    ))
        LenderProgram.objects.bulk_create(programs_out, batch_size=batch)
        LenderActivity.objects.bulk_create(activity, batch_size=batch, ignore_conflicts=True)
        made_lenders += len(pending)
        made_programs += len(programs_out)
        pending.clear()

    queued = 0
    for lender, programs_ in generate(count, seed=seed, programs=programs):
        if lender.website in existing:
            continue
        if max_programs is not None:
            programs_ = programs_[: max_programs - queued]
            if not programs_:
                break
        queued += len(programs_)
        pending.append((lender, programs_))
        if len(pending) >= batch:
            flush()
    flush()
    return made_lenders, made_programs
