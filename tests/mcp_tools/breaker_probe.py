"""Run as a second process by the breaker tests: reads the shared breaker and makes one tool call.

Prints one JSON line: {"state_before", "payload", "is_error", "state_after"}.
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lev.settings")


def main() -> None:
    import django

    django.setup()
    from mcp_tools.calls import run_tool
    from mcp_tools.registry import TOOLS
    from mcp_tools.resilience import breaker_state

    before = breaker_state()
    result = run_tool(TOOLS["get_deal"], {"deal_id": int(sys.argv[1]) if len(sys.argv) > 1 else 1}, None)
    print(json.dumps({
        "state_before": before,
        "payload": json.loads(result.content[0].text),
        "is_error": result.isError,
        "state_after": breaker_state(),
    }))


if __name__ == "__main__":
    main()
