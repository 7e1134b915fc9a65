"""The request id of the request (or tool call) being served, for logs and backend calls.

No Django imports here: the logging configuration loads this module before apps are ready.
"""

from __future__ import annotations

import contextvars
import logging
import random
import uuid

_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("lev_request_id", default="-")


def new_request_id() -> str:
    """A new request id: a random (version 4) UUID, drawn from this process's `random` generator rather than
    `os.urandom`, whose getrandom call lets go of the GIL in the middle of a request, handing it to the
    worker's event loop and waiting to get it back (issue 24). An id only has to differ from the others
    in the logs: the generator is seeded from os.urandom and seeded again in every forked process (CPython's
    `random` does both), so workers never share a sequence. Never for a secret or an idempotency key."""
    return str(uuid.UUID(int=random.getrandbits(128), version=4))


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
