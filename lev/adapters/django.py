"""The Django adapter: a request handler that runs a chosen part of settings.MIDDLEWARE.

`/mcp` goes through only the middleware it relies on (mcp_tools.urls.ENDPOINT_MIDDLEWARE, which
lev.handlers.EndpointHandler runs), not the pages' sessions, CSRF, authentication, messages, axes and
WhiteNoise: measured at about 4 % of an MCP call (docs/benchmarks.md, LEV_MCP_LEAN_MIDDLEWARE).
Django has no public way to build a handler over another middleware list: BaseHandler.load_middleware
reads settings.MIDDLEWARE and fills the handler's private chain. `MiddlewareChain.load_middleware` is that
method (synchronous) for a chosen list, so it writes the same private attributes Django's handler then
reads: `_view_middleware`, `_template_response_middleware`, `_exception_middleware`, `_middleware_chain`,
and wraps `_get_response`, Django's innermost step.

WRITTEN_FOR is the Django release series these were read from; tests/lev/test_django_adapter.py fails on
another, and checks that Django's own load_middleware still sets exactly these attributes.
"""

from __future__ import annotations

from django.conf import settings
from django.core.handlers.exception import convert_exception_to_response
from django.utils.module_loading import import_string

WRITTEN_FOR = "5.2"
# The private attributes of django.core.handlers.base.BaseHandler this module writes or reads.
INTERNALS = ("_view_middleware", "_template_response_middleware", "_exception_middleware", "_middleware_chain",
             "_get_response")


class MiddlewareChain:
    """Mixed into a Django handler (BaseHandler, WSGIHandler): its middleware chain is `middleware`, in
    settings.MIDDLEWARE's order (a name settings.MIDDLEWARE lacks is not run), each run as its class in
    `replacements` ({name: dotted path}) where it has one."""

    middleware: tuple[str, ...] = ()
    replacements: dict[str, str] = {}  # (read, never written: an instance sets its own)

    def load_middleware(self, is_async: bool = False) -> None:
        self._view_middleware = []
        self._template_response_middleware = []
        self._exception_middleware = []
        handler = convert_exception_to_response(self._get_response)
        for path in reversed([name for name in settings.MIDDLEWARE if name in self.middleware]):
            middleware = import_string(self.replacements.get(path, path))(handler)
            if hasattr(middleware, "process_view"):
                self._view_middleware.insert(0, middleware.process_view)
            if hasattr(middleware, "process_template_response"):
                self._template_response_middleware.append(middleware.process_template_response)
            if hasattr(middleware, "process_exception"):
                self._exception_middleware.append(middleware.process_exception)
            handler = convert_exception_to_response(middleware)
        self._middleware_chain = handler
