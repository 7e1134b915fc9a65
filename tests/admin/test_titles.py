"""The admin's pages are titled in the product's words (issue 39): a walk of every registered model's
list, add, change, history and delete pages, over the demo (seed_demo) as a superuser, finds none of
Django's stock titles ("Select deal to change", "Change deal", "Add deal", "View deal", "Change history:
…") in a page's <title> or <h1>; the deal pages read "Deals", "Deal: Riverside Apartments Refinance" and
"New deal"."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib import admin
from django.core.management import call_command
from django.urls import NoReverseMatch, reverse

from deals.models import Deal
from tests.admin_helpers import admin_client, superuser

pytestmark = pytest.mark.django_db

# Django's stock titles, as its admin words them (django/contrib/admin/options.py, views/main.py).
STOCK = re.compile(r"Select [\w ]+ to (change|view)|^(Change|Add|View) [\w ]+$|^Change history: |^Delete$")
TITLE = re.compile(r"<title>(.*?) \| Lev</title>", re.S)
H1 = re.compile(r"<h1[^>]*>(.*?)</h1>", re.S)


def titles(html: str) -> list[str]:
    return [text.strip() for text in TITLE.findall(html) + H1.findall(html)]


@pytest.fixture
def demo(db):
    call_command("seed_demo", "--lenders", "12", stdout=StringIO())
    return admin_client(superuser())


def pages_of(model, model_admin) -> list[str]:
    """The list, add, change, history and delete pages of `model` (those it has: one row's, the first)."""
    info = (model._meta.app_label, model._meta.model_name)
    paths = [reverse(f"admin:{info[0]}_{info[1]}_changelist"), reverse(f"admin:{info[0]}_{info[1]}_add")]
    row = model._default_manager.order_by("pk").first()
    if row is not None:
        for page in ("change", "history", "delete"):
            try:
                paths.append(reverse(f"admin:{info[0]}_{info[1]}_{page}", args=[row.pk]))
            except NoReverseMatch:
                continue
    return paths


def test_no_page_of_the_admin_has_a_stock_title(demo):
    client, walked, stock = demo, [], []
    for model, model_admin in admin.site._registry.items():
        for path in pages_of(model, model_admin):
            response = client.get(path)
            if response.status_code != 200:  # e.g. an add page a model does not offer (403)
                continue
            found = titles(response.content.decode())
            assert found, path
            walked.append(path)
            stock.extend(f"{path}: {title!r}" for title in found if STOCK.search(title))
    assert len(walked) >= 3 * len(admin.site._registry)  # most models: list, add or change, history
    assert stock == [], "Django's stock titles:\n" + "\n".join(stock)


def test_the_deal_pages_read_in_the_products_words(demo):
    deal = Deal.objects.get(title="Riverside Apartments Refinance")
    html = demo.get(reverse("admin:deals_deal_changelist")).content.decode()
    assert titles(html)[:2] == ["Deals", "Deals"]
    html = demo.get(reverse("admin:deals_deal_change", args=[deal.pk])).content.decode()
    assert titles(html)[:2] == ["Deal: Riverside Apartments Refinance"] * 2
    html = demo.get(reverse("admin:deals_deal_add")).content.decode()
    assert titles(html)[:2] == ["New deal", "New deal"]
    html = demo.get(reverse("admin:deals_placement_changelist")).content.decode()
    assert titles(html)[0] == "Placements"
