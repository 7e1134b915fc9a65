"""A realistic synthetic lender directory, deterministic for a given seed.

Used by `seed_demo` (hundreds of lenders) and by the ranking benchmark (up to 100k programs).

About six programs in ten state their pricing and terms (`program_terms`: a fixed rate or a spread over
an index, amortization, interest-only months, a min debt yield, a term), as a rate sheet would for the
lender's type, so the ranking's sizing differs between programs (a program's own rate, or the deal's).
Those terms come from a random stream of their own, keyed by the program (seed, lender website,
position), so the directory's stream, and the lenders and programs an existing directory has, stay the
same.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from decimal import Decimal

from django.db import transaction

from lenders.models import Lender, LenderProgram
from lenders.program_terms import TERM_FIELDS
from lev.enums import ASSET_TYPES, LENDER_TYPES, LOAN_TYPES, US_STATES

# Lender names combine a first word, an optional place word and a suffix for the lender's type
# ("Summit Creek National Bank"); past the first 40 x 36 lenders a region word goes in front
# ("Pacific Summit Creek Bank"). Every name is unique for the first 40 x 36 x 25 = 36,000 lenders
# (beyond that they repeat), and none has a number in it.
PREFIXES = ("First", "Summit", "Harbor", "Granite", "Pioneer", "Liberty", "Keystone", "Cedar", "Beacon",
            "Northstar", "Meridian", "Atlas", "Sterling", "Evergreen", "Ironwood", "Bluewater", "Redwood",
            "Pinnacle", "Cornerstone", "Heritage", "Lakeshore", "Frontier", "Capitol", "Oakmont")
FIRST_WORDS = (*PREFIXES, "Willow", "Magnolia", "Riverbend", "Kingsley", "Copper", "Prairie", "Bayview",
               "Highland", "Clearwater", "Fairmont", "Westfield", "Brookline", "Ashford", "Crescent", "Monarch",
               "Trinity")
# (No place word is part of a first word: no "Bayview Bay".)
PLACE_WORDS = ("", "Ridge", "Valley", "Point", "Vale", "Park", "Creek", "Hill", "Gate", "Peak", "Crossing",
               "Square", "Orchard", "Grove", "Landing", "Mesa", "Rock", "Springs", "Station", "Trail", "Terrace",
               "Woods", "Knoll", "Glen", "Haven", "Heights", "Forge", "Mill", "Bluff", "Cove", "Falls", "Hollow",
               "Meadow", "Pines", "Commons", "Plaza")
REGION_WORDS = ("Pacific", "Atlantic", "Southern", "Great Lakes", "Gulf Coast", "Mountain West", "New England",
                "Midwest", "Heartland", "Southwest", "Northwest", "Tri-State", "Bay Area", "Lone Star", "Sun Belt",
                "Piedmont", "Chesapeake", "Cascade", "Sierra", "Ozark", "Hudson Valley", "Coastal", "Central",
                "Continental")
# A step coprime to 40 x 36, so consecutive lenders differ in both words and no pair repeats.
NAME_STRIDE = 37
SUFFIXES = {
    "bank": ("Bank", "National Bank", "Savings Bank", "Bank & Trust"),
    "credit_union": ("Credit Union", "Federal Credit Union"),
    "life_company": ("Life Insurance", "Mutual Life"),
    "cmbs": ("Commercial Mortgage", "CMBS Lending"),
    "agency": ("Multifamily Finance", "Agency Lending"),
    "debt_fund": ("Real Estate Credit", "Debt Partners", "Credit Fund"),
    "private": ("Private Capital", "Capital Group", "Realty Finance"),
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

# What each kind of lender lends, as a broker expects it (issue 39: an agency lender offered full-recourse
# programs): the recourse a program may carry, and the loan types a debt fund's programs keep (bridge). The
# draws are made as before and then held to these (see `_coherent`), so a seed keeps its stream.
RECOURSE_OF_TYPE = {
    "agency": ("non_recourse",), "life_company": ("non_recourse",), "cmbs": ("non_recourse",),
    "debt_fund": ("non_recourse", "partial"), "bank": ("full", "partial"), "credit_union": ("full", "partial"),
    "private": ("full", "partial"), "sba": ("full",),
}
LOAN_TYPES_KEPT = {"debt_fund": ("heavy_bridge", "light_bridge")}


def _coherent(lender_type: str, recourse: set[str], loan_types: set[str]) -> tuple[list[str], list[str]]:
    """The drawn recourse and loan types held to what the lender type lends (RECOURSE_OF_TYPE,
    LOAN_TYPES_KEPT): what was drawn within it, else the type's first choice."""
    allowed = RECOURSE_OF_TYPE[lender_type]
    recourse_kept = sorted(recourse & set(allowed)) or [allowed[0]]
    kept_types = LOAN_TYPES_KEPT.get(lender_type)
    types_kept = sorted(loan_types if kept_types is None else (loan_types & set(kept_types)) or {kept_types[0]})
    return recourse_kept, types_kept


# Pricing and terms by lender type, for `program_terms`: fixed rate (low end range, percent), spread over
# which indexes (bps, low end range), amortization years, interest-only months and min debt yields
# (percent; None: not stated) it chooses from.
PRICED_SHARE = 0.6
PRICING = {
    "bank": {"fixed": (6.0, 7.1), "indexes": ("term_sofr_1m", "prime"), "spread": (225, 325),
             "amortization": (25, 25, 30), "io": (0, 0, 12), "debt_yield": (None, 9, 9.5, 10)},
    "credit_union": {"fixed": (6.2, 7.3), "indexes": (), "spread": None, "amortization": (20, 25),
                     "io": (0,), "debt_yield": (None, 9.5, 10)},
    "life_company": {"fixed": (5.1, 5.9), "indexes": (), "spread": None, "amortization": (25, 30, 30),
                     "io": (0, 24, 60), "debt_yield": (8, 8.5, 9)},
    "cmbs": {"fixed": (6.0, 6.9), "indexes": (), "spread": None, "amortization": (30,),
             "io": (0, 24, 60, 120), "debt_yield": (8, 8.5, 9, 9.5)},
    "agency": {"fixed": (5.3, 6.1), "indexes": ("sofr",), "spread": (175, 250), "amortization": (30, 30, 35),
               "io": (0, 12, 24, 60), "debt_yield": (None, None, 7.5, 8)},
    "debt_fund": {"fixed": None, "indexes": ("sofr", "term_sofr_1m"), "spread": (300, 450), "amortization": (None,),
                  "io": (24, 36), "debt_yield": (None, 6.5, 7, 7.5)},
    "private": {"fixed": None, "indexes": ("sofr", "prime"), "spread": (425, 625), "amortization": (None,),
                "io": (12, 24), "debt_yield": (None,)},
    "sba": {"fixed": None, "indexes": ("prime",), "spread": (225, 275), "amortization": (25,), "io": (0,),
            "debt_yield": (None,)},
}
# Backfill the terms of an existing directory seeded before programs had them, up to this many lenders
# (the demo's; a benchmark's directory of millions is seeded afresh instead).
TERMS_BACKFILL_MAX = 10_000

PROGRAM_TIERS = ("Core", "Growth", "Select", "Flex", "Prime")
# How a program title names each loan type it offers (tbd is never offered).
LOAN_TYPE_TITLES = {"construction": "Construction", "heavy_bridge": "Heavy Bridge", "light_bridge": "Light Bridge",
                    "permanent": "Permanent", "land": "Land", "predevelopment": "Predevelopment"}


def _money(value: float) -> Decimal:
    return Decimal(int(round(value, -4)))


def lender_name(index: int, suffix: str) -> str:
    """The name of the index-th demo lender: deterministic, unique (see FIRST_WORDS), no numbers."""
    base = len(FIRST_WORDS) * len(PLACE_WORDS)
    block, slot = divmod(index, base)
    first, place = divmod(slot * NAME_STRIDE % base, len(PLACE_WORDS))
    words = [FIRST_WORDS[first], PLACE_WORDS[place], suffix]
    if block:
        words.insert(0, REGION_WORDS[(block - 1) % len(REGION_WORDS)])
    return " ".join(w for w in words if w)


def program_title(tier: str, loan_types: list[str]) -> str:
    """A title naming exactly the loan types the program offers: "Core Light Bridge & Permanent Loans"."""
    names = [LOAN_TYPE_TITLES[t] for t in LOAN_TYPES if t in loan_types]
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " & " + names[-1]
    return f"{tier} {joined} Loans"


def _unused_title(tier: str, loan_types: list[str], taken: set[str]) -> str:
    """The program's title, with the next tier when another program of the lender has that title
    (a lender with more programs of one kind than there are tiers repeats one)."""
    start = PROGRAM_TIERS.index(tier)
    candidates = [program_title(PROGRAM_TIERS[(start + k) % len(PROGRAM_TIERS)], loan_types)
                  for k in range(len(PROGRAM_TIERS))]
    return next((title for title in candidates if title not in taken), candidates[0])


def program_terms(*, seed: int, website: str, position: int, lender_type: str, loan_types: list[str]) -> dict:
    """The stated pricing and terms of the lender's `position`-th program (model field -> value), from
    a stream of their own (see the module docstring); {} for a program that states none. Within
    lenders.program_terms' rules: a fixed program states no index or spread, a floating one its index."""
    rng = random.Random(f"{seed}:terms:{website}:{position}")
    if rng.random() >= PRICED_SHARE:
        return {}
    style = PRICING[lender_type]
    permanent = "permanent" in loan_types
    floating = style["spread"] is not None and (style["fixed"] is None or not permanent or rng.random() < 0.3)
    terms: dict = {}
    if floating:
        low = rng.randrange(style["spread"][0], style["spread"][1] + 1, 5)
        terms.update(rate_type="floating", rate_index=rng.choice(style["indexes"]), spread_min_bps=low,
                     spread_max_bps=low + rng.randrange(50, 176, 25))
        if terms["rate_index"] == "prime":  # prime sits about 3 points over SOFR: a smaller spread over it
            terms.update(spread_min_bps=low - 200, spread_max_bps=terms["spread_max_bps"] - 200)
    else:
        low = round(rng.uniform(*style["fixed"]), 2)
        terms.update(rate_type="fixed", fixed_rate_min=Decimal(f"{low:.3f}"),
                     fixed_rate_max=Decimal(f"{low + rng.choice((0.25, 0.5, 0.75)):.3f}"))
    amortization = rng.choice(style["amortization"])
    if amortization is not None and permanent:
        terms["amortization_years"] = amortization
        terms.update(term_months_min=60, term_months_max=rng.choice((60, 84, 120)))
    else:
        terms.update(term_months_min=12, term_months_max=rng.choice((24, 36, 48)))
    terms["interest_only_months"] = min(rng.choice(style["io"]), terms["term_months_max"])
    debt_yield = rng.choice(style["debt_yield"])
    if debt_yield is not None:
        terms["min_debt_yield"] = Decimal(f"{debt_yield:.2f}")
    return terms


def generate(count: int, *, seed: int = 7, programs: tuple[int, int] = (1, 4)
             ) -> Iterator[tuple[Lender, list[LenderProgram]]]:
    """Yield `count` unsaved lenders with their unsaved programs (masks filled in)."""
    rng = random.Random(seed)
    for index in range(count):
        lender_type = rng.choice(LENDER_TYPES)
        state = rng.choice(tuple(CITIES))
        # Draws in the original order (the first one no longer used), so a seed still gives the
        # same lenders, programs and activity as before the names and titles changed.
        rng.choice(PREFIXES)
        name = lender_name(index, rng.choice(SUFFIXES[lender_type]))
        lender = Lender(
            name=name, website=f"https://lender{index + 1:05d}.example.com", city=CITIES[state], state=state,
            about=f"{lender_type.replace('_', ' ').title()} lender headquartered in {CITIES[state]}.",
            lender_types=[lender_type], category="demo",
        )
        lender.refresh_masks()  # as save() would (bulk_create skips it)
        loan_types, min_range, max_range, capital, ltv_range, dscr_range = PROFILES[lender_type]
        program_list: list[LenderProgram] = []
        for _ in range(rng.randint(*programs)):
            regional = lender_type in ("bank", "credit_union") or rng.random() < 0.4
            states = sorted(set([state, *rng.sample(US_STATES, rng.randint(2, 8))])) if regional else []
            assets = sorted(set(rng.sample(ASSET_TYPES[:10], rng.randint(1, 5))))
            if lender_type == "agency":
                assets = sorted({"multifamily", *[a for a in assets if a.endswith("housing")]})
            tier = rng.choice(PROGRAM_TIERS)
            rng.choice(loan_types)  # drawn as before (see above); the title names the program's own types
            drawn_types = set(rng.sample(loan_types, rng.randint(1, len(loan_types))))
            recourse = set(rng.sample(("full", "partial", "non_recourse"), rng.randint(1, 2)))
            recourse_types, program_loan_types = _coherent(lender_type, recourse, drawn_types)
            title = _unused_title(tier, program_loan_types, {p.title for p in program_list})
            if "land" in program_loan_types:
                assets = sorted({*assets, "land"})  # land loans are made on land
            program = LenderProgram(
                title=title,
                loan_types=program_loan_types,
                recourse_types=recourse_types,
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
                **program_terms(seed=seed, website=lender.website, position=len(program_list),
                                lender_type=lender_type, loan_types=program_loan_types),
            )
            program.refresh_masks()  # as save() would (bulk_create skips it)
            program_list.append(program)
        yield lender, program_list


@transaction.atomic
def seed_directory(count: int, *, seed: int = 7, batch: int = 2000, programs: tuple[int, int] = (1, 4),
                   max_programs: int | None = None) -> tuple[int, int]:
    """Create the first `count` lenders of the stream that are not there yet (matched by website).

    With `max_programs`, stop once that many programs were created (the benchmark sizes its
    directories by programs). Returns (lenders created, programs created). Running it twice
    creates nothing the second time. Lenders seeded by an older version of this module get
    today's names and program titles (see `_rename`).
    """
    existing = dict(Lender.objects.filter(category="demo").values_list("website", "name"))
    renames: dict[str, tuple[str, list[str]]] = {}
    # A directory seeded before programs stated terms (none of its programs does): given them once.
    backfill = (0 < len(existing) <= TERMS_BACKFILL_MAX and not LenderProgram.objects.filter(
        lender__category="demo").exclude(rate_type="").exists())
    terms: dict[str, list[dict]] = {}
    made_lenders = made_programs = 0
    pending: list[tuple[Lender, list[LenderProgram]]] = []

    def flush() -> None:
        nonlocal made_lenders, made_programs
        if not pending:
            return
        lenders = Lender.objects.bulk_create([lender for lender, _ in pending], batch_size=batch)
        programs_out: list[LenderProgram] = []
        for lender, (_, programs_) in zip(lenders, pending, strict=True):
            for program in programs_:
                program.lender_id = lender.pk
                programs_out.append(program)
        LenderProgram.objects.bulk_create(programs_out, batch_size=batch)
        made_lenders += len(pending)
        made_programs += len(programs_out)
        pending.clear()

    queued = 0
    for lender, programs_ in generate(count, seed=seed, programs=programs):
        if lender.website in existing:
            if backfill:
                terms[lender.website] = [{name: getattr(program, name) for name in TERM_FIELDS}
                                         for program in programs_]
            if existing[lender.website] != lender.name:
                renames[lender.website] = (lender.name, [program.title for program in programs_])
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
    _rename(renames, batch=batch)
    _backfill_terms(terms, batch=batch)
    return made_lenders, made_programs


def _backfill_terms(terms: dict[str, list[dict]], *, batch: int) -> None:
    """Give the programs of existing lenders (website -> each program's terms, in creation order) the
    terms the generator gives them today, where a program states none (a program's own are kept)."""
    websites = list(terms)
    for start in range(0, len(websites), batch):
        chunk = websites[start:start + batch]
        programs = LenderProgram.objects.filter(lender__category="demo", lender__website__in=chunk).order_by(
            "lender_id", "id").select_related("lender").only("id", "lender__website", *TERM_FIELDS)
        changed, position, last = [], 0, None
        for program in programs:
            position = position + 1 if program.lender_id == last else 0
            last = program.lender_id
            wanted = terms[program.lender.website]
            if position >= len(wanted) or any(getattr(program, name) not in (None, "") for name in TERM_FIELDS):
                continue
            for name, value in wanted[position].items():
                setattr(program, name, value)
            changed.append(program)
        LenderProgram.objects.bulk_update(changed, list(TERM_FIELDS), batch_size=batch)


def _rename(renames: dict[str, tuple[str, list[str]]], *, batch: int) -> None:
    """Give lenders seeded before names and titles read like real ones ("First Bank 00001",
    "Core Permanent Program 1") their current name and program titles: website -> (name, titles
    in creation order). A database seeded yesterday then shows the same directory as a new one."""
    websites = list(renames)
    for start in range(0, len(websites), batch):
        lenders = list(Lender.objects.filter(category="demo", website__in=websites[start:start + batch])
                       .only("id", "website", "name"))
        for lender in lenders:
            lender.name = renames[lender.website][0]
        Lender.objects.bulk_update(lenders, ["name"])
        titles = {lender.pk: renames[lender.website][1] for lender in lenders}
        programs: dict[int, list[LenderProgram]] = {}
        for program in LenderProgram.objects.filter(lender_id__in=titles).order_by("id").only("id", "lender_id",
                                                                                               "title"):
            programs.setdefault(program.lender_id, []).append(program)
        changed = []
        for lender_id, lender_programs in programs.items():
            for program, title in zip(lender_programs, titles[lender_id], strict=False):
                program.title = title
                changed.append(program)
        LenderProgram.objects.bulk_update(changed, ["title"])
