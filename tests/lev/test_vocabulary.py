"""lev.vocabulary: what people and agents send for our values, and the messages for common slips."""

from __future__ import annotations

from decimal import Decimal

import pytest

from lev.enums import ASSET_TYPES, BUSINESS_PLANS, LOAN_TYPES, US_STATES
from lev.limits import LOAN_AMOUNT_MIN
from lev.vocabulary import (
    STATE_NAMES,
    Slip,
    canonical_choice,
    likely_loan_amounts,
    loan_amount_too_small_message,
    money_from_text,
    money_text_message,
)


@pytest.mark.parametrize("sent", ["Value-Add", "value add", "VALUE_ADD", " value  -  add ", "value_add"])
def test_enum_values_ignore_case_and_separators(sent):
    assert canonical_choice(sent, BUSINESS_PLANS) == "value_add"


def test_separators_never_turn_one_value_into_another_or_break_punctuated_values():
    assert canonical_choice("Self Storage", ASSET_TYPES) == "self_storage"
    assert canonical_choice("heavy-bridge", LOAN_TYPES) == "heavy_bridge"
    assert canonical_choice("-created_at", ("created_at", "-created_at")) == "-created_at"
    assert canonical_choice("castle", ASSET_TYPES) == "castle"  # the caller refuses it, listing the values


@pytest.mark.parametrize(("sent", "code"), [
    ("Texas", "TX"), ("new york", "NY"), ("NEW  YORK", "NY"), ("tx", "TX"), (" North Carolina ", "NC"),
    ("Washington", "WA"), ("Washington, D.C.", "DC"), ("district of columbia", "DC"), ("Puerto Rico", "PR"),
])
def test_states_are_accepted_by_name(sent, code):
    assert canonical_choice(sent, US_STATES) == code


def test_every_state_code_has_its_name():
    assert set(STATE_NAMES.values()) == set(US_STATES)


@pytest.mark.parametrize("sent", ["bridge", "Bridge", " BRIDGE ", "bridge loan", "Bridge-Loan"])
def test_bridge_names_both_bridge_loan_types(sent):
    with pytest.raises(Slip) as slip:
        canonical_choice(sent, LOAN_TYPES)
    assert "light_bridge" in str(slip.value) and "heavy_bridge" in str(slip.value)
    # Only where loan types are meant: elsewhere "bridge" is an unknown value like any other.
    assert canonical_choice(sent, BUSINESS_PLANS) not in BUSINESS_PLANS


@pytest.mark.parametrize(("text", "amount"), [
    ("18.5M", "18500000"), ("$18,500,000", "18500000"), ("18.5 million", "18500000"), ("$750k", "750000"),
    ("USD 1.2bn", "1200000000"), ("18500000", "18500000"), ("2.5mm", "2500000"), ("$ 3,000,000 USD", "3000000"),
])
def test_money_text_is_read_as_the_amount_it_stands_for(text, amount):
    assert money_from_text(text) == Decimal(amount)
    assert money_text_message(text) == f'must be a number of US dollars, e.g. 18500000; send {amount} for "{text}"'


@pytest.mark.parametrize("text", ["a lot", "18.5 gazillion", "-5M", "0", "1e9", "", "9" * 40, "{x}"])
def test_text_that_is_no_amount_gets_the_plain_guidance_and_is_not_quoted(text):
    assert money_from_text(text) is None
    assert money_text_message(text) == "must be a number of US dollars, e.g. 18500000"
    assert money_text_message(text, not_a_string=True) == "must be a number of US dollars, e.g. 18500000, not a string"


@pytest.mark.parametrize(("amount", "guesses"), [
    ("18.5", ["18500000"]), ("0.5", ["500000"]), ("2", ["2000000"]),
    ("250", ["250000000", "250000"]),  # $250 thousand and $250 million are both real loans
    ("18500", ["18500000"]), ("99999", ["99999000"]), ("0.01", []),
])
def test_a_too_small_loan_amount_suggests_the_likely_unit(amount, guesses):
    assert likely_loan_amounts(Decimal(amount)) == [Decimal(g) for g in guesses]
    message = loan_amount_too_small_message(Decimal(amount))
    assert message.startswith(f"must be at least {LOAN_AMOUNT_MIN} US dollars")
    assert ("did you mean" in message) == bool(guesses)
    for guess in guesses:
        assert guess in message


def test_the_suggestion_reads_the_amount_in_words():
    assert loan_amount_too_small_message(Decimal("18.5")).endswith("did you mean 18500000 ($18.5 million)?")
    assert loan_amount_too_small_message(Decimal("250")).endswith(
        "did you mean 250000000 ($250 million) or 250000 ($250 thousand)?")
