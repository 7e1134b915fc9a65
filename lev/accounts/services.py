"""Writes of tenancy: accounts and their API keys. Keyword-only; callers pass validated data."""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from lev.accounts.auth import generate_key, hash_key
from lev.accounts.errors import NotAMember
from lev.accounts.models import Account, ApiKey, Membership
from lev.accounts.scopes import ALL_SCOPES, SCOPES, as_text


@transaction.atomic
def account_create(*, name: str, owner=None) -> Account:
    base = slugify(name)[:70] or "account"
    slug, n = base, 1
    while Account.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    account = Account.objects.create(name=name, slug=slug)
    if owner is not None:
        Membership.objects.create(account=account, user=owner, role=Membership.Role.OWNER)
    return account


def api_key_create(*, user, account: Account, name: str, expires_at: dt.datetime | None = None,
                   scopes: frozenset[str] = ALL_SCOPES, raw: str | None = None) -> tuple[ApiKey, str]:
    """Create a key and return it with its raw value — the only time the raw value exists, unless
    the caller already holds it (`raw`: the demo key that `make run` keeps in a local file). `scopes`
    (lev.accounts.scopes) bound what it may do: every scope unless told otherwise."""
    if not scopes or not scopes <= ALL_SCOPES:
        raise ValueError(f"an API key needs one or more of the scopes {', '.join(SCOPES)}")
    if not Membership.objects.filter(user=user, account=account).exists():
        raise NotAMember(user, account)
    raw = raw or generate_key()
    key = ApiKey.objects.create(
        user=user, account=account, name=name, prefix=raw[:12], key_hash=hash_key(raw), expires_at=expires_at,
        scopes=as_text(scopes),
    )
    return key, raw


def api_key_revoke(*, key: ApiKey) -> ApiKey:
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
    return key
