"""GET /metrics, scraped after real traffic: the counts an operator alerts on are right, and the
endpoint is closed to strangers. Failures come from real sources: a scripted HTTP backend
(tests/backend_stub.py) for outages, the live API for validation, not-found, business rules and
rate limits. Counters are process-wide, so every assertion is on the change across the test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import requests
import yaml
from prometheus_client.parser import text_string_to_metric_families

from lev.accounts.services import api_key_create
from mcp_tools import resilience
from tests.backend_stub import BackendStub, Reply, wait_until
from tests.deals.searches.factories import make_deal
from tests.factories import DealFactory, MembershipFactory, UserFactory
from tests.mcp_helpers import McpCaller

pytestmark = pytest.mark.django_db(transaction=True)

DEAL = {"id": 1, "title": "Stub deal"}
OUTAGE = Reply(503, {"code": "UPSTREAM_UNAVAILABLE", "message": "down", "details": {}})

Samples = dict[tuple[str, frozenset], float]


def scrape(client) -> Samples:
    response = client.get("/metrics")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def delta(before: Samples, after: Samples, name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    return after.get(key, 0.0) - before.get(key, 0.0)


def deltas(before: Samples, after: Samples, name: str, *label_names: str) -> Counter:
    """Changes of one sample name, keyed by the values of `label_names` (zero changes left out)."""
    changes: Counter = Counter()
    for (sample, labels), value in after.items():
        if sample == name:
            change = value - before.get((sample, labels), 0.0)
            if change:
                changes[tuple(dict(labels)[n] for n in label_names)] += change
    return changes


@pytest.fixture
def mcp(live_server, api_key) -> McpCaller:
    return McpCaller(live_server.url, api_key)


# --- counts after traffic ---------------------------------------------------------------------------
def test_retries_are_counted_by_outcome(mcp, client, settings):
    before = scrape(client)
    with BackendStub(OUTAGE, Reply(200, DEAL)) as backend:  # one outage, then the retry succeeds
        settings.LEV_API_BASE_URL = backend.url
        assert mcp.ok("get_deal", {"deal_id": 1}) == {"deal": DEAL}
    with BackendStub(OUTAGE) as backend:  # every attempt fails
        settings.LEV_API_BASE_URL = backend.url
        assert mcp.error("get_deal", {"deal_id": 1})["code"] == "UPSTREAM_UNAVAILABLE"
        assert backend.count() == settings.LEV_RETRY_TOTAL + 1
    with BackendStub(Reply(200, DEAL)) as backend:  # first try succeeds: not a retry
        settings.LEV_API_BASE_URL = backend.url
        mcp.ok("get_deal", {"deal_id": 1})
    after = scrape(client)
    assert deltas(before, after, "lev_mcp_backend_retries_total", "outcome") == {("recovered",): 1, ("exhausted",): 1}


def test_breaker_transitions_and_live_state(mcp, client, settings):
    settings.LEV_RETRY_TOTAL = 0
    settings.LEV_BREAKER_RESET_TIMEOUT_S = 1
    resilience.reset_breaker()
    before = scrape(client)
    assert delta({}, before, "lev_mcp_circuit_breaker_state", state="closed") == 1
    with BackendStub(*[OUTAGE] * settings.LEV_BREAKER_FAIL_MAX, Reply(200, DEAL)) as backend:
        settings.LEV_API_BASE_URL = backend.url
        for _ in range(settings.LEV_BREAKER_FAIL_MAX):
            assert mcp.error("get_deal", {"deal_id": 1})["code"] == "UPSTREAM_UNAVAILABLE"
        opened = scrape(client)
        assert deltas(before, opened, "lev_mcp_breaker_transitions_total", "state") == {("open",): 1}
        assert {s for s in ("closed", "half_open", "open")
                if opened[("lev_mcp_circuit_breaker_state", frozenset({("state", s)}))] == 1} == {"open"}

        assert wait_until(lambda: resilience.breaker_state() == "half_open", timeout=10)
        assert scrape(client)[("lev_mcp_circuit_breaker_state", frozenset({("state", "half_open")}))] == 1
        assert mcp.ok("get_deal", {"deal_id": 1}) == {"deal": DEAL}  # the probe closes it
    after = scrape(client)
    assert deltas(before, after, "lev_mcp_breaker_transitions_total", "state") == {
        ("open",): 1, ("half_open",): 1, ("closed",): 1}
    assert after[("lev_mcp_circuit_breaker_state", frozenset({("state", "closed")}))] == 1
    assert after[("lev_mcp_circuit_breaker_state", frozenset({("state", "open")}))] == 0


def test_client_errors_and_bugs_never_count_as_retries_or_transitions(mcp, client, settings, account):
    before = scrape(client)
    assert mcp.error("get_deal", {"deal_id": 987654})["code"] == "NOT_FOUND"
    assert mcp.error("create_deal", {"title": "x", "loan_amount": -1, "loan_type": "permanent"})["code"] == (
        "VALIDATION_ERROR")
    with BackendStub(Reply(500, {"code": "INTERNAL_ERROR", "message": "bug", "details": {}})) as backend:
        settings.LEV_API_BASE_URL = backend.url
        for _ in range(settings.LEV_BREAKER_FAIL_MAX):
            assert mcp.error("get_deal", {"deal_id": 1})["code"] == "INTERNAL_ERROR"
    after = scrape(client)
    assert not deltas(before, after, "lev_mcp_backend_retries_total", "outcome")
    assert not deltas(before, after, "lev_mcp_breaker_transitions_total", "state")


def test_tool_calls_are_counted_by_tool_code_and_category(mcp, client, settings, account, api_key, live_server):
    deal = DealFactory(account=account)
    archived = make_deal(account, archived=True)
    before = scrape(client)

    mcp.ok("get_deal", {"deal_id": deal.pk})
    mcp.ok("list_deals", {})
    assert mcp.error("create_deal", {"title": "x", "loan_amount": -1, "loan_type": "permanent"})["code"] == (
        "VALIDATION_ERROR")
    assert mcp.error("get_deal", {"deal_id": 987654})["code"] == "NOT_FOUND"
    assert mcp.error("search_lenders_for_deal", {"deal_id": archived.pk})["code"] == "BUSINESS_RULE"
    # A bad key is answered by the endpoint (HTTP 401), before any tool runs: not a tool call.
    refused = requests.post(f"{live_server.url}/mcp", timeout=30,
                            json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                  "params": {"name": "get_deal", "arguments": {"deal_id": deal.pk}}},
                            headers={"Authorization": "Bearer lev_sk_wrong", "Accept": "application/json"})
    assert refused.status_code == 401
    # A user of its own, so the reads above do not count against the low limit. Per hour, so the
    # Retry-After is too long to be retried inside the call.
    member = MembershipFactory(account=account, user=UserFactory(username="limited"))
    limited = McpCaller(live_server.url, api_key_create(user=member.user, account=account, name="t")[1])
    settings.LEV_RATE_LIMIT_READS = "2/hour"
    codes = [limited.call("get_deal", {"deal_id": deal.pk})[1].get("code", "ok") for _ in range(3)]
    assert codes == ["ok", "ok", "RATE_LIMITED"]
    settings.LEV_RATE_LIMIT_READS = "100000/min"
    with BackendStub(OUTAGE) as backend:
        settings.LEV_API_BASE_URL = backend.url
        assert mcp.error("get_deal", {"deal_id": 1})["code"] == "UPSTREAM_UNAVAILABLE"
    with BackendStub(Reply(500, {"code": "INTERNAL_ERROR", "message": "bug", "details": {}})) as backend:
        settings.LEV_API_BASE_URL = backend.url
        assert mcp.error("get_deal", {"deal_id": 1})["code"] == "INTERNAL_ERROR"
    after = scrape(client)

    get_deal_ok = 1 + 2
    assert deltas(before, after, "lev_mcp_tool_calls_total", "tool", "code", "error_category") == {
        ("get_deal", "ok", "none"): get_deal_ok,
        ("list_deals", "ok", "none"): 1,
        ("create_deal", "VALIDATION_ERROR", "validation"): 1,
        ("get_deal", "NOT_FOUND", "validation"): 1,
        ("search_lenders_for_deal", "BUSINESS_RULE", "business"): 1,
        ("get_deal", "RATE_LIMITED", "transient"): 1,
        ("get_deal", "UPSTREAM_UNAVAILABLE", "transient"): 1,
        ("get_deal", "INTERNAL_ERROR", "internal"): 1,
    }
    # Every tool call is timed once, whatever its outcome.
    calls = deltas(before, after, "lev_mcp_tool_call_seconds_count", "tool")
    assert calls == {("get_deal",): get_deal_ok + 1 + 1 + 2, ("list_deals",): 1,
                     ("create_deal",): 1, ("search_lenders_for_deal",): 1}


# --- who may scrape ----------------------------------------------------------------------------------
def test_metrics_token_is_required_when_set(client, settings):
    settings.LEV_METRICS_TOKEN = "scrape-secret-123"
    missing = client.get("/metrics")
    wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret-124")
    assert missing.status_code == wrong.status_code == 401
    assert missing.json()["code"] == wrong.json()["code"] == "AUTH_ERROR"
    assert "scrape-secret" not in missing.content.decode() + wrong.content.decode()
    good = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret-123")
    assert good.status_code == 200 and b"lev_mcp_circuit_breaker_state" in good.content


def test_production_without_a_token_hides_metrics(client, settings):
    settings.PRODUCTION = True
    settings.LEV_METRICS_TOKEN = ""
    response = client.get("/metrics")
    assert response.status_code == 404 and response.json()["code"] == "NOT_FOUND"
    settings.LEV_METRICS_TOKEN = "scrape-secret-123"
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret-123").status_code == 200


# --- the alert rules and the dashboard ask for series the site exports ---------------------------------
DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def exported_series(client) -> set[str]:
    """Every sample name /metrics can show, including label sets not seen yet (a rule on a
    misspelt name would never fire, and nothing else would notice)."""
    text = client.get("/metrics").content.decode()
    names = {"up"}
    for family in text_string_to_metric_families(text):
        suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum")}.get(family.type, ("",))
        names |= {family.name + suffix for suffix in suffixes}
    return names


def series_in(expr: str) -> set[str]:
    return set(re.findall(r"\b(lev_\w+|up)\b(?=\s*[{\[)]|\s*$|\s*==)", expr))


def test_alert_rules_are_well_formed_and_use_exported_series(client):
    exported = exported_series(client)
    rules = [r for g in yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text())["groups"]
             for r in g["rules"]]
    names = {r["alert"] for r in rules}
    assert {"LevCircuitBreakerOpen", "LevTransientErrorRatioHigh", "LevValidationErrorRatioHigh",
            "LevInternalErrors", "LevToolLatencyHigh", "LevMetricsTargetDown"} <= names
    for rule in rules:
        assert rule["labels"]["severity"] and rule["annotations"]["summary"], rule["alert"]
        used = series_in(rule["expr"])
        assert used and used <= exported, (rule["alert"], used - exported)
    promtool = shutil.which(os.environ.get("PROMTOOL", "promtool"))
    if promtool:  # CI images without Prometheus rely on the checks above
        for args in (["check", "rules", "alerts.yml"], ["test", "rules", "alerts_test.yml"]):
            out = subprocess.run([promtool, *args], cwd=DEPLOY / "prometheus", capture_output=True, text=True,
                                 timeout=60)
            assert out.returncode == 0, out.stdout + out.stderr


def test_dashboard_panels_query_exported_series(client):
    exported = exported_series(client)
    dashboard = json.loads((DEPLOY / "grafana" / "lev-dashboard.json").read_text())
    titles = {p["title"] for p in dashboard["panels"]}
    assert {"Tool calls by code", "Tool calls by errorCategory", "Tool latency p50 / p95",
            "Circuit breaker state", "Backend retries by outcome"} <= titles
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            used = series_in(target["expr"])
            assert used and used <= exported, (panel["title"], used - exported)


def test_a_process_starts_with_a_multiprocess_directory_that_does_not_exist_yet(tmp_path):
    """A worker container starts with PROMETHEUS_MULTIPROC_DIR set and no such directory: the first
    metric a module defines writes there, so the settings create it (it crashed at import before)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    metrics_dir = tmp_path / "not-yet" / "metrics"
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir), "DJANGO_SETTINGS_MODULE": "lev.settings"}
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=Path(__file__).resolve().parents[2], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert metrics_dir.is_dir() and any(metrics_dir.iterdir())
