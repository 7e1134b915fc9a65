"""A benchmark's own PostgreSQL database, next to the one DATABASE_URL names, so development data is
never touched (used by bench_ranking.py and bench_placements.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connection


@contextmanager
def own_database(suffix: str, *, keepdb: bool) -> Iterator[str]:
    """Create and migrate `<name>_<suffix>`, switch the connection to it, and drop it afterwards
    (with `keepdb`, reuse it and keep it). Never drops a database this run did not create: when it
    exists already and `keepdb` is off, this exits with status 2."""
    if connection.vendor != "postgresql":
        print(f"DATABASE_URL must point at PostgreSQL (the production database); this is {connection.vendor}.",
              file=sys.stderr)
        raise SystemExit(2)
    name = f"{settings.DATABASES['default']['NAME']}_{suffix}"
    with connection._nodb_cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        exists = cursor.fetchone() is not None
    if exists and not keepdb:
        print(f"Database {name!r} already exists; pass --keepdb to reuse it, or drop it first.", file=sys.stderr)
        raise SystemExit(2)
    connection.settings_dict.setdefault("TEST", {})["NAME"] = name
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=False, keepdb=keepdb)
    try:
        yield name
    finally:
        if not keepdb:
            connection.creation.destroy_test_db(old_name, verbosity=0)
