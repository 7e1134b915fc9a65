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
    """Guarantees `%(request_id)s` for formatters, whatever made the record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = _request_id.get()
        return True


def _install_record_factory() -> None:
    # Stamp the id when the record is made, in the thread and context that made it, so every
    # handler (not only those with the filter) sees the request it belongs to.
    previous = logging.getLogRecordFactory()
    if getattr(previous, "_lev_request_id", False):
        return

    def factory(*args, **kwargs) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        record.request_id = _request_id.get()
        return record

    factory._lev_request_id = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


_install_record_factory()
