"""The demo API key that `make run` prints: the same on every run on this machine, so an MCP client
configured yesterday still connects, and never part of the repository.

The raw key lives in a local file (`settings.LEV_DEMO_KEY_FILE`, default `.demo-api-key` in the
project directory: gitignored, left out of the Docker image, mode 0600); the database holds only
its hash, as for every key. A database that does not know the key yet (a new SQLite file, another
DATABASE_URL) gets it registered; a key revoked in the admin is replaced by a new one, written back
to the file. Nothing is derived from SECRET_KEY: the development SECRET_KEY is public.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from lev.accounts import services
from lev.accounts.auth import KEY_PREFIX, hash_key
from lev.accounts.models import Account, ApiKey

DEMO_KEY_NAME = "demo"
# What generate_key() makes: the prefix and 43 URL-safe characters (32 random bytes).
_KEY_PATTERN = re.compile(re.escape(KEY_PREFIX) + r"[A-Za-z0-9_-]{43}")


def key_file() -> Path:
    return Path(settings.LEV_DEMO_KEY_FILE)


def read_key_file(path: Path) -> str | None:
    """The key kept in `path`, or None when there is none (or the file holds something else)."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    return text if _KEY_PATTERN.fullmatch(text) else None


def write_key_file(path: Path, raw: str) -> None:
    """Write the key readable by its owner only (created 0600, not widened by the umask)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(raw + "\n")
    path.chmod(0o600)


def _usable(key: ApiKey, *, user, account: Account) -> bool:
    expired = key.expires_at is not None and key.expires_at <= timezone.now()
    return key.revoked_at is None and not expired and key.user_id == user.pk and key.account_id == account.pk


@transaction.atomic
def demo_api_key_ensure(*, user, account: Account) -> tuple[str, bool]:
    """The demo key of `user` in `account`: (raw key, whether it is new).

    Side effects: registers the file's key in this database when missing; issues (and writes to
    the file) a new key when there is no usable one; revokes every other demo key of the user, so
    one demo key is live at a time.
    """
    path = key_file()
    kept = read_key_file(path)
    if kept is not None:
        key = ApiKey.objects.filter(key_hash=hash_key(kept)).first()
        if key is None:
            key, _ = services.api_key_create(user=user, account=account, name=DEMO_KEY_NAME, raw=kept)
        if _usable(key, user=user, account=account):
            _revoke_other_demo_keys(user=user, account=account, keep=key)
            return kept, False
        # Revoked (or expired) on purpose: a new key follows, not the old one brought back.
    key, raw = services.api_key_create(user=user, account=account, name=DEMO_KEY_NAME)
    write_key_file(path, raw)
    _revoke_other_demo_keys(user=user, account=account, keep=key)
    return raw, True


def _revoke_other_demo_keys(*, user, account: Account, keep: ApiKey) -> None:
    ApiKey.objects.filter(Q(user=user) | Q(account=account), name=DEMO_KEY_NAME, revoked_at=None).exclude(
        pk=keep.pk).update(
        revoked_at=timezone.now())
