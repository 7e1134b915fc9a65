"""The placement workflow is defined once (deals.placements.workflow) and every other listing of its
statuses and moves is derived from that table: the model's choices and constraints, the services'
sets, the serializers' enums, the OpenAPI enum, the MCP tools' enums and descriptions, the admin's
actions. And the table says what docs/placements.md says, move by move."""

from __future__ import annotations

import re
from pathlib import Path

from django.db.models import Q

from deals.placements import admin as placement_admin
from deals.placements import comparison, serializers
from deals.placements import workflow as wf
from deals.placements.models import Placement
from lev.enums import choices
from mcp_tools.server import get_server
from tests.mcp_helpers import value_schema

DOCS = Path(__file__).resolve().parents[3] / "docs" / "placements.md"


def _docs_table() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """status -> (next by update_placement / PATCH, next by the workflow) from the docs' table."""
    rows = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"`[a-z_]+`", cells[0]):
            manual = tuple(re.findall(r"`([a-z_]+)`", cells[2]))
            automatic = tuple(re.findall(r"^`([a-z_]+)`", cells[3]))
            rows[cells[0].strip("`")] = (manual, automatic)
    return rows


def test_the_table_is_the_one_docs_placements_md_shows():
    docs = _docs_table()
    assert set(docs) == set(wf.STATUSES)  # the docs list no_response with the open statuses
    for state in wf.WORKFLOW:
        manual, automatic = docs[state.value]
        assert state.manual == manual, state.value
        # `lost` "when another quote wins" is a move into lost, not out of it: not a next status.
        assert state.automatic == (() if state.value == "lost" else automatic), state.value


def test_the_sets_are_the_ones_the_workflow_has_always_had():
    # Written out (not read from the table): the moves and sets the rules and constraints rely on.
    assert wf.STATUSES == ("draft", "sent", "reviewing", "quoted", "declined", "no_response", "won", "lost",
                           "archived")
    assert wf.OPEN_STATUSES == ("draft", "sent", "reviewing", "quoted", "no_response")
    assert wf.QUOTABLE_STATUSES == ("sent", "reviewing", "quoted")
    assert wf.RESPONSE_STATUSES == ("reviewing", "quoted", "declined")
    assert wf.DECIDED_STATUSES == ("declined", "won", "lost")
    assert wf.FINAL_STATUSES == ("won", "archived")
    assert wf.NOT_COMPARED_STATUSES == ("declined", "archived")
    assert wf.UPDATE_STATUSES == ("sent", "reviewing", "declined", "no_response", "lost", "archived")
    assert wf.MANUAL_TRANSITIONS["lost"] == ("archived",)  # a known item: filing a lost placement away
    # allowed_next_statuses: only what PATCH / update_placement accept from there (issue 22: `quoted`
    # was listed, then refused); what another call makes happen is listed apart.
    assert {s: wf.next_statuses(s) for s in wf.STATUSES} == {
        "draft": ["sent", "archived"],
        "sent": ["reviewing", "declined", "no_response", "archived"],
        "reviewing": ["declined", "no_response", "archived"],
        "quoted": ["declined", "lost", "archived"],
        "declined": ["archived"],
        "no_response": ["reviewing", "declined", "lost", "archived"],
        "won": [],
        "lost": ["archived"],
        "archived": [],
    }
    assert {s: wf.automatic_statuses(s) for s in wf.STATUSES if wf.automatic_statuses(s)} == {
        "sent": ["quoted"], "reviewing": ["quoted"], "quoted": ["won"]}


def test_every_listed_next_status_is_one_the_update_takes():
    for status in wf.STATUSES:
        assert set(wf.next_statuses(status)) <= set(wf.UPDATE_STATUSES), status
        assert set(wf.next_statuses(status)) == set(wf.MANUAL_TRANSITIONS[status]), status
        assert not set(wf.automatic_statuses(status)) & set(wf.next_statuses(status)), status


def test_every_move_leads_to_a_status_of_the_table():
    for state in wf.WORKFLOW:
        assert set(state.manual) | set(state.automatic) <= set(wf.STATUSES), state.value
        assert state.value not in state.manual + state.automatic, state.value


def test_the_model_takes_its_choices_and_constraints_from_the_table():
    field = Placement._meta.get_field("status")
    assert field.choices == wf.STATUS_CHOICES == choices(wf.STATUSES)
    assert Placement.Status.values == list(wf.STATUSES)
    assert Placement.Status.NO_RESPONSE == "no_response" and Placement.Status.NO_RESPONSE.label == "No Response"
    constraints = {c.name: c for c in Placement._meta.constraints}
    assert constraints["uniq_open_placement_per_deal_lender"].condition == Q(status__in=wf.OPEN_STATUSES)
    assert constraints["placement_status_valid"].condition == Q(status__in=wf.STATUSES)


def test_the_serializers_and_the_comparison_take_their_statuses_from_the_table():
    update = serializers.PlacementUpdateInputSerializer().fields["status"]
    assert tuple(update.choices) == wf.UPDATE_STATUSES
    listing = serializers.PlacementListQuerySerializer().fields["status"]
    assert tuple(listing.choices) == wf.STATUSES
    assert comparison.EXCLUDED_PLACEMENT_STATUSES == wf.NOT_COMPARED_STATUSES


def test_the_openapi_enum_is_the_table():
    from django.conf import settings

    assert settings.SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]["PlacementStatusEnum"] == (
        "deals.placements.workflow.STATUS_CHOICES")


def _status_enum(schema: dict, defs: dict) -> list[str]:
    return value_schema(schema, defs)["enum"]


def _named(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z_]+", text) if word in wf.STATUSES}


def test_the_mcp_tools_take_their_enums_from_the_table_and_name_every_status():
    tools = {t["name"]: t for t in get_server().tools_list_result["tools"]}
    listing = tools["list_placements"]["inputSchema"]
    update = tools["update_placement"]["inputSchema"]
    assert _status_enum(listing["properties"]["status"], listing.get("$defs", {})) == list(wf.STATUSES)
    assert _status_enum(update["properties"]["status"], update.get("$defs", {})) == list(wf.UPDATE_STATUSES)
    # The prose an agent reads names the same statuses: every one where a tool lists them all, the
    # statuses update_placement takes (and the two it does not, saying where they come from).
    description = tools["list_placements"]["description"]
    assert _named(description[description.index("status:"):description.index("allowed_next_statuses")]) == set(
        wf.STATUSES)
    status_help = update["properties"]["status"]["description"]
    assert _named(status_help[:status_help.index(". ")]) == set(wf.UPDATE_STATUSES)
    assert _named(status_help[status_help.index(". "):]) == set(wf.STATUSES) - set(wf.UPDATE_STATUSES) - {"draft"}


def test_the_admin_offers_only_moves_a_person_may_ask_for():
    actions = placement_admin.PlacementAdmin.actions
    targets = {action.__name__.removeprefix("mark_") for action in actions}
    assert targets and targets <= set(wf.UPDATE_STATUSES)
