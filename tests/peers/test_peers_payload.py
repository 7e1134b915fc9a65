"""Issue 24's peers (bench/peers/) answer get_deal with Lev's payload: the one SQL read and payload
builder every peer shares (bench/peers/deal_row.py) against Lev's /mcp get_deal for the same rows, the
django-mcp-server peer's tool in-process, and, when `make bench-peers` has built their virtualenvs
(.tools/peers/, never in CI), the official SDK's and FastMCP's servers over HTTP."""

from __future__ import annotations

import datetime as dt
import http.client
import json
import os
import socket
import subprocess
import time
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from bench.peers import deal_row
from deals.companies.models import Company
from tests.factories import DealFactory

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools" / "peers"
ACCEPT = "application/json, text/event-stream"


def body(deal_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "get_deal", "arguments": {"deal_id": deal_id}}}).encode()


def lev_result(api_key: str, deal_id: int) -> dict:
    response = Client().post("/mcp", body(deal_id), content_type="application/json", HTTP_ACCEPT=ACCEPT,
                             HTTP_AUTHORIZATION=f"Bearer {api_key}")
    assert response.status_code == 200, response.content
    result = response.json()["result"]
    assert result["isError"] is False, result
    return result


@pytest.fixture
def deals(account, user):
    """A deal with every field the payload names filled in, and one with every nullable field null."""
    full = DealFactory(account=account, title="Café Řeka Lofts", loan_amount=Decimal("18500000.50"), owner=user,
                       description="212 units,\n95 % occupied", estimated_close_date=dt.date(2027, 3, 31),
                       sponsor=Company.objects.create(account=account, name="Bluebonnet", kind="sponsor"),
                       borrower=Company.objects.create(account=account, name="Riverside LLC", kind="borrower"))
    bare = DealFactory(account=account, title="Bare", loan_amount=None, owner=None)
    return [full, bare]


def needs_postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the peers read PostgreSQL, as the benchmark does (bench/peers/run.py)")


def peer_payload(deal_id: int) -> dict:
    with connection.cursor() as cursor:
        cursor.execute(deal_row.SQL, [deal_id])
        return deal_row.payload(cursor.fetchone())


@pytest.mark.django_db
def test_the_peers_read_gives_levs_get_deal_payload_and_text(api_key, deals):
    needs_postgresql()
    for deal in deals:
        lev = lev_result(api_key, deal.id)
        payload = peer_payload(deal.id)
        assert payload == lev["structuredContent"]
        assert deal_row.text(payload) == lev["content"][0]["text"]  # the same bytes, not only the same JSON
    assert lev["structuredContent"]["deal"]["owner"] is None  # the bare deal's nulls were compared too


@pytest.mark.django_db
def test_the_django_mcp_server_peer_answers_levs_result(api_key, deals):
    needs_postgresql()
    from bench.peers.dmcp.mcp import DealTools

    for deal in deals:
        answer = DealTools().get_deal(deal.id).model_dump(mode="json", by_alias=True, exclude_none=True)
        assert answer == lev_result(api_key, deal.id)
    missing = DealTools().get_deal(2**62)
    assert missing.isError and missing.content[0].text == deal_row.NOT_FOUND


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)  # the peer, another process, must see the rows
@pytest.mark.parametrize("peer", ["sdk", "fastmcp"])
def test_the_sdk_peers_answer_levs_result_over_http(peer, api_key, deals):
    needs_postgresql()
    uvicorn = TOOLS / peer / "bin" / "uvicorn"
    if not uvicorn.exists():
        pytest.skip(f"{uvicorn.relative_to(ROOT)} is built by `make bench-peers`, not by the test suite")
    db = connection.settings_dict
    dsn = f"postgresql://{db['USER']}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "PYTHONPATH"}}
    proc = subprocess.Popen([str(uvicorn), f"{peer}_server:app", "--host", "127.0.0.1", "--port", str(port),
                             "--log-level", "warning"], cwd=ROOT / "bench" / "peers",
                            env={**env, "PEERS_DSN": dsn, "PGPASSWORD": db.get("PASSWORD") or ""},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        answers = {}
        for deal_id in [d.id for d in deals] + [2**62]:
            deadline = time.monotonic() + 60
            while True:
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                    conn.request("POST", "/mcp", body(deal_id), {"Content-Type": "application/json", "Accept": ACCEPT})
                    response = conn.getresponse()
                    answers[deal_id] = (response.status, json.loads(response.read()))
                    break
                except (ConnectionRefusedError, http.client.RemoteDisconnected):
                    assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read().decode()[-2000:]
                    time.sleep(0.3)
        for deal in deals:
            status, answer = answers[deal.id]
            assert status == 200 and answer["result"] == lev_result(api_key, deal.id)
        status, answer = answers[2**62]
        assert answer["result"]["isError"] is True and answer["result"]["content"][0]["text"] == deal_row.NOT_FOUND
    finally:
        proc.terminate()
        proc.wait(15)


def test_the_bench_counts_any_answer_other_than_the_reference_as_wrong():
    """bench/peers/run.py fails the run on a wrong answer: this is the check every timed call goes through."""
    from bench.peers.run import Target, mcp_door

    lev = {"content": [{"type": "text", "text": '{"deal":{"id":1}}'}], "structuredContent": {"deal": {"id": 1}},
           "isError": False}
    mcp = Target("sdk", "sdk", mcp_door(None, 1), server=None, reference=lev)
    answer = {"jsonrpc": "2.0", "id": 1, "result": lev}
    assert mcp.correct(200, json.dumps(answer).encode())
    assert not mcp.correct(500, json.dumps(answer).encode())
    other = {**answer, "result": {**lev, "structuredContent": {"deal": {"id": 2}}}}
    assert not mcp.correct(200, json.dumps(other).encode())
    assert not mcp.correct(200, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32603}}')
    assert not mcp.correct(200, b"<html>")
    floor = Target("floor", "floor", mcp.door, server=None, reference=b'{"id": 1}')
    assert floor.correct(200, b'{"id": 1}') and not floor.correct(200, b'{"id": 2}')
