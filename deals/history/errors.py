"""The history import's refusals. Plain exceptions for now: the command turns each into a CommandError
(the REST door, when it lands, maps them onto the error contract)."""

from __future__ import annotations


class HistoryRefused(Exception):
    """The file has bad rows, or lender names to map: nothing was written. `result` holds the
    problems (each a TableError with line and column) and the unresolved names."""

    def __init__(self, result) -> None:
        super().__init__(f"{len(result.problems)} problem(s), {len(result.unresolved)} lender name(s) to map")
        self.result = result


class ImportBusy(Exception):
    """Another history import of the same account is running: refused, never interleaved."""

    def __init__(self, account) -> None:
        super().__init__(f"Another history import of account {account.slug} is running; try again when it "
                         "has finished.")
        self.account = account
