"""GET /metrics: Prometheus exposition for operators (prometheus_client, no hand-written format).

Apps define their own metrics with prometheus_client (they land in its default registry) and add
collectors of live state (e.g. the circuit breaker) with `register_live_collector`. Under gunicorn
with several processes, set PROMETHEUS_MULTIPROC_DIR (deploy/gunicorn.conf.py does) so a scrape
adds up every process's counters instead of showing one process's.

Access: with LEV_METRICS_TOKEN set, a scrape must send `Authorization: Bearer <token>`; without
one, /metrics is open in development and off (404) in production.
"""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.registry import Collector

from lev.errors import AuthenticationFailed, NotFound

_live_collectors: list[Collector] = []


def register_live_collector(collector: Collector) -> None:
    """A collector computed at scrape time (state shared through Redis, not a per-process count)."""
    if collector not in _live_collectors:
        _live_collectors.append(collector)


class _Live(Collector):
    def collect(self):
        for collector in _live_collectors:
            yield from collector.collect()


def _registry() -> CollectorRegistry:
    if settings.PROMETHEUS_MULTIPROC_DIR:
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = CollectorRegistry()
        registry.register(_Default())
    registry.register(_Live())
    return registry


class _Default(Collector):
    def collect(self):
        yield from REGISTRY.collect()


def _error(error) -> JsonResponse:
    return JsonResponse(error.as_body(), status=error.http_status, headers=error.headers())


@require_GET
@never_cache
def metrics_view(request: HttpRequest) -> HttpResponse:
    token = settings.LEV_METRICS_TOKEN
    if token:
        sent = request.headers.get("Authorization", "")
        if not hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
            return _error(AuthenticationFailed("Unauthorized: /metrics needs the metrics token."))
    elif settings.PRODUCTION:
        return _error(NotFound())
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)


def start_worker_metrics_server(**_signal_kwargs) -> None:
    """In a Celery worker's main process (signal `worker_init`): serve its metrics on
    LEV_WORKER_METRICS_PORT when set. With the prefork pool, the jobs run in child processes: set
    PROMETHEUS_MULTIPROC_DIR too, so this endpoint adds up what every child recorded."""
    port = settings.LEV_WORKER_METRICS_PORT
    if not port:
        return
    from prometheus_client import start_http_server

    start_http_server(port, addr=settings.LEV_WORKER_METRICS_ADDR, registry=_registry())
