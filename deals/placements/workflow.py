"""The placement workflow, defined once: every status, the moves out of it, and what it means.

`WORKFLOW` below is the table docs/placements.md shows. Everything else is derived from it: the
model's `Placement.Status` choices and its check constraint, the open / quotable / response /
decided / final sets the services and constraints use, the statuses PATCH and `update_placement`
take, `allowed_next_statuses`, the OpenAPI enum and the MCP tools' enums
(tests/deals/placements/test_workflow.py holds each of them to the table).

Why a plain table and not a state-machine library: django-fsm-2 4.2.4 (the maintained fork of
django-fsm) was tried on a prototype of this model. Its column must be an `FSMField`, which
deconstructs as `django_fsm.FSMField`: a migration that changes nothing in the database, and a new
dependency, for nine statuses. Each move is a decorated model method, and a refused move raises
`TransitionNotAllowed("Can't switch from state 'draft' using method 'quote'")`, which names neither
the allowed moves nor what a person should do — the error contract needs both. Nor do its moves
cover how this workflow moves: when a quote wins, the deal's other open placements become `lost` in
one `UPDATE`; a quoted placement whose last quote is removed goes back to `reviewing`; and every
write takes the deal's row lock in the service first. Speed decides nothing (the prototype's checked
move, instance included, took about 5 µs; `next_statuses` here about 1 µs). A table of plain data
that the services read says all of it in one screen, with nothing but Django's TextChoices.

Moves of two kinds:

* manual — what a person (REST `PATCH`, `update_placement`, the admin's actions) may ask for, and
  all that `allowed_next_statuses` lists (`next_statuses`): a client never reads a status there that
  PATCH or update_placement would refuse (issue 22: `quoted` was listed, then refused);
* automatic — what the workflow does itself when another call is made, listed apart as
  `automatic_next_statuses` (`automatic_statuses`): `quoted` when a term sheet is recorded
  (add_term_sheet), `won` when its quote is chosen (select_winning_term_sheet). Two more automatic
  moves are listed nowhere, because they follow another placement's or quote's change: every other
  open placement of the deal becomes `lost` when a quote wins, and a quoted placement left without a
  live quote goes back to `reviewing` (`deals.placements.services`).

`lost` → `archived` stays allowed (filing a lost placement away), as docs/placements.md says.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models


@dataclass(frozen=True)
class State:
    """One status of a placement: its value, label, moves out, and the sets it belongs to."""

    value: str
    label: str
    manual: tuple[str, ...] = ()  # next statuses a person may ask for
    automatic: tuple[str, ...] = ()  # next statuses the workflow sets (automatic_next_statuses)
    open: bool = False  # the lender may still quote or be chosen; one open placement per (deal, lender)
    quotable: bool = False  # a term sheet may be recorded on it (it went out, no decision yet)
    response: bool = False  # the lender answered: the first such status sets first_response_at
    decided: bool = False  # a decision: entering it sets decided_at
    compared: bool = True  # its live quotes are in the deal's term sheet comparison


# In the order of the workflow (the order of choices, and of allowed_next_statuses).
WORKFLOW: tuple[State, ...] = (
    State("draft", "Draft", manual=("sent", "archived"), open=True),
    State("sent", "Sent", manual=("reviewing", "declined", "no_response", "archived"),
          automatic=("quoted",), open=True, quotable=True),
    State("reviewing", "Reviewing", manual=("declined", "no_response", "archived"),
          automatic=("quoted",), open=True, quotable=True, response=True),
    State("quoted", "Quoted", manual=("lost", "declined", "archived"),
          automatic=("won",), open=True, quotable=True, response=True),
    State("declined", "Declined", manual=("archived",), response=True, decided=True, compared=False),
    State("no_response", "No Response", manual=("reviewing", "declined", "lost", "archived"), open=True),
    State("won", "Won", decided=True),
    State("lost", "Lost", manual=("archived",), decided=True),
    State("archived", "Archived", compared=False),
)

STATES: dict[str, State] = {state.value: state for state in WORKFLOW}
STATUSES: tuple[str, ...] = tuple(STATES)
STATUS_CHOICES: list[tuple[str, str]] = [(state.value, state.label) for state in WORKFLOW]
# Placement.Status: Placement.Status.SENT == "sent", with the labels of the table.
Status = models.TextChoices("Status", [(state.value.upper(), (state.value, state.label)) for state in WORKFLOW])


def _where(flag: str) -> tuple[str, ...]:
    return tuple(state.value for state in WORKFLOW if getattr(state, flag))


OPEN_STATUSES = _where("open")
QUOTABLE_STATUSES = _where("quotable")
RESPONSE_STATUSES = _where("response")
DECIDED_STATUSES = _where("decided")
# No move out of them at all.
FINAL_STATUSES = tuple(state.value for state in WORKFLOW if not state.manual and not state.automatic)
# Quotes of placements in these statuses are left out of the comparison.
NOT_COMPARED_STATUSES = tuple(state.value for state in WORKFLOW if not state.compared)
MANUAL_TRANSITIONS: dict[str, tuple[str, ...]] = {state.value: state.manual for state in WORKFLOW}
# The statuses a person asks for (PATCH, update_placement): every manual move's target.
UPDATE_STATUSES = tuple(value for value in STATUSES if any(value in state.manual for state in WORKFLOW))


def next_statuses(status: str) -> list[str]:
    """The statuses a caller may set next (PATCH, update_placement): `allowed_next_statuses`."""
    return sorted(STATES[status].manual, key=STATUSES.index)


def automatic_statuses(status: str) -> list[str]:
    """The statuses the placement reaches next by another call (`automatic_next_statuses`)."""
    return sorted(STATES[status].automatic, key=STATUSES.index)
