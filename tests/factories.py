"""factory_boy factories for the domain."""

from __future__ import annotations

from decimal import Decimal

import factory
from django.contrib.auth import get_user_model

from deals.models import Deal, DealFinancials, DealProperty
from lenders.models import Lender, LenderProgram
from lev.accounts.models import Account, Membership


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")


class AccountFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Account

    name = factory.Sequence(lambda n: f"Account {n}")
    slug = factory.Sequence(lambda n: f"account-{n}")


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    account = factory.SubFactory(AccountFactory)
    user = factory.SubFactory(UserFactory)


class DealFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Deal

    account = factory.SubFactory(AccountFactory)
    title = factory.Sequence(lambda n: f"Deal {n}")
    loan_amount = Decimal("10000000")
    loan_type = "permanent"
    transaction_type = "acquisition"
    business_plan = "stabilized"


class DealPropertyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DealProperty

    deal = factory.SubFactory(DealFactory)
    name = factory.Sequence(lambda n: f"Property {n}")
    city = "Austin"
    state = "TX"
    asset_type = "multifamily"
    units = 100


class DealFinancialsFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DealFinancials

    deal = factory.SubFactory(DealFactory)
    purchase_price = Decimal("15000000")
    estimated_value = Decimal("16000000")
    in_place_noi = Decimal("1000000")
    interest_rate = Decimal("6.0")


class LenderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Lender

    name = factory.Sequence(lambda n: f"Lender {n:04d}")
    city = "Dallas"
    state = "TX"
    lender_types = factory.LazyFunction(lambda: ["bank"])


class LenderProgramFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = LenderProgram

    lender = factory.SubFactory(LenderFactory)
    title = factory.Sequence(lambda n: f"Program {n}")
    loan_types = factory.LazyFunction(lambda: ["permanent"])
    min_loan_amount = Decimal("1000000")
    max_loan_amount = Decimal("50000000")
    positions = factory.LazyFunction(lambda: ["senior"])
    sponsor_states = factory.LazyFunction(list)
    asset_types = factory.LazyFunction(lambda: ["multifamily"])
    max_ltv = Decimal("75")
    min_dscr = Decimal("1.20")
    status = "active"
