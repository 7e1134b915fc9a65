"""The resolve table (lev.handlers.resolve, issue 24; no longer behind a switch, issue 40): a path /mcp's
handler or a tool's in-process API call resolved lately is answered from a bounded per-process table: the
same view, arguments and names as Django's own resolve, a path that matches nothing refused every time
(never kept), and a request's or a test's own urlconf (another resolver) never answered from the default
one's entries."""

from __future__ import annotations

import pytest
from django.test import override_settings
from django.urls import Resolver404, clear_url_caches, get_resolver

from lev.handlers import _resolve_cached, resolve

PATHS = ["/mcp", "/mcp/", "/health", "/api/v1/deals/", "/api/v1/deals/7/", "/api/v1/deals/7/financials/",
         "/api/v1/deals/7/properties/", "/api/v1/lenders/", "/api/v1/account/"]


def _shape(match) -> tuple:
    return (match.func, match.args, match.kwargs, match.url_name, match.route, match.namespaces, match.view_name)


@pytest.fixture(autouse=True)
def _fresh():
    _resolve_cached.cache_clear()
    yield
    _resolve_cached.cache_clear()


def _matching_paths() -> list[str]:
    paths = []
    for path in PATHS:
        try:
            get_resolver().resolve(path)
        except Resolver404:
            continue
        paths.append(path)
    return paths


def test_the_same_match_as_djangos_and_kept():
    paths = _matching_paths()
    assert len(paths) >= 6  # the product's main doors resolve
    for path in paths:
        first = resolve(path)
        assert _shape(first) == _shape(get_resolver().resolve(path)), path
        assert resolve(path) is first  # the second time from the table
    assert _resolve_cached.cache_info().currsize == len(paths)


def test_a_path_that_matches_nothing_is_refused_each_time_and_never_kept():
    for _ in range(3):
        with pytest.raises(Resolver404):
            resolve("/api/v1/no-such-thing/")
    assert _resolve_cached.cache_info().currsize == 0


def test_another_urlconf_is_another_table():
    with pytest.raises(Resolver404):
        resolve("/bench/noop")
    with override_settings(ROOT_URLCONF="bench.urls"):
        clear_url_caches()
        try:
            assert resolve("/bench/noop").func.__name__ == "noop"
            assert resolve("/bench/noop", get_resolver("bench.urls")).func.__name__ == "noop"
        finally:
            clear_url_caches()
    with pytest.raises(Resolver404):
        resolve("/bench/noop")


def test_the_table_is_bounded():
    assert _resolve_cached.cache_info().maxsize == 2048
