"""lev.adapters.django writes Django's handler's private middleware chain (its docstring says why): it was
read against one Django release series, and this test fails loudly on another, and when Django's own
load_middleware no longer fills exactly the attributes the adapter fills. Its behaviour is tested through
the handlers that use it: tests/mcp_tools/test_mcp_middleware.py, tests/deploy/test_mcp_lean_middleware.py."""

from __future__ import annotations

import django
from django.core.handlers.base import BaseHandler

from lev.adapters import django as adapter
from lev.handlers import EndpointHandler
from mcp_tools.urls import ENDPOINT_MIDDLEWARE


def test_the_installed_django_is_the_series_the_adapter_was_written_for():
    series = ".".join(str(part) for part in django.VERSION[:2])
    assert series == adapter.WRITTEN_FOR, (
        f"Django {django.get_version()} is installed; lev/adapters/django.py was written for "
        f"{adapter.WRITTEN_FOR}.x. Re-read BaseHandler.load_middleware (does Django now take a middleware list?), "
        "run tests/mcp_tools/test_mcp_middleware.py and tests/deploy, then set WRITTEN_FOR.")


def test_djangos_own_chain_is_the_attributes_the_adapter_fills():
    djangos, ours = BaseHandler(), EndpointHandler(ENDPOINT_MIDDLEWARE)  # (a WSGIHandler loads its chain when made)
    djangos.load_middleware()
    chain = {name for name in vars(djangos) if name.startswith("_")}
    assert chain == {name for name in adapter.INTERNALS if name != "_get_response"}
    assert chain == {name for name in vars(ours) if name.startswith("_")}
    assert callable(BaseHandler._get_response)
