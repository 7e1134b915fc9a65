"""Counts of one fuzz run, printed at the end of the pytest run (tests/fuzz/conftest.py)."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

MAX_SHOWN = 200  # characters of an input or answer shown per distinct failure


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=repr, ensure_ascii=True)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + f"… ({len(text)} chars)"


@dataclass
class FuzzStats:
    mcp_calls: int = 0
    mcp_5xx: int = 0
    mcp_violations: int = 0
    api_calls: int = 0
    api_5xx: int = 0
    api_violations: int = 0
    by_code: Counter = field(default_factory=Counter)
    # distinct failure -> (an input that produced it, what came back)
    distinct: dict[str, tuple[str, str]] = field(default_factory=dict)

    def record_failure(self, key: str, sent: Any, answer: Any) -> None:
        # Numbers and quoted input vary between examples of one failure: fold them.
        key = re.sub(r"'[^']*'", "'…'", re.sub(r"\b(?<!HTTP )\d+", "N", key))
        self.distinct.setdefault(key, (_short(sent), _short(answer)))

    def lines(self) -> list[str]:
        out = [
            f"MCP calls: {self.mcp_calls}, HTTP 5xx: {self.mcp_5xx}, contract violations: {self.mcp_violations}",
            f"MCP tool outcomes: {dict(sorted(self.by_code.items()))}",
            f"REST (schemathesis) calls: {self.api_calls}, HTTP 5xx: {self.api_5xx}, "
            f"failed checks: {self.api_violations}",
        ]
        if self.distinct:
            out.append(f"{len(self.distinct)} distinct failures (input -> answer):")
            for key, (sent, answer) in sorted(self.distinct.items()):
                out += [f"  * {key}", f"      sent: {sent}", f"      got:  {answer}"]
        return out


STATS = FuzzStats()
