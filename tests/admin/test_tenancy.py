"""The admin is tenant-isolated (issue 19, item 4).

A staff user of account B holding every model permission walks EVERY registered admin model
(`admin.site._registry`, so a model added later is walked too) against account A's rows: the list
does not show them, their change, delete and history pages answer as for a missing row (Django's
302 to the admin index with "doesn't exist"), actions posted with their ids leave them unchanged,
the autocomplete of every field pointing at the model returns none of them, relation filters and
form choices offer none of them. Global models say so in their docstring; superuser-only models
answer B's staff with 403 (or the missing-row redirect) everywhere.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.apps import apps
from django.contrib import admin
from django.contrib.admin.filters import RelatedFieldListFilter
from django.contrib.auth.models import Group, Permission
from django.forms import ModelChoiceField
from django.urls import reverse
from django.utils import timezone
from oauth2_provider.models import (
    get_access_token_model,
    get_grant_model,
    get_id_token_model,
    get_refresh_token_model,
)

from deals.models import Company, Contact, Deal, Note, Placement
from deals.outreach.models import AccountMailbox, InboundEmail, OutreachTemplate
from deals.outreach.services import outreach_send
from deals.searches.models import LenderSearch
from lenders.models import Lender, LenderActivity
from lev.accounts.admin_bases import TenancyAdmin
from lev.accounts.models import Account, Membership
from lev.accounts.services import api_key_create
from lev.idempotency.models import IdempotencyRecord
from lev.oauth.models import OAuthAuthorization
from tests.admin_helpers import admin_client, superuser
from tests.conftest import client_with_key
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote
from tests.factories import AccountFactory, LenderProgramFactory, MembershipFactory, UserFactory
from tests.oauth.flow import public_client

pytestmark = pytest.mark.django_db

A_SECRET = "A-SECRET-RESPONSE-BODY"
KINDS = {"account", "global", "superuser"}


def _world(account: Account, username: str) -> dict:
    """One account's rows of every account-owned model the admin shows."""
    member = MembershipFactory(account=account, user=UserFactory(username=username)).user
    key, raw = api_key_create(user=member, account=account, name=f"{username}'s key")
    deal = deal_with_financials(account, title=f"{username} tower")
    sent = place(deal, lenders(1)[0])
    quote(sent)
    sponsor = Company.objects.create(account=account, kind="sponsor", name=f"{username} sponsor {A_SECRET}")
    Contact.objects.create(account=account, company=sponsor, name=f"{username} person {A_SECRET}")
    Contact.objects.create(account=account, lender=sent.lender, name=f"{username} banker {A_SECRET}")
    Deal.objects.filter(pk=deal.pk).update(sponsor=sponsor)
    Note.objects.create(account=account, deal=deal, author=member, kind="call", body=f"{username} call {A_SECRET}")
    InboundEmail.objects.create(account=account, status="unmatched", message_id=f"<{username}@reply.test>",
                                from_address=f"{username}@lender.test", subject=f"{username} reply {A_SECRET}")
    LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version, status="completed")
    # The outbox (deals.outreach): an email of a send, with its package link.
    emailed = place(deal, lenders(1)[0], status="draft")
    Placement.objects.filter(pk=emailed.pk).update(contact_email=f"{username}@example.com")
    outreach_send(deal=deal, placements=[emailed], user=member)
    OutreachTemplate.objects.create(account=account, kind="teaser", subject=f"{username} teaser {A_SECRET}",
                                    body="Hello $contact_name")
    AccountMailbox.objects.create(account=account, host=f"{username}.imap.test", username=f"{username} {A_SECRET}",
                                  password="secret", enabled=False)
    LenderActivity.objects.create(account=account, lender=sent.lender, state="TX", quotes_90d=1, score=0.1)
    # The account's own lender and programs (issue 38), one of them on a directory lender.
    own = Lender.objects.create(account=account, name=f"{username} own lender {A_SECRET}")
    LenderProgramFactory(lender=own, account=account, title=f"{username} own program {A_SECRET}")
    LenderProgramFactory(lender=sent.lender, account=account, title=f"{username} own terms {A_SECRET}")
    IdempotencyRecord.objects.create(account=account, user=member, key=f"{username}-idem", method="POST",
                                     path="/api/v1/deals/", request_hash="0" * 64, status_code=201,
                                     response_body={"secret": f"{A_SECRET}-{username}"})
    app = public_client(f"{username} agent")
    OAuthAuthorization.objects.create(user=member, account=account, application=app, scope="deals:read")
    expires = timezone.now() + dt.timedelta(hours=1)
    access = get_access_token_model().objects.create(user=member, application=app, token=f"{username}-raw-access",
                                                     expires=expires, scope="deals:read")
    get_refresh_token_model().objects.create(user=member, application=app, token=f"{username}-raw-refresh",
                                             access_token=access)
    get_grant_model().objects.create(user=member, application=app, code=f"{username}-code", expires=expires,
                                     redirect_uri="http://127.0.0.1/cb", scope="deals:read")
    get_id_token_model().objects.create(user=member, application=app, expires=expires, scope="openid")
    seen = {"username": username, "ip_address": "203.0.113.9", "user_agent": "x", "path_info": "/admin/login/"}
    AccessAttempt.objects.create(**seen, failures_since_start=1, get_data="", post_data="")
    AccessLog.objects.create(**seen)
    AccessFailureLog.objects.create(**seen)
    Group.objects.create(name=f"{username} staff").user_set.add(member)
    return {"user": member, "key": key, "raw_key": raw, "deal": deal}


@pytest.fixture
def tenants(db):
    a, b, b2 = AccountFactory(name="Alpha A"), AccountFactory(name="Bravo B"), AccountFactory(name="Bravo Two")
    world_a = _world(a, "alice")
    _world(b, "bert")
    staff = UserFactory(username="bob", is_staff=True)
    staff.user_permissions.set(Permission.objects.all())  # every model permission there is
    MembershipFactory(account=b, user=staff, role=Membership.Role.OWNER)
    MembershipFactory(account=b2, user=staff, role=Membership.Role.OWNER)
    return {"a": a, "b": b, "b2": b2, "world_a": world_a, "staff": staff, "client": admin_client(staff)}


def _admin_url(model, view: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def _rows_of(model, account: Account):
    """The rows of `model` that belong to `account`, as its admin declares (account_path)."""
    model_admin = admin.site._registry[model]
    lookup = {f"{model_admin.account_path}__in": [account.pk]}
    return model._default_manager.filter(pk__in=model._default_manager.filter(**lookup).values("pk"))


def _snapshot(queryset) -> list[dict]:
    return [json.loads(json.dumps(row, default=str)) for row in queryset.order_by("pk").values()]


def _a_rows_of_related(model, a: Account, b_accounts: list[Account]) -> set:
    """A's rows of a related model that B must not be offered (none for global models)."""
    related_admin = admin.site._registry.get(model)
    if related_admin is None or related_admin.tenancy == "global":
        return set()
    if related_admin.tenancy == "superuser":
        return set(model._default_manager.values_list("pk", flat=True))
    mine = set()
    for account in b_accounts:
        mine |= set(_rows_of(model, account).values_list("pk", flat=True))
    return set(_rows_of(model, a).values_list("pk", flat=True)) - mine


def _sources_pointing_at(model):
    """Every (source model, field name) whose relation points at `model` (autocomplete sources)."""
    for source in apps.get_models():
        for field in source._meta.get_fields():
            if field.is_relation and field.concrete and field.related_model is model:
                yield source, field.name


def _assert_form_offers_none_of_a(response, tenants, where):
    forms = [response.context["adminform"].form]
    for inline in response.context.get("inline_admin_formsets", []):
        forms.extend(inline.formset.forms)
        forms.append(inline.formset.empty_form)
    for form in forms:
        for name, field in form.fields.items():
            # (A formset's hidden row id is Django's own: it only ever matches the parent's rows.)
            if isinstance(field, ModelChoiceField) and name != form._meta.model._meta.pk.name:
                offered = set(field.queryset.values_list("pk", flat=True))
                foreign = _a_rows_of_related(field.queryset.model, tenants["a"], [tenants["b"], tenants["b2"]])
                assert not offered & foreign, (where, name)


def test_every_registered_admin_declares_its_tenancy():
    undeclared = [m._meta.label for m, a in admin.site._registry.items()
                  if not isinstance(a, TenancyAdmin) or a.tenancy not in KINDS]
    assert not undeclared, f"admins with no tenancy (lev.accounts.admin_bases): {undeclared}"
    for model, model_admin in admin.site._registry.items():
        if model_admin.tenancy == "global":
            assert "not tenant-scoped" in (type(model_admin).__doc__ or ""), model._meta.label


def test_b_staff_reaches_none_of_a_rows_in_any_admin(tenants):
    client, a = tenants["client"], tenants["a"]
    walked = {kind: [] for kind in KINDS}
    for model, model_admin in admin.site._registry.items():
        label = model._meta.label
        walked[model_admin.tenancy].append(label)
        if model_admin.tenancy == "global":
            continue
        changelist = client.get(_admin_url(model, "changelist"))
        if model_admin.tenancy == "superuser":
            assert changelist.status_code == 403, label
            assert client.get(_admin_url(model, "add")).status_code == 403, label
            rows = list(model._default_manager.values_list("pk", flat=True))
            assert rows, f"the fixture has no row of {label}"
            for pk in rows:
                for view in ("change", "delete", "history"):
                    answer = client.get(_admin_url(model, view, pk))
                    assert answer.status_code in (302, 403), (label, view)
            for source, field_name in _sources_pointing_at(model):
                answer = client.get(reverse("admin:autocomplete"), {
                    "app_label": source._meta.app_label, "model_name": source._meta.model_name,
                    "field_name": field_name, "term": ""})
                assert answer.status_code in (403, 404), (label, source._meta.label, field_name)
            continue

        a_rows = _rows_of(model, a)
        a_ids = set(a_rows.values_list("pk", flat=True))
        assert a_ids, f"the fixture has no row of {label} in account A"
        before = _snapshot(a_rows)

        # The list: none of A's rows, and every relation filter lists none of A's rows.
        assert changelist.status_code == 200, label
        shown = {row.pk for row in changelist.context["cl"].result_list}
        assert shown and not shown & a_ids, label
        for spec in changelist.context["cl"].filter_specs:
            if isinstance(spec, RelatedFieldListFilter):
                related = spec.field.related_model
                offered = {pk for pk, _ in spec.lookup_choices}
                assert not offered & _a_rows_of_related(related, a, [tenants["b"], tenants["b2"]]), (label, spec.title)
                if related is Account:
                    assert offered == {tenants["b"].pk, tenants["b2"].pk}, label

        # Change, delete and history of A's rows: exactly the answer for a row that does not exist —
        # Django's 302 to the admin index ("doesn't exist"); for delete, a 403 where the model allows
        # no delete at all (placements, term sheets), whatever the row.
        for view in ("change", "delete", "history"):
            missing = client.get(_admin_url(model, view, 987654321))
            assert missing.status_code in ((302,) if view != "delete" else (302, 403)), (label, view)
            for pk in a_ids:
                answer = client.get(_admin_url(model, view, pk))
                assert answer.status_code == missing.status_code, (label, view)
                assert answer.get("Location") == missing.get("Location"), (label, view)
                if answer.status_code == 302:
                    assert answer["Location"] == reverse("admin:index"), (label, view)
            # (403 where the model allows no change or delete at all, for any row: that says nothing of A's.)
            assert client.post(_admin_url(model, "change", pk), {}).status_code in (302, 403), label
            assert client.post(_admin_url(model, "delete", pk), {"post": "yes"}).status_code in (302, 403), label

        # Every action B may run, posted with A's ids (confirmed where an action asks), changes nothing.
        action_form = changelist.context["action_form"]  # None for an admin without actions (stages)
        actions = [name for name, _ in action_form.fields["action"].choices if name] if action_form else []
        for action in actions:
            client.post(_admin_url(model, "changelist"),
                        {"action": action, "_selected_action": sorted(a_ids), "index": 0, "post": "yes"})
        assert _snapshot(_rows_of(model, a)) == before, label

        # The autocomplete of every field pointing at the model.
        if model_admin.get_search_fields(None):
            for source, field_name in _sources_pointing_at(model):
                answer = client.get(reverse("admin:autocomplete"), {
                    "app_label": source._meta.app_label, "model_name": source._meta.model_name,
                    "field_name": field_name, "term": ""})
                assert answer.status_code == 200, (label, source._meta.label, field_name)
                found = {str(item["id"]) for item in answer.json()["results"]}
                assert found and not found & {str(pk) for pk in a_ids}, (label, source._meta.label, field_name)

        # Form choices: the add page and the change page of one of B's rows offer none of A's rows.
        pages = [_admin_url(model, "add")]
        b_row = _rows_of(model, tenants["b"]).first()
        if b_row is not None:
            pages.append(_admin_url(model, "change", b_row.pk))
        for page in pages:
            answer = client.get(page)
            if answer.status_code == 200 and "adminform" in answer.context:
                _assert_form_offers_none_of_a(answer, tenants, (label, page))

    assert len(walked["account"]) >= 10 and walked["superuser"] and walked["global"], walked


def test_the_finding_b_revokes_a_key_through_the_revoke_action_and_it_keeps_working(tenants):
    world_a = tenants["world_a"]
    assert client_with_key(world_a["raw_key"]).get("/api/v1/deals/").status_code == 200
    tenants["client"].post(reverse("admin:accounts_apikey_changelist"),
                           {"action": "revoke", "_selected_action": [world_a["key"].pk], "index": 0})
    world_a["key"].refresh_from_db()
    assert world_a["key"].revoked_at is None
    assert client_with_key(world_a["raw_key"]).get("/api/v1/deals/").status_code == 200


def test_b_staff_sees_neither_a_keys_nor_idempotency_records_in_the_lists(tenants):
    client = tenants["client"]
    keys = client.get(reverse("admin:accounts_apikey_changelist")).content.decode()
    assert "alice" not in keys and "bert" in keys
    records = client.get(reverse("admin:idempotency_idempotencyrecord_changelist")).content.decode()
    assert "alice-idem" not in records and "bert-idem" in records


def test_stored_response_bodies_are_never_shown_even_to_superusers(tenants):
    ops = admin_client(superuser())
    listing = ops.get(reverse("admin:idempotency_idempotencyrecord_changelist")).content.decode()
    assert "alice-idem" in listing and "bert-idem" in listing  # superusers see every account
    assert A_SECRET not in listing and "bytes" in listing
    record = IdempotencyRecord.objects.get(key="alice-idem")
    page = ops.get(_admin_url(IdempotencyRecord, "change", record.pk))
    assert page.status_code == 200
    body = page.content.decode()
    assert A_SECRET not in body and "response_body" not in body and "201" in body


def test_a_person_in_both_accounts_is_seen_but_not_changed_and_nobody_becomes_superuser(tenants):
    client, staff = tenants["client"], tenants["staff"]
    shared = UserFactory(username="sam")
    MembershipFactory(account=tenants["a"], user=shared)
    MembershipFactory(account=tenants["b"], user=shared)
    page = client.get(_admin_url(type(shared), "change", shared.pk))
    assert page.status_code == 200 and not page.context["has_change_permission"]
    client.post(_admin_url(type(shared), "change", shared.pk), {"username": "sam", "is_superuser": "on"})
    own = client.get(_admin_url(type(staff), "change", staff.pk))
    assert own.status_code == 200 and "is_superuser" not in own.context["adminform"].form.fields
    client.post(_admin_url(type(staff), "change", staff.pk), {"username": "bob", "is_superuser": "on",
                                                              "is_staff": "on", "is_active": "on",
                                                              "date_joined_0": "2026-01-01",
                                                              "date_joined_1": "00:00:00"})
    staff.refresh_from_db()
    shared.refresh_from_db()
    assert not staff.is_superuser and not shared.is_superuser
    assert set(shared.memberships.values_list("account_id", flat=True)) == {tenants["a"].pk, tenants["b"].pk}


def test_a_deal_property_cannot_be_added_to_a_deal_of_a(tenants):
    client, deal_a = tenants["client"], tenants["world_a"]["deal"]
    before = deal_a.properties.count()
    answer = client.post(_admin_url(type(deal_a.properties.first()), "add"),
                         {"deal": deal_a.pk, "name": "Sneaky", "city": "Austin", "state": "TX",
                          "asset_type": "multifamily"})
    assert answer.status_code == 200 and "deal" in answer.context["adminform"].form.errors
    assert deal_a.properties.count() == before


def test_b_staff_cannot_delete_global_rows_that_a_rows_hang_on(tenants):
    # A lender is global, but deleting it would delete A's placements with it (and the confirmation
    # page would list them): deleting global rows is for superusers.
    client = tenants["client"]
    placement = Placement.objects.filter(deal=tenants["world_a"]["deal"]).first()
    lender = placement.lender
    page = client.get(_admin_url(type(lender), "delete", lender.pk))
    assert page.status_code == 403
    client.post(_admin_url(type(lender), "delete", lender.pk), {"post": "yes"})
    client.post(_admin_url(type(lender), "changelist"),
                {"action": "delete_selected", "_selected_action": [lender.pk], "index": 0, "post": "yes"})
    assert Placement.objects.filter(pk=placement.pk).exists()
    assert client.get(_admin_url(type(lender), "change", lender.pk)).status_code == 200  # still readable
