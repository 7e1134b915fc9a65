"""A realistic synthetic lender directory, deterministic for a given seed.

Used by `seed_demo` (hundreds of lenders) and by the ranking benchmark (up to 100k programs).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from decimal import Decimal

from django.db import transaction

from lenders.models import Lender, LenderProgram
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
            program_loan_types = sorted(set(rng.sample(loan_types, rng.randint(1, len(loan_types)))))
            title = _unused_title(tier, program_loan_types, {p.title for p in program_list})
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
    return made_lenders, made_programs


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
