"""The production worker parses requests with gunicorn's C parser (gunicorn_h1c), as deploy/gunicorn.conf.py's
http_parser "auto" asks, not with its pure-Python fallback (lev.adapters.gunicorn: gunicorn's check of the
C parser, run on the adapter's protocol subclass only, would leave it unused). Observed through gunicorn's
own parser set-up, as each new connection runs it: a test of the adapter, held to its gunicorn version by
tests/deploy/test_gunicorn_adapter.py."""

from __future__ import annotations

from types import SimpleNamespace

import gunicorn_h1c
from gunicorn.asgi.parser import PythonProtocol
from gunicorn.config import Config

from lev.adapters.gunicorn import HeaderBoundProtocol


def _parser_of_a_connection(**settings: str) -> object:
    cfg = Config()
    for name, value in settings.items():
        cfg.set(name, value)
    protocol = HeaderBoundProtocol(SimpleNamespace(cfg=cfg, log=None, loop=None, asgi=None, state={}, nr_conns=0))
    protocol._setup_callback_parser()  # what each new connection runs (gunicorn's _start_http1)
    return protocol._callback_parser


def test_a_connection_of_the_asgi_worker_is_parsed_by_the_c_parser():
    assert isinstance(_parser_of_a_connection(), gunicorn_h1c.H1CProtocol)


def test_http_parser_python_still_chooses_the_python_parser():
    assert isinstance(_parser_of_a_connection(http_parser="python"), PythonProtocol)
