"""The demo directory reads like a real one (issue #11): lender names without numbers, program
titles that name exactly the loan types offered; and it stays deterministic and idempotent."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command

from deals.demo import directory as demo
from lenders.models import Lender, LenderActivity, LenderProgram
from lev.enums import LOAN_TYPES

pytestmark = pytest.mark.django_db


def snapshot() -> tuple[list, list, list]:
    """Everything the seed writes, keyed by what is stable across runs (the website), not row ids."""
    lenders = list(Lender.objects.order_by("website").values_list(
        "website", "name", "city", "state", "about", "lender_types", "category", "lender_type_mask"))
    programs = list(LenderProgram.objects.order_by("lender__website", "id").values_list(
        "lender__website", "title", "loan_types", "recourse_types", "min_loan_amount", "max_loan_amount",
        "capital_source_type", "positions", "sponsor_states", "asset_types", "max_ltv", "min_dscr", "status",
        "loan_type_mask", "state_mask", "asset_type_mask"))
    activity = list(LenderActivity.objects.order_by("lender__website", "state").values_list(
        "lender__website", "state", "quotes_90d", "closings_90d", "avg_response_hours", "score"))
    return lenders, programs, activity


def seed(lenders: int = 120) -> None:
    call_command("seed_demo", "--lenders", str(lenders), stdout=StringIO())


def test_seeding_twice_gives_identical_data_and_a_fresh_database_the_same_again():
    seed()
    first = snapshot()
    assert len(first[0]) == 120 and len(first[1]) >= 120 and first[2]
    seed()
    assert snapshot() == first
    Lender.objects.all().delete()
    seed()
    assert snapshot() == first


def test_every_program_title_names_exactly_the_loan_types_it_offers():
    seed(400)
    programs = list(LenderProgram.objects.values_list("lender_id", "title", "loan_types"))
    assert len(programs) > 400
    for _lender, title, loan_types in programs:
        for loan_type, words in demo.LOAN_TYPE_TITLES.items():
            named = re.search(rf"\b{words}\b", title) is not None
            assert named == (loan_type in loan_types), (title, loan_types)
        assert title.split()[0] in demo.PROGRAM_TIERS and title.endswith(" Loans"), title
        assert not re.search(r"[0-9]", title), title
    assert set(demo.LOAN_TYPE_TITLES) == set(LOAN_TYPES) - {"tbd"}
    # A lender's programs never share a title.
    assert len({(lender, title) for lender, title, _ in programs}) == len(programs)


def test_lender_names_read_like_real_lenders_and_are_unique():
    seed(400)
    names = list(Lender.objects.values_list("name", flat=True))
    assert len(set(names)) == len(names) == 400
    assert not [name for name in names if re.search(r"[0-9]", name)]
    assert not [f for f in demo.FIRST_WORDS for p in demo.PLACE_WORDS if p and p.lower() in f.lower()]
    # Far past the demo's size (the ranking benchmark seeds tens of thousands), still no repeats.
    many = [demo.lender_name(index, "Bank") for index in range(36_000)]
    assert len(set(many)) == len(many)
    assert not any(re.search(r"[0-9]", name) for name in many[::97])


def test_a_directory_seeded_with_the_old_names_gets_the_current_ones():
    seed()
    current = snapshot()
    # What an older version of the seed wrote: numbered names and titles of one loan type.
    for lender in Lender.objects.order_by("website")[:30]:
        Lender.objects.filter(pk=lender.pk).update(name=f"First Bank {lender.pk:05d}")
        LenderProgram.objects.filter(lender=lender).update(title="Core Permanent Program 1")
    assert snapshot() != current
    seed()
    assert snapshot() == current


def test_bulk_seeded_rows_carry_the_derived_fields_save_would_compute():
    """bulk_create skips save(), where the masks and float copies are computed: the seed computes
    them itself, so a seeded row equals the same row saved one by one."""
    seed(60)
    derived = ("loan_type_mask", "position_mask", "state_mask", "asset_type_mask",
               "min_loan_float", "max_loan_float", "max_ltv_float", "min_dscr_float")
    for lender in Lender.objects.all():
        stored = lender.lender_type_mask
        lender.refresh_masks()
        assert stored == lender.lender_type_mask != 0, lender.lender_types
    programs = list(LenderProgram.objects.all())
    assert len(programs) >= 60
    for program in programs:
        stored = [getattr(program, field) for field in derived]
        program.refresh_masks()
        assert stored == [getattr(program, field) for field in derived], program.pk


def test_some_programs_state_pricing_and_terms_within_the_rules():
    """About six programs in ten state terms (a fixed rate, or a spread over an index), each within
    lenders.program_terms' rules; from a stream of their own, so the directory's lenders stay the same."""
    from lenders.program_terms import TERM_FIELDS, field_errors, pair_errors

    programs = [program for _lender, programs in demo.generate(300, seed=7) for program in programs]
    priced = [p for p in programs if p.rate_type]
    assert 0.45 < len(priced) / len(programs) < 0.75
    assert {p.rate_type for p in priced} == {"fixed", "floating"}
    assert {p.rate_index for p in priced if p.rate_type == "floating"} >= {"sofr", "prime"}
    for program in programs:
        values = {name: getattr(program, name) for name in (*TERM_FIELDS, "max_ltv", "min_dscr")}
        assert not field_errors(values) and not pair_errors(values), values
    # Another program's terms are drawn from the program's own key, not the directory's stream.
    again = demo.program_terms(seed=7, website="https://lender00001.example.com", position=0,
                               lender_type="agency", loan_types=["permanent"])
    assert again == demo.program_terms(seed=7, website="https://lender00001.example.com", position=0,
                                       lender_type="agency", loan_types=["permanent"])


def test_a_directory_seeded_before_programs_had_terms_gets_them():
    from lenders.program_terms import TERM_FIELDS

    seed()
    current = snapshot(), list(LenderProgram.objects.order_by("lender__website", "id").values_list(*TERM_FIELDS))
    LenderProgram.objects.update(rate_type="", rate_index="", spread_min_bps=None, spread_max_bps=None,
                                 fixed_rate_min=None, fixed_rate_max=None, term_months_min=None, term_months_max=None,
                                 amortization_years=None, interest_only_months=None, min_debt_yield=None)
    seed()
    assert (snapshot(), list(LenderProgram.objects.order_by("lender__website", "id").values_list(*TERM_FIELDS))
            ) == current


def test_each_kind_of_lender_lends_as_its_kind_does():
    # Issue 39: an agency lender offered full-recourse programs. Agency, life company and CMBS lenders lend
    # non-recourse; banks, credit unions and private lenders with recourse; debt funds bridge loans.
    seen: dict[str, set] = {}
    for lender, programs in demo.generate(600, seed=7):
        kind = lender.lender_types[0]
        for program in programs:
            seen.setdefault(kind, set()).update(program.recourse_types)
            if kind == "debt_fund":
                assert set(program.loan_types) <= {"heavy_bridge", "light_bridge"}, program.title
                assert "Bridge" in program.title
    assert seen["agency"] == seen["life_company"] == seen["cmbs"] == {"non_recourse"}
    assert seen["bank"] == seen["credit_union"] == seen["private"] == {"full", "partial"}
    assert seen["debt_fund"] == {"non_recourse", "partial"} and seen["sba"] == {"full"}


def test_a_deal_team_never_reads_the_directorys_category(client):
    from tests.admin_helpers import staff_user

    seed(20)
    lender = Lender.objects.order_by("id").first()
    client.force_login(staff_user("pat", "view_lender", "view_lenderprogram"))
    page = client.get(f"/admin/lenders/lender/{lender.pk}/change/").content.decode()
    assert lender.name in page and "Category" not in page and ">demo<" not in page
    listing = client.get("/admin/lenders/lender/").content.decode()
    assert "By category" not in listing and "category=" not in listing
