"""Confirmations through the client (issue 21, `mcp_tools.confirmations`): in 2026-07-28 a client that
declared form elicitation is asked before archive_deal, select_winning_term_sheet, remove_term_sheet and
update_placement to declined / lost / archived; accept runs the call, decline changes nothing and says
so; the requestState cannot be forged, moved to another credential or call, and lapses. Any other
client gets today's behaviour. Raw HTTP through the whole Django stack, then the official 2.x client."""

from __future__ import annotations

import json
import subprocess
import time
from decimal import Decimal

import pytest
from django.core import signing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deals.models import Deal
from deals.placements.models import Placement, TermSheet
from deals.placements.services import placements_create, term_sheet_add
from lev.accounts.services import api_key_create
from mcp_tools import confirmations
from mcp_tools.metrics import TOOL_CALLS
from tests.factories import DealFactory, LenderFactory, MembershipFactory, UserFactory
from tests.mcp_tools.test_modern_era import META, legacy, send
from tests.mcp_tools.test_sdk2_client import ROOT, sdk2_python
from tests.oauth.flow import Flow, public_client

pytestmark = pytest.mark.django_db

FORM = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


def call(key: str, tool: str, arguments: dict, *, meta: dict = FORM, **extra):
    return send(key, "tools/call", {"name": tool, "arguments": arguments, **extra}, meta=meta)


def result_of(response) -> dict:
    assert response.status_code == 200, response.content
    return response.json()["result"]


def asked(response) -> tuple[str, str]:
    """The question of an input_required answer and its state."""
    result = result_of(response)
    assert result["resultType"] == "input_required", result
    form = result["inputRequests"][confirmations.KEY]
    assert form["method"] == "elicitation/create"
    assert form["params"]["mode"] == "form"
    schema = form["params"]["requestedSchema"]
    assert schema["required"] == ["confirm"] and schema["properties"]["confirm"]["type"] == "boolean"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "lev"
    return form["params"]["message"], result["requestState"]


def answer(action: str, confirm: bool | None = None) -> dict:
    reply: dict = {"action": action}
    if confirm is not None:
        reply["content"] = {"confirm": confirm}
    return {confirmations.KEY: reply}


def error_of(response, code: int = -32602) -> str:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"]["code"] == code and "result" not in body, body
    return body["error"]["message"]


@pytest.fixture
def deal(account):
    return DealFactory(account=account, title="Harbor Point")


@pytest.fixture
def quote(deal):
    placement = placements_create(deal=deal, lender_ids=[LenderFactory(name="Granite Bank").id], send=True).created[0]
    sheet = term_sheet_add(placement=placement, data={"loan_amount": Decimal("12500000"), "rate_type": "fixed",
                                                      "fixed_rate": Decimal("6.125")})
    return sheet


def test_archive_asks_the_person_and_runs_only_when_they_accept(api_key, deal):
    message, state = asked(call(api_key, "archive_deal", {"deal_id": deal.id}))
    assert "Harbor Point" in message and "cannot be changed or restored" in message
    deal.refresh_from_db()
    assert deal.archived_at is None  # asking changes nothing

    done = result_of(call(api_key, "archive_deal", {"deal_id": deal.id}, inputResponses=answer("accept", True),
                          requestState=state))
    assert done["resultType"] == "complete" and done["isError"] is False
    assert done["structuredContent"]["deal"]["id"] == deal.id
    deal.refresh_from_db()
    assert deal.archived_at is not None


@pytest.mark.parametrize(("action", "confirm", "word"), [("decline", None, "declined"), ("cancel", None, "cancelled"),
                                                          ("accept", False, "declined")])
def test_a_declined_confirmation_changes_nothing_and_says_so(api_key, deal, action, confirm, word):
    _message, state = asked(call(api_key, "archive_deal", {"deal_id": deal.id}))
    done = result_of(call(api_key, "archive_deal", {"deal_id": deal.id}, inputResponses=answer(action, confirm),
                          requestState=state))
    assert done["isError"] is False and done["resultType"] == "complete"
    payload = done["structuredContent"]
    assert payload["changed"] is False and payload["confirmed"] is False
    assert payload["message"].startswith(f"Nothing changed: the person {word} the confirmation to archive the deal")
    assert "Harbor Point" in payload["message"]
    deal.refresh_from_db()
    assert deal.archived_at is None


def test_clients_that_cannot_show_a_form_get_todays_behaviour(api_key, account):
    no_elicitation, url_only = DealFactory(account=account), DealFactory(account=account)
    handshake = DealFactory(account=account)
    ran = result_of(call(api_key, "archive_deal", {"deal_id": no_elicitation.id}, meta=META))
    assert ran["isError"] is False and ran["structuredContent"]["deal"]["id"] == no_elicitation.id
    url_meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}}}
    assert result_of(call(api_key, "archive_deal", {"deal_id": url_only.id}, meta=url_meta))["isError"] is False
    old = legacy(api_key, "tools/call", {"name": "archive_deal", "arguments": {"deal_id": handshake.id}})
    assert old.status_code == 200 and old.json()["result"]["isError"] is False
    assert Deal.objects.filter(pk__in=[no_elicitation.pk, url_only.pk, handshake.pk],
                               archived_at__isnull=False).count() == 3


def test_a_missing_answer_asks_again_and_a_lapsed_state_too(api_key, deal):
    _message, state = asked(call(api_key, "archive_deal", {"deal_id": deal.id}))
    asked(call(api_key, "archive_deal", {"deal_id": deal.id}, requestState=state))
    asked(call(api_key, "archive_deal", {"deal_id": deal.id}, requestState=state, inputResponses={"other": {}}))

    class Earlier(signing.TimestampSigner):
        def timestamp(self) -> str:  # signed an hour ago: past STATE_TTL_SECONDS
            return signing.b62_encode(int(time.time()) - 3600)

    payload = signing.loads(state, salt="lev.mcp.confirmations")
    lapsed = Earlier(salt="lev.mcp.confirmations").sign_object(payload, compress=True)
    asked(call(api_key, "archive_deal", {"deal_id": deal.id}, inputResponses=answer("accept", True),
               requestState=lapsed))
    deal.refresh_from_db()
    assert deal.archived_at is None


def test_a_state_that_is_forged_or_moved_is_refused(api_key, user, account, deal):
    other_deal = DealFactory(account=account)
    _message, state = asked(call(api_key, "archive_deal", {"deal_id": deal.id}))
    yes = answer("accept", True)
    forged = state[:-3] + ("AAA" if not state.endswith("AAA") else "BBB")
    assert "not issued by this server" in error_of(call(api_key, "archive_deal", {"deal_id": deal.id},
                                                        inputResponses=yes, requestState=forged))
    assert "must be the string" in error_of(call(api_key, "archive_deal", {"deal_id": deal.id},
                                                 inputResponses=yes, requestState=12))
    # The same person's other key, another call, another tool: each refused.
    _key, second_key = api_key_create(user=user, account=account, name="second")
    assert "another credential" in error_of(call(second_key, "archive_deal", {"deal_id": deal.id},
                                                 inputResponses=yes, requestState=state))
    assert "another call" in error_of(call(api_key, "archive_deal", {"deal_id": other_deal.id},
                                           inputResponses=yes, requestState=state))
    placement_state = signing.dumps({**signing.loads(state, salt="lev.mcp.confirmations")},
                                    salt="lev.mcp.confirmations", compress=True)
    assert "another call" in error_of(call(api_key, "remove_term_sheet", {"term_sheet_id": 1},
                                           inputResponses=yes, requestState=placement_state))
    # An answer that is no ElicitResult.
    assert "ElicitResult" in error_of(call(api_key, "archive_deal", {"deal_id": deal.id},
                                           inputResponses={"confirm": {"action": "maybe"}}, requestState=state))
    assert "must be an object" in error_of(call(api_key, "archive_deal", {"deal_id": deal.id},
                                                inputResponses=["yes"], requestState=state))
    deal.refresh_from_db(), other_deal.refresh_from_db()
    assert deal.archived_at is None and other_deal.archived_at is None


def test_with_oauth_the_grant_is_the_credential_a_refreshed_token_may_answer(user, deal):
    flow = Flow(user=user, client_id=public_client().client_id)
    first = flow.tokens(scope="deals:read deals:write")
    _message, state = asked(call(first["access_token"], "archive_deal", {"deal_id": deal.id}))
    other_app = Flow(user=user, client_id=public_client("Other Agent").client_id)
    stranger = other_app.tokens(scope="deals:read deals:write")["access_token"]
    assert "another credential" in error_of(call(stranger, "archive_deal", {"deal_id": deal.id},
                                                 inputResponses=answer("accept", True), requestState=state))
    refreshed = flow.refresh(first["refresh_token"])
    assert refreshed.status_code == 200, refreshed.content
    done = result_of(call(refreshed.json()["access_token"], "archive_deal", {"deal_id": deal.id},
                          inputResponses=answer("accept", True), requestState=state))
    assert done["isError"] is False
    deal.refresh_from_db()
    assert deal.archived_at is not None


def test_another_accounts_deal_is_not_asked_about_it_is_not_found(api_key, other_account):
    theirs = DealFactory(account=other_account, title="Rival Tower")
    result = result_of(call(api_key, "archive_deal", {"deal_id": theirs.id}))
    assert result["isError"] is True and result["structuredContent"]["code"] == "NOT_FOUND"
    assert "Rival Tower" not in json.dumps(result)
    # Nor does a state minted by another account's member work here.
    member = MembershipFactory(account=other_account, user=UserFactory(username="mallory"))
    _key, theirs_key = api_key_create(user=member.user, account=other_account, name="m")
    _message, state = asked(call(theirs_key, "archive_deal", {"deal_id": theirs.id}))
    assert "another credential" in error_of(call(api_key, "archive_deal", {"deal_id": theirs.id},
                                                 inputResponses=answer("accept", True), requestState=state))
    theirs.refresh_from_db()
    assert theirs.archived_at is None


def test_bad_arguments_and_missing_scopes_are_refused_before_anyone_is_asked(user, account, deal):
    _key, read_only = api_key_create(user=user, account=account, name="ro", scopes=frozenset({"deals:read"}))
    refused = result_of(call(read_only, "archive_deal", {"deal_id": deal.id}))
    assert refused["isError"] is True and refused["structuredContent"]["code"] == "FORBIDDEN"
    _key, full = api_key_create(user=user, account=account, name="full")
    bad = result_of(call(full, "archive_deal", {"deal_id": "x"}))
    assert bad["isError"] is True and bad["structuredContent"]["code"] == "VALIDATION_ERROR"


def test_winner_and_removal_name_the_quote_and_the_deal(api_key, quote):
    message, state = asked(call(api_key, "select_winning_term_sheet", {"term_sheet_id": quote.id}))
    assert "Granite Bank's quote of $12,500,000 at 6.125 % fixed" in message and "Harbor Point" in message
    declined = result_of(call(api_key, "select_winning_term_sheet", {"term_sheet_id": quote.id},
                              inputResponses=answer("decline"), requestState=state))
    assert declined["structuredContent"]["changed"] is False
    quote.refresh_from_db()
    assert quote.winning is False

    message, state = asked(call(api_key, "select_winning_term_sheet", {"term_sheet_id": quote.id}))
    won = result_of(call(api_key, "select_winning_term_sheet", {"term_sheet_id": quote.id},
                         inputResponses=answer("accept", True), requestState=state))
    assert won["isError"] is False and won["structuredContent"]["changed"] is True
    assert Placement.objects.get(pk=quote.placement_id).status == "won"


def test_removing_a_quote_is_asked_first(api_key, quote):
    message, state = asked(call(api_key, "remove_term_sheet", {"term_sheet_id": quote.id}))
    assert message.startswith("Remove Granite Bank's quote of $12,500,000")
    result_of(call(api_key, "remove_term_sheet", {"term_sheet_id": quote.id}, inputResponses=answer("accept", True),
                   requestState=state))
    assert TermSheet.objects.get(pk=quote.id).deleted_at is not None  # removed (kept for the record)


def test_update_placement_asks_only_for_a_final_status(api_key, quote):
    placement_id = quote.placement_id
    notes = result_of(call(api_key, "update_placement", {"placement_id": placement_id, "notes": "called them"}))
    assert notes["resultType"] == "complete" and notes["isError"] is False
    message, state = asked(call(api_key, "update_placement", {"placement_id": placement_id, "status": "lost"}))
    assert "Harbor Point" in message and "Granite Bank" in message and "as lost" in message
    # The state is for status lost: a retry asking for archived is another call.
    assert "another call" in error_of(call(api_key, "update_placement",
                                           {"placement_id": placement_id, "status": "archived"},
                                           inputResponses=answer("accept", True), requestState=state))
    done = result_of(call(api_key, "update_placement", {"placement_id": placement_id, "status": "lost"},
                          inputResponses=answer("accept", True), requestState=state))
    assert done["isError"] is False and done["structuredContent"]["placement"]["status"] == "lost"
    assert set(confirmations.CONFIRMED_STATUSES) == {"declined", "lost", "archived"}


def test_a_question_is_counted_in_the_metrics_as_input_required(api_key, deal):
    counter = TOOL_CALLS.labels("archive_deal", "input_required", "none")
    before = counter._value.get()
    asked(call(api_key, "archive_deal", {"deal_id": deal.id}))
    assert counter._value.get() == before + 1


@pytest.mark.django_db(transaction=True)
def test_the_database_down_while_reading_the_record_is_an_outage_and_nothing_is_asked(db_proxy, api_key, deal):
    db_proxy.cut()
    try:
        result = result_of(call(api_key, "archive_deal", {"deal_id": deal.id}))
    finally:
        db_proxy.restore()
    # The credential cache lets the endpoint in; the record cannot be read: the tool's outage answer.
    assert result["isError"] is True and result["structuredContent"]["code"] == "UPSTREAM_UNAVAILABLE"
    assert "inputRequests" not in result


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("choice", ["accept", "decline"])
def test_the_official_2x_client_asks_the_person_and_retries(live_server, api_key, account, choice):
    python = sdk2_python()
    deal = DealFactory(account=account, title="Harbor Point")
    done = subprocess.run(
        [str(python), str(ROOT / "tests" / "mcp_tools" / "sdk2_confirm_client.py"), f"{live_server.url}/mcp",
         api_key, str(deal.id), choice], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["protocol_version"] == "2026-07-28"
    assert len(report["asked"]) == 1 and "Harbor Point" in report["asked"][0]["message"]
    assert report["isError"] is False
    deal.refresh_from_db()
    if choice == "accept":
        assert report["structuredContent"]["deal"]["id"] == deal.id and deal.archived_at is not None
    else:
        assert report["structuredContent"]["changed"] is False and deal.archived_at is None


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=40),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=10), inner, max_size=3),
                    max_leaves=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(state=JSON | st.just("VALID"), responses=JSON | st.dictionaries(st.just("confirm"), JSON, max_size=1))
def test_hostile_retries_are_asked_again_or_refused_never_run_or_a_5xx(api_key, deal, state, responses):
    """Whatever a client sends as requestState and inputResponses, the deal is archived only on an accepted
    answer with this server's state; anything else is a question again or a -32602, never a 5xx."""
    if state == "VALID":
        _message, state = asked(call(api_key, "archive_deal", {"deal_id": deal.id}))
    response = call(api_key, "archive_deal", {"deal_id": deal.id}, inputResponses=responses, requestState=state)
    assert response.status_code in (200, 400), response.content
    body = response.json()
    accepted = (isinstance(responses, dict) and isinstance(responses.get("confirm"), dict)
                and responses["confirm"].get("action") == "accept"
                and isinstance(responses["confirm"].get("content"), dict)
                and responses["confirm"]["content"].get("confirm") is True)
    deal.refresh_from_db()
    if response.status_code == 400:
        assert body["error"]["code"] == -32602 and deal.archived_at is None
    elif (body["result"].get("resultType") == "input_required"
          or body["result"]["structuredContent"].get("changed") is False):
        assert deal.archived_at is None
    else:
        assert accepted and deal.archived_at is not None
        Deal.objects.filter(pk=deal.pk).update(archived=False, archived_at=None)
