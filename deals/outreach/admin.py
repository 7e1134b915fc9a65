"""Outreach in the admin: the outbox — every email the account's sends wrote (OutboundEmail), account-scoped
and read-only, each with its status, attempts, next attempt, the last error in a plain sentence and the
body as sent. On the embedded default (no EMAIL_HOST) this is where the mail `make run` sends can be read.
One action: withdraw the deal package link of the emails chosen (their pages answer "withdrawn")."""

from __future__ import annotations

from django.contrib import admin, messages

from deals.outreach import services
from deals.outreach.models import OutboundEmail, PackageLink
from lev import formatting
from lev.accounts.admin_bases import ADMIN_CSS, AccountScopedAdmin, staff_account_ids, writable_account_ids
from lev.admin_lists import change_url, two_lines


@admin.register(OutboundEmail)
class OutboundEmailAdmin(AccountScopedAdmin):
    list_display = ["email_cell", "lender", "status", "attempts", "sent_on", "package_state"]
    list_display_links = None  # the first cell links to the email
    list_filter = ["status", "kind", "account"]
    search_fields = ["to_address", "to_name", "subject", "placement__lender__name", "placement__deal__title"]
    list_select_related = ["account", "placement__lender", "placement__deal", "package"]
    fields = ["account", "placement", "kind", "to_name", "to_address", "subject", "status", "attempts",
              "next_attempt_at", "last_error", "sent_at", "created_at", "message_id", "body"]
    readonly_fields = fields
    date_hierarchy = "created_at"
    actions = ["withdraw_packages"]

    class Media:
        css = ADMIN_CSS

    def has_add_permission(self, request) -> bool:
        return False  # emails are written by a send (the deal's outreach), never by hand

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # the outbox is a record of what was sent: read-only

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def has_withdraw_permission(self, request) -> bool:
        return bool(writable_account_ids(request)) or staff_account_ids(request) is None

    @admin.display(description="Email", ordering="created_at")
    def email_cell(self, email: OutboundEmail) -> str:
        to = f"{email.to_name} <{email.to_address}>" if email.to_name else email.to_address
        return two_lines(email.subject, f"{email.get_kind_display()} to {to} · {email.placement.deal.title}",
                         change_url(email))

    @admin.display(description="Lender", ordering="placement__lender__name")
    def lender(self, email: OutboundEmail) -> str:
        return email.placement.lender.name

    @admin.display(description="Sent", ordering="sent_at")
    def sent_on(self, email: OutboundEmail) -> str:
        return formatting.day(email.sent_at) if email.sent_at else formatting.EMPTY

    @admin.display(description="Package")
    def package_state(self, email: OutboundEmail) -> str:
        link = email.package
        if link is None:
            return formatting.EMPTY
        if link.revoked_at is not None:
            return "Withdrawn"
        opens = f"opened {link.opens} time{'s' if link.opens != 1 else ''}" if link.opens else "not opened"
        return two_lines(opens, f"until {formatting.day(link.expires_at)}")

    @admin.action(description="Withdraw the deal package link of the chosen emails", permissions=["withdraw"])
    def withdraw_packages(self, request, queryset) -> None:
        writable = writable_account_ids(request)
        superuser = staff_account_ids(request) is None
        links = PackageLink.objects.filter(pk__in=queryset.values("package_id"), revoked_at__isnull=True)
        if not superuser:
            links = links.filter(account_id__in=writable)
        count = 0
        for link in links:
            services.package_revoke(package=link)
            count += 1
        self.message_user(request, f"{count} package link{'s' if count != 1 else ''} withdrawn.", messages.SUCCESS)
