"""Retired (issue 40). This module held two shortcuts of issue 24: `LevRequest`, DRF's Request given
outright properties over the wrapped Django request (read through its private `_request`) and put in
place by swapping the DRF request's `__class__`; and LEV_RELEASE_VIEWS, which had a view clear its own
`__dict__` when Django called the response's private `_resource_closers`. Both reached into DRF's and
Django's insides (docs/architecture.md, "Adapters": the product does not). The garbage the second kept
off the collector is collected after each response instead (lev.asgi.BufferedWSGI); the figures before
and after are in docs/benchmarks.md, "Issue 40: the server without gunicorn's, Django's and DRF's insides".

The two names below have no behaviour left. They stay only because mcp_tools (outside this change)
still imports them; delete them with those imports.
"""

from __future__ import annotations


class LevRequestMixin:
    """No behaviour: an APIView's request is DRF's own Request."""


def release(response) -> None:
    """Nothing to release: a response read in process and dropped is freed by reference counting, or by
    the collection after the response (lev.asgi.BufferedWSGI)."""
