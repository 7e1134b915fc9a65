"""Writes of an account's own lenders and programs (issue 38). Keyword-only, atomic; callers pass validated
data and the account acting.

A deal team adds a lender the directory lacks, and programs to it or to a directory lender; those are its
own (`account` set), read by it alone (lenders.selectors.visible). It changes its own, never the
directory's: the directory is kept by superusers in the admin. A program of an own lender is always that
lender's account's, so the program's own column says who reads it (the ranking's filter reads nothing
else). Program terms are judged by lenders.program_terms, the rule of every door that writes a program.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import CharField, F, Value
from django.db.models.functions import Lower

from lenders import program_terms
from lenders.models import Lender, LenderProgram
from lenders.selectors import visible
from lev.accounts.models import Account
from lev.errors import Conflict, Forbidden, ValidationFailed
from lev.records import save_changes

LENDER_FIELDS = ("name", "website", "city", "state", "about", "lender_types")
PROGRAM_FIELDS = ("title", "status", "loan_types", "recourse_types", "min_loan_amount", "max_loan_amount",
                  "capital_source_type", "positions", "sponsor_states", "asset_types", "max_ltv", "min_dscr",
                  *program_terms.TERM_FIELDS)
# Text fields written as "" for a null (the columns are NOT NULL with a blank default).
TEXT_FIELDS = ("website", "city", "state", "about", "capital_source_type", "rate_type", "rate_index")
LIST_FIELDS = ("lender_types", "loan_types", "recourse_types", "positions", "sponsor_states", "asset_types")

DIRECTORY_READ_ONLY = ("Forbidden: the directory's lenders and programs are kept by Lev; add your own lender, "
                       "or your own program to this lender, instead.")


def _values(data: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    out = {}
    for name in fields:
        if name not in data:
            continue
        value = data[name]
        if value is None and name in TEXT_FIELDS:
            value = ""
        elif value is None and name in LIST_FIELDS:
            value = []
        out[name] = value
    return out


def check_own(record: Lender | LenderProgram, *, account: Account) -> None:
    """Only the account's own lender or program may be changed through its doors; the directory's is
    Forbidden (another account's never reaches here: the selectors answer NotFound for it)."""
    if record.account_id is None:
        raise Forbidden(DIRECTORY_READ_ONLY)
    if record.account_id != account.pk:
        raise ValueError("another account's lender or program")  # callers look it up in the account


def name_holder(*, account_id: int, name: str, lender_id: int | None = None) -> tuple[int, str] | None:
    """(the lender holding it, why) when an own lender of the account may not take `name`, or None: it is a
    directory lender's (add programs to that one instead) or another of the account's own lenders'
    (whatever the case: lowered by the database, as the unique index does)."""
    same = (Lender.objects.filter(visible(account_id)).annotate(lower=Lower("name"))
            .filter(lower=Lower(Value(name, output_field=CharField())))
            .exclude(pk=lender_id).order_by(F("account_id").asc(nulls_first=True), "id")
            .values_list("pk", "account_id").first())
    if same is None:
        return None
    pk, owner = same
    if owner is None:
        return pk, f"the directory has a lender of this name (id {pk}): add your programs to it instead"
    return pk, f"your account has a lender of this name already (id {pk})"


def name_taken(*, account_id: int, name: str, lender_id: int | None = None) -> str | None:
    held = name_holder(account_id=account_id, name=name, lender_id=lender_id)
    return None if held is None else held[1]


def _check_name(*, account: Account, name: str, lender_id: int | None = None) -> None:
    """A name already held is a Conflict with that lender (the request is well formed; the directory or
    the account holds the name), naming it."""
    held = name_holder(account_id=account.pk, name=name, lender_id=lender_id)
    if held is not None:
        raise Conflict(held[1], details={"lender_id": held[0]})


@transaction.atomic
def lender_create(*, account: Account, data: dict[str, Any]) -> Lender:
    """A lender of the account's own."""
    values = _values(data, LENDER_FIELDS)
    _check_name(account=account, name=values["name"])
    try:
        with transaction.atomic():
            return Lender.objects.create(account=account, **values)
    except IntegrityError:  # a concurrent create of the same name won the race
        _check_name(account=account, name=values["name"])
        raise Conflict("your account has a lender of this name already") from None


@transaction.atomic
def lender_update(*, account: Account, lender: Lender, data: dict[str, Any]) -> Lender:
    check_own(lender, account=account)
    values = _values(data, LENDER_FIELDS)
    if "name" in values:
        _check_name(account=account, name=values["name"], lender_id=lender.pk)
    return save_changes(lender, values)


def _loan_range_errors(program: LenderProgram) -> dict[str, list[str]]:
    low, high = program.min_loan_amount, program.max_loan_amount
    if low is not None and high is not None and low > high:
        return {"max_loan_amount": ["Must be at least the min loan amount."]}
    return {}


# An active program the ranking can match: one that offers no loan type, no asset type or no position takes
# no deal (the admin's program form asks for a loan type too).
ACTIVE_NEEDS = {"loan_types": "An active program offers at least one loan type.",
                "asset_types": "An active program lends on at least one asset type.",
                "positions": "An active program lends in at least one position (senior when left out)."}
DEFAULT_POSITIONS = ["senior"]


def _validated(program: LenderProgram) -> None:
    """The model's checks (lenders.program_terms among them) on the program as it will be saved, a loan
    range in order, and what an active program needs; ValidationFailed names the fields."""
    errors = _loan_range_errors(program)
    if program.status == LenderProgram.Status.ACTIVE:
        errors.update({name: [message] for name, message in ACTIVE_NEEDS.items() if not getattr(program, name)})
    try:
        program.full_clean(exclude=["lender", "account"])
    except ValidationError as error:
        errors = {**error.message_dict, **errors}
    if errors:
        raise ValidationFailed({name: list(messages) for name, messages in errors.items()})


@transaction.atomic
def program_create(*, account: Account, lender: Lender, data: dict[str, Any]) -> LenderProgram:
    """A program of the account's own, on its own lender or on a directory lender (the caller looked the
    lender up in the account)."""
    if lender.account_id not in (None, account.pk):
        raise ValueError("another account's lender")
    values = _values(data, PROGRAM_FIELDS)
    if data.get("positions") is None:
        values["positions"] = list(DEFAULT_POSITIONS)
    program = LenderProgram(lender=lender, account=account, **values)
    _validated(program)
    program.save()
    return program


@transaction.atomic
def program_update(*, account: Account, program: LenderProgram, data: dict[str, Any]) -> LenderProgram:
    check_own(program, account=account)
    values = _values(data, PROGRAM_FIELDS)
    before = {name: getattr(program, name) for name in values}
    for name, value in values.items():
        setattr(program, name, value)
    try:
        _validated(program)
    finally:
        for name, value in before.items():  # save_changes compares with the values as they were
            setattr(program, name, value)
    return save_changes(program, values)
