"""Tenancy in the admin: a staff user who is not a superuser sees the deal data of its own accounts
only, so another account's deal is missing there exactly as it is in the API."""

from __future__ import annotations

from django.contrib import admin

from deals import selectors

# The admin's own stylesheet (deals/static/lev_admin/admin.css), served by the site itself.
ADMIN_CSS = {"all": ["lev_admin/admin.css"]}


class AccountScopedAdmin(admin.ModelAdmin):
    """A ModelAdmin whose rows belong to an account, reached from the model by `account_path`."""

    account_path = "account"

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        account_ids = selectors.staff_account_ids(user=request.user)
        if account_ids is None:
            return queryset
        return queryset.filter(**{f"{self.account_path}__in": account_ids})
