"""The admin of companies and contacts (account-scoped), and the account's contacts on the lender page.

The lender page belongs to the directory (`lenders.admin`, global); the contacts there are each
account's own, so this module adds them to that page as an inline that shows a staff user the contacts
of their own accounts only (every account's to a superuser). `lenders` never imports `deals`: the inline
is attached from here, above it.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.core.validators import RegexValidator
from django.db.models import Count

from deals.companies.models import Company, Contact
from lenders.admin import LenderAdmin
from lev import formatting, limits
from lev.accounts.admin_bases import ADMIN_CSS, AccountSetOnceAdmin, TenancyInlineMixin, staff_account_ids
from lev.admin_lists import change_url, two_lines

WEBSITE = RegexValidator(limits.WEBSITE_PATTERN, "Enter a web address starting with http:// or https://.")
EMAIL = RegexValidator(limits.EMAIL_PATTERN, "Enter an email address such as name@example.com.")
PHONE = RegexValidator(limits.PHONE_PATTERN, "Enter a phone number such as +1 212 555 0100 (an extension as x12).")


class CompanyForm(forms.ModelForm):
    website = forms.CharField(required=False, max_length=limits.COMPANY_WEBSITE_MAX, validators=[WEBSITE])
    notes = forms.CharField(required=False, max_length=limits.COMPANY_NOTES_MAX,
                            widget=forms.Textarea(attrs={"rows": 3}))

    class Meta:
        model = Company
        fields = ["account", "kind", "name", "website", "location", "notes"]


class ContactForm(forms.ModelForm):
    """The same rules as the API: the formats of lev.limits, at a company or a lender (one), and a
    company of the contact's own account."""

    email = forms.CharField(required=False, max_length=limits.EMAIL_MAX, validators=[EMAIL])
    phone = forms.CharField(required=False, max_length=limits.CONTACT_PHONE_MAX, validators=[PHONE])
    notes = forms.CharField(required=False, max_length=limits.CONTACT_NOTES_MAX,
                            widget=forms.Textarea(attrs={"rows": 2}))

    class Meta:
        model = Contact
        fields = ["account", "company", "lender", "name", "title", "email", "phone", "notes"]

    def clean(self):
        data = super().clean()
        company, lender = data.get("company"), data.get("lender")
        if (company is None) == (lender is None):
            raise forms.ValidationError("A contact is at a company or at a lender: choose one of them.")
        account = data.get("account") or getattr(self.instance, "account", None)
        if company is not None and account is not None and company.account_id != account.pk:
            self.add_error("company", "Choose a company of the contact's own account.")
        return data


class CompanyContactInline(TenancyInlineMixin, admin.TabularInline):
    model = Contact
    fk_name = "company"
    form = ContactForm
    fields = ["name", "title", "email", "phone"]
    extra = 0


@admin.register(Company)
class CompanyAdmin(AccountSetOnceAdmin):  # its contacts and deals are that account's
    form = CompanyForm
    list_display = ["name", "kind", "location", "contacts", "account", "updated_at"]
    list_filter = ["kind", "account"]
    search_fields = ["name", "location", "notes"]
    list_select_related = ["account"]
    ordering = ["name", "id"]  # stated: the contact count's GROUP BY drops the model's ordering
    readonly_fields = ["created_at", "updated_at"]
    inlines = [CompanyContactInline]

    class Media:
        css = ADMIN_CSS

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(contact_total=Count("contacts"))


    def save_formset(self, request, form, formset, change):
        # A person added on a company's page is a contact of the company's account.
        for contact in formset.save(commit=False):
            contact.account_id = form.instance.account_id
            contact.save()
        for contact in formset.deleted_objects:
            contact.delete()

    @admin.display(description="Contacts", ordering="contact_total")
    def contacts(self, company: Company) -> int:
        return company.contact_total


@admin.register(Contact)
class ContactAdmin(AccountSetOnceAdmin):
    form = ContactForm
    # A laptop's width: the person over their title, where they work, how to reach them.
    list_display = ["person", "works_at", "reach", "account"]
    list_display_links = None  # the first cell links to the contact
    list_filter = ["account"]
    search_fields = ["name", "title", "email", "company__name", "lender__name"]
    list_select_related = ["account", "company", "lender"]
    readonly_fields = ["created_at", "updated_at"]

    class Media:
        css = ADMIN_CSS

    @admin.display(description="Contact", ordering="name")
    def person(self, contact: Contact) -> str:
        return two_lines(contact.name, contact.title, change_url(contact))

    @admin.display(description="Company or lender")
    def works_at(self, contact: Contact) -> str:
        return str(contact.company or contact.lender or formatting.EMPTY)

    @admin.display(description="Email / phone", ordering="email")
    def reach(self, contact: Contact) -> str:
        return two_lines(contact.email or formatting.EMPTY, contact.phone)



class LenderContactInline(TenancyInlineMixin, admin.TabularInline):
    """The staff user's accounts' contacts at this lender (a superuser sees every account's)."""

    model = Contact
    fk_name = "lender"
    form = ContactForm
    fields = ["account", "name", "title", "email", "phone"]
    extra = 0
    # Folded: the lender's profile above lists them (deals.workspace.lender_page); open it to edit them.
    classes = ["collapse"]
    verbose_name = "contact of your account"
    verbose_name_plural = "your accounts' contacts at this lender"

    def get_queryset(self, request):
        contacts = super().get_queryset(request).select_related("account")
        account_ids = staff_account_ids(request)
        return contacts if account_ids is None else contacts.filter(account_id__in=account_ids)


LenderAdmin.inlines = [*LenderAdmin.inlines, LenderContactInline]
