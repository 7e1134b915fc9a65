"""Content-Security-Policy (issue 19, item 8): every HTML page carries one that allows only the
site's own scripts and styles (inline blocks by the request's nonce, never 'unsafe-inline'), the
pages themselves use no inline style attributes or event handlers the policy would refuse, and JSON
answers are unchanged. tests/browser/test_admin_browser.py checks that a real browser reports no
violation on the admin, Swagger UI and the consent page."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.admin_helpers import admin_client, superuser
from tests.conftest import client_with_key
from tests.deals.fixtures import eager_jobs  # noqa: F401  (a fixture: jobs run in-process, as embedded)
from tests.deals.placements.helpers import place
from tests.deals.searches.factories import lender_with, searched_deal
from tests.oauth.flow import Flow, public_client

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs")]

INLINE_BLOCK = re.compile(r"<(script|style)\b([^>]*)>", re.IGNORECASE)
FORBIDDEN_INLINE = re.compile(r"""\s(style|on[a-z]+)\s*=\s*["']|href\s*=\s*["']javascript:""", re.IGNORECASE)


def directives(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


def check_page(response) -> None:
    assert response.status_code == 200, response.status_code
    assert response["Content-Type"].startswith("text/html")
    policy = directives(response)
    for name in ("script-src", "style-src"):
        assert "'unsafe-inline'" not in policy[name] and "'unsafe-eval'" not in policy[name]
    assert policy["default-src"] == ["'self'"] and policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    nonces = {value.removeprefix("'nonce-").rstrip("'")
              for value in policy["script-src"] if value.startswith("'nonce-")}
    html = response.content.decode()
    for tag, attributes in INLINE_BLOCK.findall(html):
        if tag.lower() == "script" and "src=" in attributes:
            continue
        if tag.lower() == "script" and re.search(r'type="application/(ld\+)?json"', attributes):
            continue  # data, not code
        nonce = re.search(r'nonce="([^"]+)"', attributes)
        assert nonce and nonce.group(1) in nonces, f"inline <{tag}{attributes}> without the request's nonce"
    offending = FORBIDDEN_INLINE.findall(html)
    assert not offending, f"inline attributes the policy refuses: {offending[:5]}"


@pytest.fixture
def ranked_deal(account, django_capture_on_commit_callbacks):
    """A deal with financials, properties, a completed search (ranked lenders) and a placement."""
    deal, search = searched_deal(account, django_capture_on_commit_callbacks, lenders=4)
    place(deal, lender_with("Placed Lender").lender)
    return deal, search


def test_html_pages_carry_a_strict_policy_and_use_nothing_it_refuses(client, ranked_deal, user):
    deal, search = ranked_deal
    ops = admin_client(superuser())
    pages = [
        ops.get(reverse("admin:index")),
        ops.get(reverse("admin:deals_deal_changelist")),
        ops.get(reverse("admin:deals_deal_change", args=[deal.pk])),
        ops.get(reverse("admin:deals_deal_add")),
        ops.get(reverse("admin:deals_lendersearch_change", args=[search.pk])),
        ops.get(reverse("admin:lenders_lender_changelist")),
        ops.get(reverse("admin:deals_placement_changelist")),
        client.get(reverse("admin:login")),
        client.get("/"),
        client.get("/api/v1/docs/"),
        client.get("/accounts/login/"),
        Flow(user=user, client_id=public_client().client_id).consent_page(),
    ]
    for page in pages:
        check_page(page)
    # The ranked lenders' score bars are drawn without a style attribute (an SVG rect).
    assert '<svg class="lev-score"' in pages[2].content.decode()


def test_nonces_differ_per_response(client):
    first, second = (directives(client.get("/"))["style-src"] for _ in range(2))
    assert first != second


def test_json_answers_are_unaffected(client, api):
    for response in (api.get("/api/v1/deals/"), client.get("/health"), client.get("/api/v1/schema/?format=json"),
                     client_with_key("lev_sk_nope").get("/api/v1/deals/")):
        assert response["Content-Type"].startswith(("application/json", "application/vnd.oai.openapi+json"))
        assert response.json() is not None
        # The header is inert on JSON; when present it is the same strict policy.
        assert "'unsafe-inline'" not in response.get("Content-Security-Policy", "")


@pytest.mark.django_db
def test_each_page_gets_its_own_nonce():
    """django-csp's middleware, as it ships, builds each page's policy with a new nonce."""
    from django.test import Client

    client = Client()
    first, second = client.get("/api/v1/docs/"), client.get("/api/v1/docs/")
    assert first.status_code == second.status_code == 200
    nonces = [re.search(r"'nonce-([^']+)'", r["Content-Security-Policy"]).group(1) for r in (first, second)]
    assert nonces[0] != nonces[1]
    assert all(f'nonce="{n}"' in r.content.decode() for n, r in zip(nonces, (first, second), strict=True))
