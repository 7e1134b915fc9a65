"""The history import's refusals. Plain exceptions: the command turns each into a CommandError, and the
REST door (deals.history.api) and the job (deals.history.jobs) read each one's `app_error`, its place in
the product's error contract (lev.errors.to_application_error reads it too): a refused file is a
VALIDATION_ERROR, another import of the account running a CONFLICT."""

from __future__ import annotations

from lev.errors import Conflict, ValidationFailed

# The refused rows shown in an error's details (the job keeps deals.history.services.PROBLEMS_KEPT).
PROBLEMS_IN_ERROR = 20


class HistoryRefused(Exception):
    """The file has bad rows, or lender names to map: nothing was written. `result` holds the
    problems (each a TableError with line and column) and the unresolved names."""

    def __init__(self, result) -> None:
        super().__init__(f"{len(result.problems)} problem(s), {len(result.unresolved)} lender name(s) to map")
        self.result = result

    @property
    def sentence(self) -> str:
        """What was refused, for a person: no internals."""
        result = self.result
        parts = []
        if result.problems_total:
            parts.append(f"{result.problems_total} problem(s) in {result.rows_refused} row(s)")
        if result.unresolved:
            parts.append(f"{len(result.unresolved)} lender name(s) to map to a lender")
        return f"the file was refused, nothing was imported: {' and '.join(parts)}"

    @property
    def app_error(self) -> ValidationFailed:
        problems = [{"line": p.line, "column": p.column or "", "message": p.message}
                    for p in self.result.problems[:PROBLEMS_IN_ERROR]]
        error = ValidationFailed({"file": [self.sentence]}, message=f"Validation failed: {self.sentence}")
        error.details.update({"problems": problems,
                              "unresolved": [resolution.name for resolution, _line, _rows in self.result.unresolved]})
        return error


class ImportBusy(Exception):
    """Another history import of the same account is running: refused, never interleaved."""

    def __init__(self, account) -> None:
        super().__init__(f"Another history import of account {account.slug} is running; try again when it "
                         "has finished.")
        self.account = account

    @property
    def app_error(self) -> Conflict:
        return Conflict("another history import of this account is running; try again when it has finished")
