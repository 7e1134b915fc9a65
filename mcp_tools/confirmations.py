"""Confirmations through the client: a tool whose effect cannot be undone asks the person first.

MCP 2026-07-28 lets a server ask the person through the client in the middle of a request ("multi
round-trip requests", basic/patterns/mrtr): the answer to `tools/call` is an `input_required` result
holding an `elicitation/create` form and an opaque `requestState`; the client shows the form, and
retries the same call with the person's answer in `inputResponses` and the state echoed back.

Which calls ask (`GATES`): `archive_deal`, `select_winning_term_sheet`, `remove_term_sheet`,
`update_placement` to a status a placement cannot leave for an open one (declined, lost, archived), and
`send_placements_email` (external email: the question names the lenders, their addresses and the
documents shared, from `POST /deals/{id}/outreach/preview/`, which writes nothing).
They ask only when the request is of 2026-07-28 and its client declared the `elicitation` capability
with form mode (an empty `elicitation: {}` means form); any other client gets what it got before: the
tool runs, and its description asks the agent to confirm with the person first.

The order of one such call (`mcp_tools.calls.call` after the arguments, the scopes and
the toolset selection have been checked, so a call that would be refused is never asked about):

1. No `requestState` (the first call), or one that has lapsed: the record is read through the API
   (a deal's title, a quote's lender and terms), and the answer is `input_required` with one form,
   `confirm`, asking "Archive the deal “Harbor Point”? …" with a single boolean. A record that cannot
   be read (another account's, gone, the database down) is answered as the tool would answer it: its
   error result, nothing asked.
2. The retry: `requestState` is verified (signed with the site's SECRET_KEY: `django.core.signing`,
   a salt of its own) and must name the same credential, the same tool and the same arguments (a
   digest of them), within `STATE_TTL_SECONDS`. A state that fails any of these is refused as a
   protocol error, -32602 (the specification: servers MUST reject state that fails verification);
   one past its time is asked again.
3. The person's answer (`inputResponses.confirm`): `accept` with `confirm: true` runs the tool;
   `decline`, `cancel` or `confirm: false` runs nothing and answers a plain result saying so
   (`changed: false`, `confirmed: false`, a message naming what was not done); no answer for `confirm`
   asks again (the specification's SHOULD). An answer that is not an ElicitResult is -32602.

Replaying an accepted state within its time repeats the same call with the same arguments, which
these tools answer as a repeat (already archived, already won, not found): nothing is done twice,
so no single-use record is kept (the specification requires one only where a state must be consumed
at most once).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core import signing

from deals.placements.workflow import DECIDED_STATUSES, FINAL_STATUSES, STATES, UPDATE_STATUSES
from lev.enums import RATE_INDEX_NAMES
from mcp_tools.addresses import at
from mcp_tools.registry import lev

# The key of the one input request (and of its answer in inputResponses).
KEY = "confirm"
# How long a person has to answer before the call asks again.
STATE_TTL_SECONDS = 600
_SALT = "lev.mcp.confirmations"
# Statuses update_placement asks about: decided or final ones a person may set.
CONFIRMED_STATUSES = tuple(s for s in UPDATE_STATUSES if s in DECIDED_STATUSES or s in FINAL_STATUSES)
_NAME_MAX = 120


class InvalidInput(Exception):
    """The retry's requestState or inputResponses cannot be accepted: a JSON-RPC -32602 (HTTP 400)."""


@dataclass(frozen=True)
class Ask:
    """What a 2026-07-28 tools/call that may be asked about carries: the client's form elicitation,
    and on a retry the person's answers and the state the server gave."""

    responses: Any
    state: Any

    @classmethod
    def of(cls, params: dict[str, Any], capabilities: Any) -> Ask | None:
        """None when the client cannot show a form (`capabilities`, what the request's `_meta` declares,
        has no `elicitation`, or URL mode only)."""
        elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
        if not isinstance(elicitation, dict) or (elicitation and not isinstance(elicitation.get("form"), dict)):
            return None
        return cls(responses=params.get("inputResponses"), state=params.get("requestState"))


@dataclass(frozen=True)
class InputRequired:
    """The interim answer of a tools/call: the form to show and the state to echo back."""

    input_requests: dict[str, Any]
    request_state: str

    def as_result(self) -> dict[str, Any]:
        return {"resultType": "input_required", "inputRequests": self.input_requests,
                "requestState": self.request_state}


@dataclass(frozen=True)
class Gate:
    """One tool's confirmation: whether a call needs one, and how to describe it to a person."""

    verb: str  # what is not done when declined: "archive the deal", ...
    wants: Callable[[dict[str, Any]], bool]
    describe: Callable[[dict[str, Any]], dict[str, str]]  # reads the record through the API


def _clip(text: Any) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= _NAME_MAX else text[: _NAME_MAX - 1] + "…"


def _deal_title(deal_id: int) -> str:
    return _clip(lev().get(at("/deals/{deal_id}/", deal_id=deal_id)).get("title")) or f"deal {deal_id}"


def _money(value: Any) -> str:
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return str(value)
    return f"${amount:,.0f}" if amount == amount.to_integral_value() else f"${amount:,.2f}"


def _rate(sheet: dict[str, Any]) -> str:
    if sheet.get("rate_type") == "fixed" and sheet.get("fixed_rate") is not None:
        return f"{Decimal(str(sheet['fixed_rate'])).normalize():f} % fixed"
    index = RATE_INDEX_NAMES.get(sheet.get("rate_index") or "", sheet.get("rate_index") or "the index")
    return f"{index} + {sheet.get('spread_bps')} bps"


def _quote(sheet: dict[str, Any]) -> str:
    lender = _clip(sheet.get("lender_name")) or "the lender"
    return f"{lender}'s quote of {_money(sheet.get('loan_amount'))} at {_rate(sheet)}"


def _describe_archive(kwargs: dict[str, Any]) -> dict[str, str]:
    title = _deal_title(kwargs["deal_id"])
    return {"title": "Archive this deal?",
            "message": f"Archive the deal “{title}”? An archived deal cannot be changed or restored."}


def _describe_winner(kwargs: dict[str, Any]) -> dict[str, str]:
    sheet = lev().get(at("/term-sheets/{term_sheet_id}/", term_sheet_id=kwargs['term_sheet_id']))
    title = _deal_title(sheet["deal_id"])
    return {"title": "Choose this quote as the winner?",
            "message": f"Choose {_quote(sheet)} as the winner of “{title}”? Its placement becomes won and "
                       "every other open placement of the deal lost. This cannot be undone."}


def _describe_removal(kwargs: dict[str, Any]) -> dict[str, str]:
    sheet = lev().get(at("/term-sheets/{term_sheet_id}/", term_sheet_id=kwargs['term_sheet_id']))
    title = _deal_title(sheet["deal_id"])
    return {"title": "Remove this quote?",
            "message": f"Remove {_quote(sheet)} from “{title}”? It leaves the deal's comparison; to "
                       "have it back, record it again."}


def _describe_status(kwargs: dict[str, Any]) -> dict[str, str]:
    placement = lev().get(at("/placements/{placement_id}/", placement_id=kwargs['placement_id']))
    title = _deal_title(placement["deal_id"])
    label = STATES[kwargs["status"]].label.lower()
    lender = _clip(placement.get("lender_name")) or "the lender"
    return {"title": f"Mark the placement {label}?",
            "message": f"Mark the placement of “{title}” with {lender} as {label}? The lender can no longer "
                       "quote on it or be chosen."}


NAMES_LISTED = 10  # lenders named in a send's question; the rest counted


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:NAMES_LISTED])
    return shown + (f" and {len(names) - NAMES_LISTED} more" if len(names) > NAMES_LISTED else "")


def _describe_send(kwargs: dict[str, Any]) -> dict[str, str]:
    from mcp_tools.tools.placements import outreach_body  # the tool's own body, previewed as it will be sent

    title = _deal_title(kwargs["deal_id"])
    plan = lev().post(at("/deals/{deal_id}/outreach/preview/", deal_id=kwargs['deal_id']), outreach_body(kwargs))
    lenders = [f"{_clip(r.get('lender_name'))} ({_clip(r.get('to_address'))})" for r in plan.get("recipients") or []]
    documents = [_clip(d.get("name")) + (f" ({_clip(d.get('file_name'))})" if d.get("file_name") != d.get("name")
                                         else "") for d in plan.get("documents") or []]
    what = "a follow-up" if plan.get("kind") == "follow_up" else "the teaser"
    shared = f"sharing {_listed(documents)}" if documents else "sharing no documents"
    skipped = len(plan.get("skipped") or [])
    left = f" {skipped} placement(s) will not be emailed (already sent or no address)." if skipped else ""
    if not lenders:
        return {"title": "Send no email?",
                "message": f"Nothing would be emailed for “{title}”: no placement asked for can be emailed.{left}"}
    return {"title": f"Email {len(lenders)} lender(s)?",
            "message": f"Email {what} of “{title}” to {len(lenders)} lender(s): {_listed(lenders)}, {shared}. "
                       f"Each gets a personal package link. Email cannot be unsent.{left}"}


GATES: dict[str, Gate] = {
    "archive_deal": Gate("archive the deal", lambda kwargs: True, _describe_archive),
    "select_winning_term_sheet": Gate("choose the winning quote", lambda kwargs: True, _describe_winner),
    "remove_term_sheet": Gate("remove the quote", lambda kwargs: True, _describe_removal),
    "update_placement": Gate("change the placement's status",
                             lambda kwargs: kwargs.get("status") in CONFIRMED_STATUSES, _describe_status),
    "send_placements_email": Gate("email the lenders", lambda kwargs: True, _describe_send),
}


def gate(tool: str, kwargs: dict[str, Any]) -> Gate | None:
    found = GATES.get(tool)
    return found if found is not None and found.wants(kwargs) else None


def _digest(tool: str, kwargs: dict[str, Any]) -> str:
    canonical = json.dumps({"tool": tool, "arguments": kwargs}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def principal(request: Any) -> str:
    """Who the call is made by: the user and the credential — an API key, or an OAuth grant (the
    person's consent to one app in one account, which a refreshed access token keeps)."""
    user, auth = getattr(request, "user", None), getattr(request, "auth", None)
    grant = getattr(auth, "authorization_id", None)
    credential = (f"oauth:{grant}:{getattr(auth, 'account_id', '')}" if grant is not None
                  else f"{type(auth).__name__}:{getattr(auth, 'pk', '')}")
    return f"{getattr(user, 'pk', '')}:{credential}"


def ask(tool: str, kwargs: dict[str, Any], who: str, described: dict[str, str]) -> InputRequired:
    form = {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": described["message"],
            "requestedSchema": {
                "type": "object",
                "properties": {KEY: {"type": "boolean", "title": described["title"], "default": False,
                                     "description": "Yes to go ahead; no changes nothing."}},
                "required": [KEY],
            },
        },
    }
    state = signing.dumps({"p": who, "d": _digest(tool, kwargs), "m": described["message"]},
                          salt=_SALT, compress=True)
    return InputRequired({KEY: form}, state)


@dataclass(frozen=True)
class Verdict:
    """What to do with a call that needs a confirmation: `ask` (describe and ask), `run`, or `declined`
    (with the payload to answer)."""

    action: str
    payload: dict[str, Any] | None = None


def verdict(tool: str, kwargs: dict[str, Any], who: str, asked: Ask) -> Verdict:
    """Read the retry's state and answer (module docstring, steps 2 and 3). Raises InvalidInput."""
    if asked.state is None:
        return Verdict("ask")
    if not isinstance(asked.state, str):
        raise InvalidInput("requestState must be the string this server sent")
    try:
        state = signing.loads(asked.state, salt=_SALT, max_age=STATE_TTL_SECONDS)
    except signing.SignatureExpired:
        return Verdict("ask")
    except signing.BadSignature:
        raise InvalidInput("requestState was not issued by this server or was changed") from None
    if not isinstance(state, dict) or state.get("p") != who:
        raise InvalidInput("requestState was issued to another credential")
    if state.get("d") != _digest(tool, kwargs):
        raise InvalidInput("requestState belongs to another call: retry with the same tool and arguments")
    responses = asked.responses
    if responses is None:
        return Verdict("ask")
    if not isinstance(responses, dict):
        raise InvalidInput("inputResponses must be an object")
    answer = responses.get(KEY)
    if answer is None:
        return Verdict("ask")
    action = answer.get("action") if isinstance(answer, dict) else None
    if action not in ("accept", "decline", "cancel"):
        raise InvalidInput(f"inputResponses.{KEY} must be an ElicitResult (action accept, decline or cancel)")
    content = answer.get("content")
    if action == "accept" and isinstance(content, dict) and content.get(KEY) is True:
        return Verdict("run")
    word = "cancelled" if action == "cancel" else "declined"
    found = GATES[tool]
    return Verdict("declined", {
        "changed": False,
        "confirmed": False,
        "message": f"Nothing changed: the person {word} the confirmation to {found.verb}. "
                   f"They were asked: {state.get('m')}",
    })
