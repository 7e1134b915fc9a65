"""Benchmark settings: the product's settings plus a trivial view to compare against."""

from lev.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
LEV_RATE_LIMIT_READS = "100000000/min"
LEV_RATE_LIMIT_WRITES = "100000000/min"
LOGGING["root"]["level"] = "WARNING"  # noqa: F405
LOGGING["loggers"]["lev.access"] = {"level": "WARNING"}  # noqa: F405
