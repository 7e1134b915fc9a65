"""One source per limit (lev.limits): the columns, the API's input and the MCP tools' schemas read the
same named bounds, so none of them accepts what another refuses, and a column is never sized apart."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import models

from deals.models import Deal, DealFinancials, DealProperty, Note
from deals.placements.models import Placement, TermSheet
from lev import limits
from lev.idempotency.models import IdempotencyRecord
from lev.pagination import StandardPagination

NAMED_COLUMNS = {
    name: (column["max_digits"], column["decimal_places"])
    for name, column in vars(limits).items() if name.endswith("_COLUMN")
}


@pytest.mark.parametrize(("model", "field", "bound"), [
    (Deal, "title", limits.DEAL_TITLE_MAX),
    (DealProperty, "name", limits.PROPERTY_NAME_MAX),
    (DealProperty, "address", limits.PROPERTY_ADDRESS_MAX),
    (DealProperty, "city", limits.PROPERTY_CITY_MAX),
    (DealProperty, "zip", limits.ZIP_MAX),
    (Placement, "contact_name", limits.CONTACT_NAME_MAX),
    (Placement, "contact_email", limits.EMAIL_MAX),
    (TermSheet, "prepayment", limits.PREPAYMENT_TEXT_MAX),
    (IdempotencyRecord, "key", limits.IDEMPOTENCY_KEY_MAX),
    (Note, "body", limits.NOTE_BODY_MAX),
])
def test_text_columns_hold_what_the_api_accepts(model, field, bound):
    assert model._meta.get_field(field).max_length == bound


def test_every_decimal_column_of_the_apps_is_a_named_size():
    sizes = set(NAMED_COLUMNS.values())
    for app in ("deals", "lenders"):
        for model in apps.get_app_config(app).get_models():
            for field in model._meta.get_fields():
                if isinstance(field, models.DecimalField):
                    assert (field.max_digits, field.decimal_places) in sizes, (model.__name__, field.name)


def test_money_columns_hold_money_max():
    digits, places = NAMED_COLUMNS["MONEY_COLUMN"]
    assert len(str(limits.MONEY_MAX).replace(".", "")) == digits
    assert -limits.MONEY_MAX.as_tuple().exponent == places == limits.MONEY_DECIMAL_PLACES


def test_pages_and_the_amortization_default():
    assert (StandardPagination.page_size, StandardPagination.max_page_size) == (
        limits.PAGE_SIZE_DEFAULT, limits.PAGE_SIZE_MAX)
    assert DealFinancials._meta.get_field("amortization_years").default == limits.AMORTIZATION_YEARS_DEFAULT
