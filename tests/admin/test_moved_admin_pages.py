"""Admin pages of the models issue 20 moved to another app keep their old addresses: a bookmark or a
link to /admin/lenders/lendersearch/… or /admin/deals/apikey/… leads, with its query string, to the
same page under the model's new app, where the admin's own tenancy applies as before."""

from __future__ import annotations

import pytest

from lev.accounts.models import ApiKey
from lev.accounts.services import api_key_create
from tests.admin_helpers import admin_client, superuser
from tests.deals.searches.factories import searched_deal

pytestmark = pytest.mark.django_db


def test_old_addresses_lead_to_the_moved_pages_with_their_query(account, user, django_capture_on_commit_callbacks):
    _deal, search = searched_deal(account, django_capture_on_commit_callbacks, lenders=3)
    key, _raw = api_key_create(user=user, account=account, name="bookmarked")
    client = admin_client(superuser())
    for old, new in (
        (f"/admin/lenders/lendersearch/{search.pk}/change/?page=2",
         f"/admin/deals/lendersearch/{search.pk}/change/?page=2"),
        ("/admin/lenders/lendersearch/", "/admin/deals/lendersearch/"),
        (f"/admin/deals/apikey/{key.pk}/change/", f"/admin/accounts/apikey/{key.pk}/change/"),
        ("/admin/deals/account/?q=Acme", "/admin/accounts/account/?q=Acme"),
        ("/admin/deals/idempotencyrecord/", "/admin/idempotency/idempotencyrecord/"),
    ):
        moved = client.get(old)
        assert (moved.status_code, moved["Location"]) == (301, new), old
        assert client.get(new).status_code == 200, new
    assert client.get(f"/admin/accounts/apikey/{key.pk}/change/").status_code == 200
    assert ApiKey.objects.filter(pk=key.pk).exists()


def test_an_old_address_cannot_lead_off_the_site():
    client = admin_client(superuser())
    for old in ("/admin/deals/account///evil.example/", "/admin/lenders/lendersearch/%2F%2Fevil.example"):
        location = client.get(old)["Location"]
        assert location.startswith(("/admin/accounts/account/", "/admin/deals/lendersearch/")), location


def test_every_old_address_leads_to_a_page_the_admin_has():
    from django.contrib import admin

    from lev.urls import MOVED_ADMIN_PAGES, REPLACED_ADMIN_PAGES

    pages = {f"{model._meta.app_label}/{model._meta.model_name}" for model in admin.site._registry}
    assert set(MOVED_ADMIN_PAGES.values()) | set(REPLACED_ADMIN_PAGES.values()) <= pages
    assert not (set(MOVED_ADMIN_PAGES) | set(REPLACED_ADMIN_PAGES)) & pages  # no live page is shadowed
