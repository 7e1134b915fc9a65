"""The request id of the request (or tool call) being served, for logs and backend calls.

No Django imports here: the logging configuration loads this module before apps are ready.
"""

from __future__ import annotations

import contextvars
import logging

_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("lev_request_id", default="-")


def get_request_id() -> str:
    return _request_id.get()


def set_request_id(value: str) -> contextvars.Token:
    return _request_id.set(value)


def reset_request_id(token: contextvars.Token) -> None:
    _request_id.reset(token)


class RequestIdLogFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = _request_id.get()
        return True
