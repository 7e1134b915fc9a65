"""Refusals of the pipeline: each class builds its message, `customer_message` and details."""

from __future__ import annotations

from lev.errors import BusinessRuleViolation, Conflict
from lev.limits import STAGES_PER_ACCOUNT_MAX


class TooManyStages(BusinessRuleViolation):
    def __init__(self, account_id: int):
        super().__init__(
            f"the pipeline already has {STAGES_PER_ACCOUNT_MAX} stages",
            customer_message=f"A pipeline holds at most {STAGES_PER_ACCOUNT_MAX} stages. Rename a stage you no "
                             "longer use instead of adding one.",
            details={"limit": STAGES_PER_ACCOUNT_MAX},
        )


class StageNameTaken(Conflict):
    def __init__(self, name: str, stage_id: int):
        super().__init__(f"the pipeline already has a stage named {name!r} (stage {stage_id})",
                         details={"name": name, "stage_id": stage_id})
