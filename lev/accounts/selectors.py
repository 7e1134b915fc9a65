"""Reads of tenancy: the membership a request acts through, and whether it may write."""

from __future__ import annotations

from lev.accounts.credential_cache import credential_cache
from lev.accounts.models import Membership
from lev.errors import Forbidden


def membership_for_user(*, user, api_key=None) -> Membership:
    """The membership a request acts under: in the API key's account, else the user's first one.

    A key whose user has left its account no longer grants anything there. A membership found is
    kept in this process's credential cache (lev.accounts.credential_cache) like the credential itself: a
    removed membership or a changed role applies at once in this process, in others within
    LEV_AUTH_CACHE_SECONDS.
    """
    account_id = getattr(api_key, "account_id", None) if api_key is not None else None
    cache_key = ("membership", user.pk, account_id)
    membership = credential_cache.get(cache_key)
    if membership is not None:
        return membership
    generation = credential_cache.generation()
    memberships = Membership.objects.select_related("account").filter(user=user)
    if account_id:
        memberships = memberships.filter(account_id=account_id)
    membership = memberships.order_by("id").first()
    if membership is None:
        raise Forbidden("Forbidden: your user is not a member of this account.")
    credential_cache.put(cache_key, membership, generation)
    return membership


def check_can_write(*, membership: Membership) -> None:
    if membership.role == Membership.Role.VIEWER:
        raise Forbidden("Forbidden: viewers of an account cannot change its deals.")


def check_staff_can_write(*, user, account_id: int) -> None:
    """Raise Forbidden unless the staff user may change the account's deals (superusers may)."""
    if user.is_superuser:
        return
    membership = Membership.objects.filter(user=user, account_id=account_id).first()
    if membership is None:  # the admin's scoped querysets never show such a deal
        raise Forbidden("Forbidden: your user is not a member of this account.")
    check_can_write(membership=membership)


def check_can_administer(*, membership: Membership) -> None:
    """An account admin (its owner role) sets up what the whole team shares, such as the pipeline's stages."""
    if membership.role != Membership.Role.OWNER:
        raise Forbidden("Forbidden: only an account admin (owner) can change this.")
