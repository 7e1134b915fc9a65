"""Outreach in the admin: the outbox — every email the account's sends wrote (OutboundEmail), account-scoped
and read-only, each with its status, attempts, next attempt, the last error in a plain sentence and the
body as sent. On the embedded default (no EMAIL_HOST) this is where the mail `make run` sends can be read.
One action: withdraw the deal package link of the emails chosen (their pages answer "withdrawn").

And the account's email templates (OutreachTemplate): the teaser and the follow-up, written in the admin
with the rules the REST API keeps (deals.outreach.templates.check_template: known placeholders only, a
subject on one line); a new one starts from Lev's own text, and deleting it puts Lev's own back."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe

from deals.outreach import imap, services, templates
from deals.outreach.models import AccountMailbox, OutboundEmail, OutreachTemplate, PackageLink
from lev import formatting
from lev.accounts.admin_bases import (
    ADMIN_CSS,
    AccountScopedAdmin,
    AccountSetOnceAdmin,
    staff_account_ids,
    writable_account_ids,
)
from lev.admin_lists import change_url, two_lines
from lev.errors import ValidationFailed


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
    # The status filter counts the emails in each status: a send's progress at a glance.
    show_facets = admin.ShowFacets.ALWAYS

    class Media:
        css = ADMIN_CSS

    def lookup_allowed(self, lookup, value, request=None) -> bool:
        # "This deal's outbox" (the deal's Email lenders page) filters by the deal.
        return lookup == "placement__deal__id__exact" or super().lookup_allowed(lookup, value, request)

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


class OutreachTemplateForm(forms.ModelForm):
    class Meta:
        model = OutreachTemplate
        fields = ["account", "kind", "subject", "body"]
        widgets = {"body": forms.Textarea(attrs={"rows": 16, "cols": 80})}

    def clean(self):
        data = super().clean()
        try:
            templates.check_template(subject=data.get("subject") or "", body=data.get("body") or "")
        except ValidationFailed as exc:
            for name, problems in exc.fields.items():
                for problem in problems:
                    self.add_error(name if name in self.fields else None, f"The {name} {problem}.")
        return data


@admin.register(OutreachTemplate)
class OutreachTemplateAdmin(AccountSetOnceAdmin):
    form = OutreachTemplateForm
    list_display = ["template", "account", "updated_at"]
    list_display_links = None  # the first cell links to the template
    list_filter = ["kind", "account"]
    list_select_related = ["account"]
    readonly_fields = ["placeholders", "updated_at"]

    class Media:
        css = ADMIN_CSS

    def get_fields(self, request, obj=None):
        return ["account", "kind", "subject", "body", "placeholders", *(["updated_at"] if obj else [])]

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "kind"] if obj is not None else fields  # one per account and kind

    def get_changeform_initial_data(self, request):
        """A new template starts from Lev's own text of its kind (the teaser unless ?kind= says)."""
        initial = super().get_changeform_initial_data(request)
        kind = initial.get("kind") if initial.get("kind") in templates.DEFAULTS else "teaser"
        subject, body = templates.DEFAULTS[kind]
        return {**initial, "kind": kind, "subject": initial.get("subject", subject), "body": initial.get("body", body)}

    @admin.display(description="Template", ordering="kind")
    def template(self, found: OutreachTemplate) -> str:
        return two_lines(found.get_kind_display(), found.subject, change_url(found))

    @admin.display(description="Placeholders")
    def placeholders(self, _found: OutreachTemplate | None = None) -> str:
        return format_html_join(mark_safe("<br>"), "<code>${}</code>: {}", templates.PLACEHOLDERS.items())


class AccountMailboxForm(forms.ModelForm):
    """The password is written, never shown: left blank on a saved mailbox it stays as it is. Saving signs
    in and opens the folder once, so a wrong host, password or folder is said on the form, in words."""

    password = forms.CharField(widget=forms.PasswordInput(render_value=False), required=False, max_length=255,
                               help_text="Kept encrypted; never shown again. Leave blank to keep the saved one.")

    class Meta:
        model = AccountMailbox
        fields = ["account", "host", "port", "use_ssl", "username", "password", "folder", "enabled"]

    def clean(self):
        data = super().clean()
        if not data.get("password"):
            if self.instance.pk is None:
                self.add_error("password", "Enter the mailbox's password.")
                return data
            data["password"] = self.instance.password
        if self.errors or not data.get("enabled"):
            return data
        problem = imap.sign_in_problem(imap.Mailbox(data["host"], data["port"], data["use_ssl"], data["username"],
                                                    data["password"], data.get("folder") or "INBOX"))
        if problem:
            raise forms.ValidationError(problem)
        return data


@admin.register(AccountMailbox)
class AccountMailboxAdmin(AccountSetOnceAdmin):  # one mailbox per account
    form = AccountMailboxForm
    list_display = ["mailbox", "account", "enabled", "last_polled_at", "last_result"]
    list_display_links = None  # the first cell links to the mailbox
    list_filter = ["enabled", "account"]
    list_select_related = ["account"]
    readonly_fields = ["last_polled_at", "last_result"]

    class Media:
        css = ADMIN_CSS

    def get_fields(self, request, obj=None):
        fields = ["account", "host", "port", "use_ssl", "username", "password", "folder", "enabled"]
        return [*fields, "last_polled_at", "last_result"] if obj is not None else fields


    @admin.display(description="Mailbox", ordering="host")
    def mailbox(self, found: AccountMailbox) -> str:
        return two_lines(f"{found.username} at {found.host}", f"folder {found.folder}", change_url(found))
