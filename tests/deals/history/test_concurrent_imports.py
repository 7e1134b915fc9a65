"""Two imports of one account at once: the second is refused, never interleaved; an import of another
account runs beside them. Real PostgreSQL transactions on three threads."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction

from deals.history.errors import ImportBusy
from deals.history.services import history_import
from tests.deals.history.helpers import counts, rows_ab, write_csv
from tests.factories import AccountFactory, LenderFactory
from tests.lev.concurrency import Worker, postgres_only, wait_for_lock_waiters


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_second_import_of_the_same_account_is_refused_while_the_first_runs(tmp_path):
    for name in ("JPMorgan Chase Bank, N.A.", "Wells Fargo Bank", "Arbor Realty Trust"):
        LenderFactory(name=name)
    mine, other = AccountFactory(), AccountFactory()
    path = write_csv(tmp_path / "history.csv", rows_ab())

    with transaction.atomic():
        # Hold the first import mid-write: its notes wait on this lock, after it took the account's.
        with connection.cursor() as cursor:
            cursor.execute("LOCK TABLE deals_note IN SHARE ROW EXCLUSIVE MODE")
        first = Worker(lambda: history_import(account=mine, path=path))
        first.start()
        wait_for_lock_waiters(1)
        elsewhere = Worker(lambda: history_import(account=other, path=path))
        elsewhere.start()
        wait_for_lock_waiters(2)  # another account's import got past the account lock: it waits on the notes too

        second = Worker(lambda: call_command("import_history", str(path), "--account", mine.slug,
                                             stdout=StringIO(), stderr=StringIO()))
        second.start()
        with pytest.raises(CommandError, match=f"Another history import of account {mine.slug} is running"):
            second.outcome()
        direct = Worker(lambda: history_import(account=mine, path=path, dry_run=True))
        direct.start()
        with pytest.raises(ImportBusy):
            direct.outcome()

    assert first.outcome().deals == 2 and elsewhere.outcome().deals == 2
    assert counts(mine) == counts(other) == (2, 5, 3)  # the refused ones wrote nothing
