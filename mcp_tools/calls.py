"""A tool call, on either protocol revision: the tool found, the caller's scopes and the connection's
toolsets checked, the arguments validated once (the tool's pydantic model, strict, `mcp_tools.arguments`),
a confirmation asked where one is needed (`mcp_tools.confirmations`), then the tool run with a LevClient
bound to the caller's credentials and a fresh request id, every failure turned into the contract.
Nothing a tool raises reaches the transport.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping
from typing import Any

import pydantic
from django.conf import settings
from mcp.server.fastmcp.tools import Tool

from lev.accounts import scopes
from lev.errors import ErrorCode
from lev.outages import is_dependency_outage, report_outage
from lev.request_id import reset_request_id, set_request_id
from lev.resource import bearer_challenge
from mcp_tools import arguments as checks
from mcp_tools import confirmations, results
from mcp_tools.client import LevClient, default_transport
from mcp_tools.errors import ToolFailure, internal_error, upstream_unavailable, validation_failure
from mcp_tools.registry import TOOLS, ToolSpec, bind_client, record_tool_call, unbind_client
from mcp_tools.results import ToolResult
from mcp_tools.toolsets import EVERYTHING, Selection

logger = logging.getLogger(__name__)


def call(tools: Mapping[str, Tool], name: str, arguments: dict[str, Any] | None,
         request: Any) -> ToolResult | confirmations.InputRequired:
    """Validate the arguments against the tool's schema, then run it; counted in the metrics by
    tool, code and category (both transports' paths come here). Never raises, but for a bad retry
    of a confirmation (`confirmations.InvalidInput`), which only a 2026-07-28 request can make.
    An `InputRequired` comes back only for a request the 2026-07-28 dispatcher marked (`mcp_ask`)."""
    started = time.perf_counter()
    try:
        result = _call(tools, name, arguments, request)
    except confirmations.InvalidInput:
        raise  # the retry of a confirmation carried a bad state or answer: the 2026-07-28 dispatcher's -32602
    except Exception:
        # A bug in validating the arguments (run_tool already guards the tool itself): still a
        # tool result, so the caller gets a JSON-RPC answer and not the endpoint's HTTP 500.
        logger.exception("Unexpected error validating the arguments of tool %s", checks.printable(str(name))[:100])
        result = results.result(internal_error().as_dict(), is_error=True)
    if isinstance(result, confirmations.InputRequired):
        record_tool_call(name, {}, is_error=False, seconds=time.perf_counter() - started, outcome="input_required")
    else:
        record_tool_call(name, result.structuredContent or {}, is_error=bool(result.isError),
                         seconds=time.perf_counter() - started)
    return result


def _call(tools: Mapping[str, Tool], name: str, arguments: dict[str, Any] | None,
          request: Any) -> ToolResult | confirmations.InputRequired:
    spec = TOOLS.get(name)
    tool = tools.get(name)
    if spec is None or tool is None:
        failure = validation_failure(
            {"name": [f"is not a tool of this server: {name!r}"]},
            message=f"Validation failed: unknown tool {name!r}; call tools/list for the available tools",
        )
        return results.result(failure.as_dict(), is_error=True)
    granted = credential_scopes(request)
    if granted is not None and (spec.scope is None or spec.scope not in granted):
        return results.result(scope_failure(spec).as_dict(), is_error=True)
    selection = getattr(request, "mcp_selection", EVERYTHING)
    if not selection.allows(spec):
        return results.result(selection_failure(spec, selection).as_dict(), is_error=True)
    arguments = arguments or {}
    unknown = sorted(set(arguments) - set(tool.fn_metadata.arg_model.model_fields))
    if unknown:
        failure = validation_failure({checks.printable(arg): ["is not a known argument"] for arg in unknown})
        return results.result(failure.as_dict(), is_error=True)
    # Arguments mean what the schema says: validated as the JSON they are, in strict mode (no
    # true for 1, no 0 for a date, no "18500000" for a number), and never pre-parsed (FastMCP's
    # pre_parse_json would turn the string "[1]" into a list).
    text, unreadable = checks.arguments_json(arguments)
    if text is None:
        return results.result(validation_failure(unreadable).as_dict(), is_error=True)
    try:
        parsed = tool.fn_metadata.arg_model.model_validate_json(text, strict=True)
        kwargs = parsed.model_dump_one_level()
    except pydantic.ValidationError as exc:
        return results.result(validation_failure(checks.arg_errors(exc)).as_dict(), is_error=True)
    asked = getattr(request, "mcp_ask", None)
    found = confirmations.gate(name, kwargs) if asked is not None else None
    if found is not None:
        return _confirmed(spec, kwargs, request, asked, found)
    return run_tool(spec, kwargs, request)


def _confirmed(spec: ToolSpec, kwargs: dict[str, Any], request: Any, asked: confirmations.Ask,
               found: confirmations.Gate) -> ToolResult | confirmations.InputRequired:
    """A call the person confirms first (`mcp_tools.confirmations`): run it, answer that it was
    declined, or ask, describing the record as the API reads it (its error result if it cannot)."""
    who = confirmations.principal(request)
    decided = confirmations.verdict(spec.name, kwargs, who, asked)
    if decided.action == "run":
        return run_tool(spec, kwargs, request)
    if decided.action == "declined":
        return results.result(decided.payload or {}, is_error=False, tool=spec.name)
    described = run_tool(dataclasses.replace(spec, fn=lambda: found.describe(kwargs)), {}, request)
    if described.isError:
        return described
    return confirmations.ask(spec.name, kwargs, who, described.structuredContent or {})


def run_tool(spec: ToolSpec, arguments: dict[str, Any], request: Any) -> ToolResult:
    """Run one tool call synchronously; always returns a ToolResult."""
    client = LevClient(
        authorization=request.META.get("HTTP_AUTHORIZATION") if request is not None else None,
        transport=default_transport(
            host=request.get_host() if request is not None else "localhost",
            scheme=request.scheme if request is not None else "http",
            # The endpoint already authenticated this key: in-process calls need not look it up again.
            authenticated=(request.user, request.auth) if getattr(request, "auth", None) else None,
        ),
    )
    # The call's request id goes on every log line of the call, here and in the API.
    id_token = set_request_id(client.request_id)
    client_token = bind_client(client)
    try:
        payload = spec.fn(**arguments)
        return results.result(payload, is_error=False, tool=spec.name)
    except ToolFailure as failure:
        if failure.code != ErrorCode.UPSTREAM_UNAVAILABLE:  # an outage is logged once per interval, not per call
            logger.info("Tool %s failed: %s %s", spec.name, failure.code, failure.message)
        return results.result(failure.as_dict(), is_error=True)
    except Exception as exc:
        if is_dependency_outage(exc):
            # e.g. the breaker's shared state could not be read: an outage, not a bug.
            report_outage(exc, f"tool {spec.name}")
            return results.result(upstream_unavailable().as_dict(), is_error=True)
        logger.exception("Unexpected error in tool %s", spec.name)
        return results.result(internal_error().as_dict(), is_error=True)
    finally:
        unbind_client(client_token)
        reset_request_id(id_token)


def credential_scopes(request: Any) -> frozenset[str] | None:
    """The scopes of the credential /mcp authenticated; None for a request the endpoint did not
    authenticate (a direct in-process call): the API behind the tools checks every request's scope."""
    if request is None or not hasattr(request, "successful_authenticator"):
        return None
    return scopes.granted(request.auth) if request.successful_authenticator is not None else frozenset()


def scope_failure(spec: ToolSpec) -> ToolFailure:
    if spec.scope is None:
        return ToolFailure(ErrorCode.FORBIDDEN, f"Forbidden: {spec.name} is not available to any credential",
                           details={"tool": spec.name})
    return ToolFailure(
        ErrorCode.FORBIDDEN,
        f"Forbidden: {spec.name} needs the scope {spec.scope}, which this credential was not granted",
        hint=f"Tell the user this needs the '{spec.scope}' permission: they can reconnect Lev and allow it "
             "(or use an API key that has it). tools/list shows only the tools this connection may call.",
        details={"required_scope": spec.scope, "tool": spec.name},
    )


def selection_failure(spec: ToolSpec, selection: Selection) -> ToolFailure:
    """A tool the connection's toolsets or read-only mode leave out: the catalogue it listed has no such tool."""
    if selection.read_only and not spec.annotations.readOnlyHint:
        return ToolFailure(
            ErrorCode.FORBIDDEN,
            f"Forbidden: {spec.name} changes data, and this connection is read-only",
            hint="Tell the user this connection was set up read-only (X-MCP-Readonly or a /readonly address); "
                 "changing data needs a connection without it. tools/list shows what this one may call.",
            details={"tool": spec.name, "read_only": True},
        )
    return validation_failure(
        {"name": [f"is not in this connection's toolsets ({selection.describe()})"]},
        message=f"Validation failed: {spec.name} is not in this connection's toolsets ({selection.describe()}); "
                "call tools/list for the tools this connection offers",
    )


def step_up_challenge(request: Any, called: ToolResult) -> str | None:
    """The `insufficient_scope` challenge for a tool refused for a scope an OAuth token lacks (HTTP 403,
    RFC 6750 §3.1, the MCP specification's scope challenge); None when there is nothing to step up to."""
    from lev.oauth.authentication import OAuthCredential

    if not (called.isError and settings.LEV_OAUTH_STEP_UP_CHALLENGE):
        return None
    payload = called.structuredContent or {}
    scope = (payload.get("details") or {}).get("required_scope")
    credential = getattr(request, "auth", None) if hasattr(request, "successful_authenticator") else None
    if payload.get("code") != ErrorCode.FORBIDDEN or scope not in scopes.ALL_SCOPES or \
            not isinstance(credential, OAuthCredential):
        return None
    return bearer_challenge(request, error="insufficient_scope", scopes=credential.scope_set | {scope},
                            description=f"{scope} is needed for this tool")
