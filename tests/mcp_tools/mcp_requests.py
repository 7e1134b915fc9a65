"""Every kind of /mcp answer, as requests: the ones tests/mcp_tools/test_mcp_middleware.py (in process)
and tests/deploy/test_mcp_lean_middleware.py (the production server) send to /mcp with and without the
pages' middleware, comparing status, headers and body."""

from __future__ import annotations

import json

ACCEPT = "application/json, text/event-stream"
PROTOCOL = "2025-06-18"


def message(method: str, params: dict | None = None, id_: int = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}).encode()


def cases(key: str, deal_id: int, *, max_body: int) -> list[tuple[str, str, str, dict[str, str], bytes]]:
    """(name, method, path, headers, body): each answer /mcp gives, the protocol's and the refusals."""
    auth = {"Authorization": f"Bearer {key}", "Accept": ACCEPT, "Content-Type": "application/json",
            "MCP-Protocol-Version": PROTOCOL}
    initialize = message("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                        "clientInfo": {"name": "diff", "version": "1"}})
    return [
        ("initialize", "POST", "/mcp", auth, initialize),
        ("tools/list", "POST", "/mcp", auth, message("tools/list")),
        ("tools/list, read-only address", "POST", "/mcp/readonly", auth, message("tools/list")),
        ("tools/list, a toolset address", "POST", "/mcp/x/deals", auth, message("tools/list")),
        ("an unknown toolset", "POST", "/mcp/x/no-such-set", auth, message("tools/list")),
        ("tools/call ok", "POST", "/mcp", auth, message("tools/call", {"name": "get_deal",
                                                                       "arguments": {"deal_id": deal_id}})),
        ("tools/call error", "POST", "/mcp", auth, message("tools/call", {"name": "get_deal",
                                                                          "arguments": {"deal_id": 10**9}})),
        ("unknown method", "POST", "/mcp", auth, message("no/such/method")),
        ("parse error", "POST", "/mcp", auth, b"{not json"),
        ("notification", "POST", "/mcp", auth, b'{"jsonrpc":"2.0","method":"notifications/initialized"}'),
        ("401 no credential", "POST", "/mcp", {k: v for k, v in auth.items() if k != "Authorization"},
         message("tools/list")),
        ("401 a wrong key", "POST", "/mcp", {**auth, "Authorization": "Bearer lev_sk_wrong"}, message("tools/list")),
        ("405 GET", "GET", "/mcp", {"Authorization": auth["Authorization"], "Accept": "text/event-stream"}, b""),
        ("405 DELETE", "DELETE", "/mcp", auth, b""),
        ("406 Accept", "POST", "/mcp", {**auth, "Accept": "text/html"}, message("tools/list")),
        ("415 Content-Type", "POST", "/mcp", {**auth, "Content-Type": "text/plain"}, message("tools/list")),
        ("413 too large", "POST", "/mcp", auth, b" " * (max_body + 1)),
        ("403 another origin", "POST", "/mcp", {**auth, "Origin": "https://evil.example"}, message("tools/list")),
        ("404 under /mcp/", "POST", "/mcp/no-such-thing", auth, message("tools/list")),
        ("404 /mcp/", "POST", "/mcp/", auth, message("tools/list")),
    ]
