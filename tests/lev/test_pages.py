"""The pages a person opens: the landing page, and the API docs that work with no internet access
(Swagger UI served from this site's static files, never a CDN)."""

from __future__ import annotations

import re

from django.contrib.staticfiles import finders


def test_landing_page_links_the_admin_docs_health_and_the_mcp_endpoint(client):
    response = client.get("/")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    for href in ("/admin/", "/api/v1/docs/", "/api/v1/schema/", "/health"):
        assert f'href="{href}"' in page
    assert "http://testserver/mcp" in page and "claude mcp add" in page
    assert "lev_sk_…" in page and not re.search(r"lev_sk_[A-Za-z0-9_-]{20,}", page)  # no real key


def test_api_docs_load_swagger_ui_from_this_site(client):
    response = client.get("/api/v1/docs/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+\.(?:js|css|png))"', page)
    assert assets, page[:500]
    for asset in assets:
        assert asset.startswith("/static/drf_spectacular_sidecar/"), asset  # no CDN
        assert finders.find(asset.removeprefix("/static/")), asset  # and the file is there to serve
    assert "cdn.jsdelivr" not in page and "unpkg.com" not in page
