"""bench/conformance.py's verdicts (the run itself is `make conformance`, a CI stage): what counts as
not offered, and that only a suite-declared "Not testable ... diagnostic tool" check is excused."""

from __future__ import annotations

from bench.conformance import judge, not_offered_reason

TODAY = {"tools": {"get_deal", "list_deals"}, "prompts": set(), "resources": False}


def check(status: str, message: str = "", check_id: str = "c") -> dict:
    return {"id": check_id, "status": status, "errorMessage": message}


def test_features_the_server_lacks_are_not_offered_and_what_it_has_is_required():
    assert "test_simple_text" in not_offered_reason("tools-call-simple-text", TODAY)
    assert not_offered_reason("prompts-list", TODAY) == "prompts: the server has none"
    assert not_offered_reason("resources-read-text", TODAY) == "resources: the server has none"
    assert not_offered_reason("completion-complete", TODAY)
    assert not_offered_reason("logging-set-level", TODAY)
    for required in ("server-initialize", "tools-list", "tools-call-error", "dns-rebinding-protection",
                     "server-stateless", "caching", "sep-2164-resource-not-found"):
        assert not_offered_reason(required, TODAY) is None, required


def test_a_fixture_toolset_or_real_prompts_make_their_scenarios_required():
    fixtures = {**TODAY, "tools": TODAY["tools"] | {"test_simple_text"}, "prompts": {"test_simple_prompt"}}
    assert not_offered_reason("tools-call-simple-text", fixtures) is None
    assert not_offered_reason("prompts-get-simple", fixtures) is None
    # The input-required scenario of prompts/get needs the suite's prompt, not a tool of that name.
    prompt = "test_input_required_result_prompt"
    assert prompt in not_offered_reason("input-required-result-non-tool-request", {**fixtures, "tools": {prompt}})
    assert not_offered_reason("input-required-result-non-tool-request", {**fixtures, "prompts": {prompt}}) is None


def test_only_untestable_checks_for_missing_diagnostic_tools_are_excused():
    untestable = check("FAILURE", "Not testable: server does not list the diagnostic tool 'test_logging_tool' "
                                  "in tools/list, so ...", "sep-2575-server-no-log-without-loglevel")
    assert judge("server-stateless", [check("SUCCESS"), untestable, check("WARNING", "x")], TODAY) == (
        "PASS", [], ["sep-2575-server-no-log-without-loglevel: needs the suite's diagnostic tool test_logging_tool"])
    verdict, failed, _ = judge("server-stateless", [untestable, check("FAILURE", "Expected -32602", "meta")], TODAY)
    assert verdict == "FAIL" and failed == ["meta: Expected -32602"]
    listed = {**TODAY, "tools": TODAY["tools"] | {"test_logging_tool"}}
    assert judge("server-stateless", [untestable], listed)[0] == "FAIL"
    assert judge("tools-list", None, TODAY)[0] == "FAIL"  # no result at all is a failure
