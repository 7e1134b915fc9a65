"""Figures that add up everywhere they are shown (issue 39): "active" is one definition — not archived,
in an open stage (not closed, not dead) — in the pipeline's totals (REST, the home page, the admin's
stage list), the deal lists and their filters (REST, admin) and the home page's lists; and a deal with
a winner adds the winning quote's loan amount, not the amount asked ("after a $22.5M winner, Closing
still totals the $24M ask")."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from deals.models import Deal, Stage
from deals.pipeline.selectors import pipeline_get
from deals.placements import services as placement_services
from tests.admin_helpers import admin_client
from tests.deals.placements.helpers import deal_with_financials, place, quote
from tests.deals.workspace.test_home import HOME, member, panel
from tests.factories import DealFactory, LenderFactory

pytestmark = pytest.mark.django_db

STAGES = "/api/v1/pipeline/stages/"
DEALS = "/api/v1/deals/"


def stage(account, key: str) -> Stage:
    return Stage.objects.get(account=account, key=key)


@pytest.fixture
def book(account, user):
    """The issue's book: a $24M ask won at $22.5M (so in Closing), an open deal, a Dead deal, a
    Closed one and an archived one."""
    acquisition = deal_with_financials(account, title="Harbor Point", loan_amount=Decimal("24000000"),
                                       owner=user)
    winner = quote(place(acquisition, LenderFactory()), loan_amount=Decimal("22500000"))
    quote(place(acquisition, LenderFactory()), loan_amount=Decimal("24000000"))
    placement_services.term_sheet_select_winner(term_sheet=winner)
    return {
        "won_at": Deal.objects.get(pk=acquisition.pk),
        "open": DealFactory(account=account, title="Elm Court", loan_amount=Decimal("10000000"), owner=user),
        "dead": DealFactory(account=account, title="Dead deal", loan_amount=Decimal("4200000"),
                            stage=stage(account, "dead"), owner=user),
        "closed": DealFactory(account=account, title="Closed deal", loan_amount=Decimal("5000000"),
                              stage=stage(account, "closed"), owner=user),
        "archived": DealFactory(account=account, title="Archived deal", loan_amount=Decimal("7000000"),
                                archived=True, owner=user),
    }


def test_the_one_definition_of_active(book):
    from deals.pipeline.models import active_deals

    assert book["won_at"].stage.key == "closing"
    active = set(Deal.objects.active().values_list("title", flat=True))
    assert active == {"Harbor Point", "Elm Court"}
    assert set(Deal.objects.filter(active_deals()).values_list("title", flat=True)) == active


def test_the_pipeline_totals_count_active_deals_and_a_winner_s_amount(api, account, book):
    body = api.get(STAGES).json()
    by_key = {s["key"]: s for s in body["results"]}
    # A winner counts the winning quote's amount ($22.5M), not the $24M asked.
    assert (by_key["closing"]["deal_count"], by_key["closing"]["loan_total"]) == (1, 22500000)
    # A dead or closed stage's column counts its own deals; the active totals never do.
    assert (by_key["dead"]["deal_count"], by_key["dead"]["loan_total"]) == (1, 4200000)
    assert (by_key["closed"]["deal_count"], by_key["closed"]["loan_total"]) == (1, 5000000)
    assert (body["deal_count"], body["loan_total"]) == (2, 32500000)
    # The totals are the open stages' columns added up.
    open_ = [s for s in body["results"] if s["kind"] == "open"]
    assert body["deal_count"] == sum(s["deal_count"] for s in open_)
    assert body["loan_total"] == sum(s["loan_total"] for s in open_)
    pipeline = pipeline_get(account=account)
    assert (pipeline.deal_count, pipeline.loan_total) == (2, Decimal("32500000"))


def _titles(response) -> set[str]:
    assert response.status_code == 200, response.content
    return {d["title"] for d in response.json()["results"]}


def test_the_deal_list_lists_active_deals_and_filters_by_status(api, book):
    assert _titles(api.get(DEALS)) == {"Harbor Point", "Elm Court"}
    assert _titles(api.get(DEALS, {"status": "active"})) == {"Harbor Point", "Elm Court"}
    assert _titles(api.get(DEALS, {"status": "dead"})) == {"Dead deal"}
    assert _titles(api.get(DEALS, {"status": "closed"})) == {"Closed deal"}
    assert _titles(api.get(DEALS, {"status": "archived"})) == {"Archived deal"}
    assert _titles(api.get(DEALS, {"archived": "true"})) == {"Archived deal"}
    assert len(_titles(api.get(DEALS, {"status": "all"}))) == 5
    # Naming a stage lists that stage's deals (not archived): the Dead column's deal is found.
    assert _titles(api.get(DEALS, {"stage": "dead"})) == {"Dead deal"}
    # A status given decides over the older archived flag (a schema-valid pair is never refused: the fuzz).
    decided = api.get(DEALS, {"status": "all", "archived": "true"})
    assert decided.status_code == 200 and len(_titles(decided)) == 5
    assert api.get(DEALS, {"status": "gone"}).status_code == 400


def test_the_home_page_and_the_admin_lists_say_the_same(account, book):
    dana = member(account, "dana", "member", "view_deal", "change_deal", "view_stage", "view_placement",
                  "view_termsheet", "view_lendersearch")
    Deal.objects.update(owner=dana)
    client = admin_client(dana)
    html = client.get(HOME).content.decode()
    pipeline = panel(html, "pipeline")
    assert "2 active deals, $32,500,000" in pipeline, pipeline
    closing = re.search(r">Closing</a></td><td[^>]*>1</td><td[^>]*>([^<]+)<", pipeline)
    assert closing and closing.group(1) == "$22,500,000", pipeline
    owned = panel(html, "my-deals")
    assert "Harbor Point" in owned and "Elm Court" in owned
    assert "Dead deal" not in owned and "Closed deal" not in owned and "Archived deal" not in owned

    # The deal list's default (Active) shows the same deals the home page counts.
    listed = client.get(reverse("admin:deals_deal_changelist"))
    shown = {d.title for d in listed.context["cl"].result_list}
    assert shown == {"Harbor Point", "Elm Court"} and listed.context["cl"].full_result_count == 2
    dead = client.get(reverse("admin:deals_deal_changelist"), {"archived": "dead"})
    assert {d.title for d in dead.context["cl"].result_list} == {"Dead deal"}
    # Each stage of the home page links to a list that shows what its column counts.
    for link, count in re.findall(r'href="([^"]+)">[^<]+</a></td><td[^>]*>(\d+)</td>', pipeline):
        rows = client.get(link.replace("&amp;", "&")).context["cl"].result_list
        assert len(rows) == int(count), (link, count)

    # The stage list counts each stage's deals as the pipeline's columns do.
    stages = client.get(reverse("admin:deals_stage_changelist")).context["cl"].result_list
    assert {s.name: s.active for s in stages}["Dead"] == 1

    # The placements of a dead deal are not active work either.
    placements = client.get(reverse("admin:deals_placement_changelist")).context["cl"]
    assert {p.deal.title for p in placements.result_list} == {"Harbor Point"}
