"""The tool catalogue an agent pays for: bytes and estimated tokens of `tools/list`, tool by tool.

    .venv/bin/python bench/catalogue.py             # before (bench/catalogue_baseline.json) and now
    .venv/bin/python bench/catalogue.py --json      # the same as JSON
    .venv/bin/python bench/catalogue.py --write-baseline   # only to re-take the baseline on purpose

A tool's bytes are its entry of the `tools/list` result as the server writes it (compact UTF-8 JSON,
`mcp_tools.budget.dumps`): name, title, description, inputSchema, outputSchema if any, annotations. The
listing is the full catalogue, what a credential with every scope sees. Tokens are estimated as
bytes / 4 (no tokenizer is installed here; JSON with long identifiers runs close to that for
the common BPE tokenizers). Toolsets are the server's (mcp_tools.toolsets: what a client selects with
/mcp/x/<toolsets> or X-MCP-Toolsets); "read-only" is what the same toolset lists in read-only mode
(/readonly or X-MCP-Readonly). The baseline is the catalogue
of main on 2026-11-24, before it was compacted (issue 21); tests/mcp_tools/test_catalogue_budget.py
holds every tool to `BUDGET` of it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `python bench/<this>.py`

BASELINE = Path(__file__).resolve().parent / "catalogue_baseline.json"
# Each tool's definition is at most this share of its baseline bytes (issue 21, "A catalogue an agent
# can afford", item 2).
BUDGET = 0.60
BYTES_PER_TOKEN = 4


def tokens(size: int) -> int:
    return -(-size // BYTES_PER_TOKEN)


def measure() -> dict[str, dict[str, object]]:
    """tool name -> {"bytes": size of its tools/list entry, "toolset": its module's last name}.
    Django must be set up."""
    from mcp_tools import budget
    from mcp_tools.registry import TOOLS
    from mcp_tools.server import get_server
    from mcp_tools.toolsets import toolset_of

    listed = get_server().tools_list_for(None)["tools"]
    return {tool["name"]: {"bytes": len(budget.dumps(tool).encode()),
                           "toolset": toolset_of(TOOLS[tool["name"]]),
                           "read_only": bool(TOOLS[tool["name"]].annotations.readOnlyHint)}
            for tool in listed}


def baseline() -> dict[str, int]:
    return json.loads(BASELINE.read_text())["tools"]


def report(now: dict[str, dict[str, object]], before: dict[str, int]) -> dict[str, object]:
    rows = []
    for name, info in now.items():
        size = int(info["bytes"])
        was = before.get(name)
        rows.append({"tool": name, "toolset": info["toolset"], "before": was, "now": size,
                     "ratio": round(size / was, 3) if was else None, "tokens_before": tokens(was) if was else None,
                     "tokens_now": tokens(size)})
    toolsets: dict[str, dict[str, int]] = {}
    for row in rows:
        total = toolsets.setdefault(str(row["toolset"]), {"tools": 0, "before": 0, "now": 0, "read_only_tools": 0,
                                                          "read_only_now": 0})
        total["tools"] += 1
        total["before"] += row["before"] or 0
        total["now"] += int(row["now"])
        if now[str(row["tool"])]["read_only"]:
            total["read_only_tools"] += 1
            total["read_only_now"] += int(row["now"])
    before_total, now_total = sum(r["before"] or 0 for r in rows), sum(int(r["now"]) for r in rows)
    return {"tools": rows, "toolsets": toolsets,
            "total": {"tools": len(rows), "before": before_total, "now": now_total,
                      "ratio": round(now_total / before_total, 3) if before_total else None,
                      "tokens_before": tokens(before_total), "tokens_now": tokens(now_total)},
            "budget": BUDGET, "token_estimate": f"bytes / {BYTES_PER_TOKEN}"}


def print_table(result: dict[str, object]) -> None:
    print(f"{'tool':28} {'toolset':11} {'before':>7} {'now':>7} {'ratio':>6} {'tok before':>10} {'tok now':>8}")
    for row in result["tools"]:
        ratio = f"{row['ratio']:.2f}" if row["ratio"] is not None else "new"
        flag = "  OVER BUDGET" if row["ratio"] is not None and row["ratio"] > BUDGET else ""
        print(f"{row['tool']:28} {row['toolset']:11} {row['before'] or '-':>7} {row['now']:>7} {ratio:>6} "
              f"{row['tokens_before'] or '-':>10} {row['tokens_now']:>8}{flag}")
    for name, total in result["toolsets"].items():
        ratio = total["now"] / total["before"] if total["before"] else 0
        print(f"{'toolset ' + name:28} {total['tools']:>2} tools    {total['before']:>7} {total['now']:>7} "
              f"{ratio:>6.2f} {tokens(total['before']):>10} {tokens(total['now']):>8}   read-only: "
              f"{total['read_only_tools']} tools, {total['read_only_now']} bytes, "
              f"{tokens(total['read_only_now'])} tokens")
    total = result["total"]
    print(f"{'total':28} {total['tools']:>2} tools    {total['before']:>7} {total['now']:>7} {total['ratio']:>6.2f} "
          f"{total['tokens_before']:>10} {total['tokens_now']:>8}")
    print(f"(tokens estimated as {result['token_estimate']}; budget {BUDGET:.0%} of each tool's baseline bytes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--write-baseline", action="store_true",
                        help=f"store today's bytes per tool as the baseline ({BASELINE.name})")
    args = parser.parse_args()
    from bench._django import setup

    setup()
    now = measure()
    if args.write_baseline:
        BASELINE.write_text(json.dumps({
            "what": "bytes of each tool's entry of tools/list (full scope) before compaction, issue 21",
            "tools": {name: info["bytes"] for name, info in now.items()},
        }, indent=1) + "\n")
        print(f"wrote {BASELINE}")
        return
    result = report(now, baseline())
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print_table(result)


if __name__ == "__main__":
    # Only when run as a script (main() starts Django): the test that imports this module must not
    # change its process's environment (the Celery workers the suite starts inherit it).
    main()
