"""REST output of the caller's own account (GET /api/v1/account/): who the caller is, where, as what,
with which credential, and what is left of its rate limits."""

from __future__ import annotations

from rest_framework import serializers

from lev.accounts import scopes
from lev.accounts.models import Membership

CREDENTIAL_KINDS = ("api_key", "oauth", "session")


class AccountUserSerializer(serializers.Serializer):
    username = serializers.CharField()
    name = serializers.CharField(help_text="First and last name; empty when the user has none.")
    email = serializers.CharField(help_text="Empty when the user has none.")


class AccountSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    slug = serializers.CharField()


class CredentialSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=CREDENTIAL_KINDS, help_text=(
        "`api_key` (a `lev_sk_…` key), `oauth` (an access token of a connected app) or `session` (signed in to "
        "the site)."))
    name = serializers.CharField(help_text="The API key's name, or the connected app's (client) name.")
    prefix = serializers.CharField(allow_null=True, help_text="The API key's first characters; null otherwise.")
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=list(scopes.SCOPES)), help_text=(
        "What this credential may do, narrowed to what it was granted (an OAuth token: what the person allowed)."))
    expires_at = serializers.DateTimeField(allow_null=True, help_text=(
        "When the credential stops working; null for a key without an expiry and for a session."))


class RateLimitSerializer(serializers.Serializer):
    methods = serializers.ListField(child=serializers.CharField(), help_text="The HTTP methods it counts.")
    limit = serializers.IntegerField(help_text="Requests allowed per window.")
    window_seconds = serializers.IntegerField()
    remaining = serializers.IntegerField(help_text="Requests left in the current window.")
    resets_at = serializers.DateTimeField(help_text="When the window ends and `remaining` is `limit` again.")
    resets_in_seconds = serializers.IntegerField()


class RateLimitsSerializer(serializers.Serializer):
    reads = RateLimitSerializer()
    writes = RateLimitSerializer()
    counted = serializers.ChoiceField(choices=["shared", "per_process"], help_text=(
        "`shared`: counted in Redis for every server process. `per_process`: each server process counts "
        "apart (the embedded setup, or while Redis is down), so `remaining` is this process's."))
    this_request_counted = serializers.BooleanField(help_text="Always false: reading this does not use a request.")


class AccountMeSerializer(serializers.Serializer):
    """GET /api/v1/account/ (documentation and output)."""

    user = AccountUserSerializer()
    account = AccountSummarySerializer()
    role = serializers.ChoiceField(choices=Membership.Role.choices, help_text=(
        "The user's role in the account: `viewer` may only read."))
    can_write = serializers.BooleanField(help_text="False for a viewer: every write is refused (403).")
    credential = CredentialSerializer()
    rate_limits = RateLimitsSerializer()
