"""django-mcp-server and the `mcp` SDK (1.x): what Lev needs of them that they keep private.

django-mcp-server's `DjangoMCP` (on the SDK's `FastMCP`) answers the initialize-based requests Lev does not
answer itself (initialize, resources, prompts, and tools/list and tools/call when `handle_fast` declines).
Three needs have no public way in, and are met here alone:

* the version `initialize` names in serverInfo: FastMCP takes none, its low-level server answers its own
  package's unless told (`version`);
* a JSON-RPC error, not code 0 with the exception's text, for an exception escaping one of the SDK's
  request handlers: each handler of the low-level server's map is wrapped (`request_handlers`);
* the methods the SDK answers and their request models (`request_models`), and the capabilities and
  server name its `initialize` would give (`initialization_options`), which the 2026-07-28 answers reuse.

django-mcp-server's `handle_django_request` reads the message as the request's `data` (DRF's parsed body);
`sdk_request` hands it the message the view already parsed, without writing DRF's private cache.

`WRITTEN_FOR` names the versions this was read against; `tests/mcp_tools/test_sdk_adapter.py` fails when
the installed ones differ, so an upgrade re-reads this module first.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pydantic
from mcp import types
from mcp.shared.exceptions import McpError
from mcp_server.djangomcp import DjangoMCP

logger = logging.getLogger(__name__)

# distribution -> the version this module was written against.
WRITTEN_FOR = {"mcp": "1.30.0", "django-mcp-server": "0.5.7"}


def _json_rpc_errors(handler: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
    """A request handler of the SDK's server whose unexpected exceptions are a JSON-RPC internal error
    (-32603, logged with the traceback, nothing of the exception in the answer); errors it raises
    on purpose (McpError, with their code) pass unchanged."""

    @functools.wraps(handler)
    async def answer(request: Any) -> Any:
        try:
            return await handler(request)
        except McpError:
            raise
        except Exception:
            logger.exception("Unexpected error answering %s", getattr(request, "method", "a request"))
            raise McpError(types.ErrorData(code=types.INTERNAL_ERROR,
                                           message="Internal error: an unexpected error occurred.")) from None

    return answer


def _method_of(model: type[pydantic.BaseModel]) -> str:
    return model.model_fields["method"].annotation.__args__[0]  # Literal["tools/call"] -> "tools/call"


class SdkServer(DjangoMCP):
    """django-mcp-server's server, stateless, naming `version` in serverInfo, every SDK request handler
    answering an unexpected exception with -32603."""

    def __init__(self, *, name: str, instructions: str, version: str) -> None:
        super().__init__(name=name, instructions=instructions, stateless=True)
        low_level = self._mcp_server
        low_level.version = version
        handlers = low_level.request_handlers
        for request_type, handler in list(handlers.items()):
            handlers[request_type] = _json_rpc_errors(handler)

    @functools.cached_property
    def request_models(self) -> dict[str, type[pydantic.BaseModel]]:
        """method -> the SDK's request model, for every request method the SDK's server answers
        (`initialize` is answered by the SDK's session itself, outside the handler map)."""
        models = {_method_of(model): model for model in self._mcp_server.request_handlers}
        models["initialize"] = types.InitializeRequest
        return models

    def initialization_options(self) -> Any:
        """What the SDK's `initialize` answers: `server_name`, `server_version`, `capabilities`."""
        return self._mcp_server.create_initialization_options()


class _SdkRequest:
    """The request as django-mcp-server reads it: the parsed message as `data`, the rest the request's."""

    def __init__(self, request: Any, message: Any) -> None:
        self.wrapped = request
        self.data = message

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def sdk_request(request: Any, message: Any) -> Any:
    return _SdkRequest(request, message)
