"""The admin of tenancy: accounts with their members, API keys (revoked, never deleted), people and
permission groups, and the sign-in records (superusers only)."""

from __future__ import annotations

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group

from lev.accounts import services
from lev.accounts.admin_bases import (
    AccountScopedAdmin,
    SuperuserOnlyAdmin,
    TenancyInlineMixin,
    restrict_to_superusers,
    revoke_each,
    staff_account_ids,
)
from lev.accounts.models import Account, ApiKey, Membership
from lev.accounts.scopes import ALWAYS_GRANTED, CHOOSABLE, as_text


class MembershipInline(TenancyInlineMixin, admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]
    readonly_fields = ["created_at"]


@admin.register(Account)
class AccountAdmin(AccountScopedAdmin):
    """Accounts (tenants): a staff user sees and changes the accounts it is a member of, and their
    memberships (the people it may add are the people of its accounts). New accounts are made by
    superusers, since a staff user would not be a member of the one it made."""

    account_path = "pk"
    list_display = ["name", "slug", "created_at"]
    ordering = ["name", "pk"]  # the model has none: a page of the list must not depend on the plan
    search_fields = ["name", "slug"]
    readonly_fields = ["created_at"]
    inlines = [MembershipInline]

    def has_add_permission(self, request) -> bool:
        return request.user.is_superuser and super().has_add_permission(request)


class ApiKeyAdminForm(forms.ModelForm):
    """A key's scopes as one checkbox each (lev.accounts.scopes); stored space-separated."""

    scopes = forms.MultipleChoiceField(choices=list(CHOOSABLE.items()), widget=forms.CheckboxSelectMultiple,
                                       help_text="What the key may do. At least one. Every key may also "
                                                 "see who it is (" + ", ".join(sorted(ALWAYS_GRANTED)) + ").")

    class Meta:
        model = ApiKey
        fields = ["user", "account", "name", "scopes", "expires_at"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["scopes"] = sorted(self.instance.scope_set - ALWAYS_GRANTED)

    def clean_scopes(self) -> str:
        return as_text(self.cleaned_data["scopes"])


@admin.register(ApiKey)
class ApiKeyAdmin(AccountScopedAdmin):
    """Keys are created with `manage.py create_api_key` (the raw key is shown once there). A key
    stays with the user and account it was issued for; its name, scopes and expiry may change."""

    form = ApiKeyAdminForm
    list_display = ["name", "prefix", "user", "account", "scopes", "created_at", "expires_at", "revoked_at",
                    "last_used_at"]
    list_filter = ["account"]
    search_fields = ["name", "prefix", "user__username"]
    readonly_fields = ["user", "account", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_select_related = ["user", "account"]
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset):
        # The scoped queryset: another account's key is never among them.
        revoke_each(self, request, queryset, lambda key: services.api_key_revoke(key=key), "key(s)")


# --- people and sign-in records ----------------------------------------------------------------------
# django.contrib.auth's own admins of these two are replaced by tenancy-aware ones.
admin.site.unregister(get_user_model())
admin.site.unregister(Group)


@admin.register(get_user_model())
class AccountUserAdmin(AccountScopedAdmin, UserAdmin):
    """People: a staff user sees the people of its accounts, and changes (or deletes) only those who
    belong to no other account and are not superusers. It cannot make anyone a superuser or hand out
    groups and permissions (that would cross accounts); new people are made by superusers."""

    account_path = "memberships__account"
    account_path_is_many = True

    def _only_in_own_accounts(self, request, user) -> bool:
        account_ids = staff_account_ids(request)
        if account_ids is None:
            return True
        return not user.is_superuser and not user.memberships.exclude(account_id__in=account_ids).exists()

    def has_add_permission(self, request) -> bool:
        return request.user.is_superuser and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None) -> bool:
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or self._only_in_own_accounts(request, obj))

    def has_delete_permission(self, request, obj=None) -> bool:
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or self._only_in_own_accounts(request, obj))

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if not request.user.is_superuser:
            fields += ["is_superuser", "groups", "user_permissions"]
        return fields


@admin.register(Group)
class PermissionGroupAdmin(SuperuserOnlyAdmin, GroupAdmin):
    """Permission groups are shared by every account's staff: changing one would change what another
    account's people may do, so they are for superusers only."""


# Sign-in records (django-axes) name every account's people and their addresses: superusers only.
restrict_to_superusers(admin.site, AccessAttempt, AccessLog, AccessFailureLog)
