"""The peers' database access: one psycopg async connection per worker process (as Lev holds one
database connection per process), opened on first use, the deal read with deal_row.SQL."""

from __future__ import annotations

import asyncio
import os

import psycopg
from deal_row import SQL, payload

_conn: psycopg.AsyncConnection | None = None
_lock = asyncio.Lock()


async def read_deal(deal_id: int) -> dict | None:
    global _conn
    if _conn is None or _conn.closed:
        async with _lock:
            if _conn is None or _conn.closed:
                _conn = await psycopg.AsyncConnection.connect(os.environ["PEERS_DSN"], autocommit=True)
    async with _conn.cursor() as cursor:
        await cursor.execute(SQL, (deal_id,))
        row = await cursor.fetchone()
    return None if row is None else payload(row)
