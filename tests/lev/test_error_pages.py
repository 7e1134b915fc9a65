"""The product's own error pages (issue 39): a filter Django disallows in the admin gave a deal-team user
the debug page with a traceback and file paths. With DEBUG off (the default now, `make run` included) it
is a 400 page in the product's words; 403, 404 and 500 likewise."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from tests.admin_helpers import staff_user

pytestmark = pytest.mark.django_db


def test_a_disallowed_admin_filter_is_the_products_400_page(client, settings):
    settings.DEBUG = False
    client.force_login(staff_user("dana", "view_deal"))
    response = client.get("/admin/deals/deal/?created_by__password__startswith=pbkdf2")
    assert response.status_code == 400
    page = response.content.decode()
    assert "That request could not be read" in page and "Traceback" not in page and "password" not in page


def test_every_error_page_renders_without_a_request():
    # The 500 page is rendered with no context at all (django.views.defaults.server_error).
    for code, words in (("400", "could not be read"), ("403", "cannot open"), ("404", "Nothing here"),
                        ("500", "went wrong on our side")):
        page = render_to_string(f"{code}.html")
        assert words in page and "lev/pages.css" in page
