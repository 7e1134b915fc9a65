"""Companies (an account's sponsors, borrowers, brokers and others) and contacts (people at one of
them, or at a directory lender).

Imported by `deals.models`, so these are models of the `deals` app. Both are the account's own data:
a company belongs to one account, and so does every contact, a lender contact included — the lender
is global (the directory), what the account knows of the people there is not. Another account never
sees them. A contact is at exactly one of a company (of its own account, kept so by
`deals.companies.services`) or a lender (a database constraint).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from lev import limits
from lev.enums import COMPANY_KINDS, choices


class Company(models.Model):
    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="companies")
    kind = models.CharField(max_length=12, choices=choices(COMPANY_KINDS), default="other")
    name = models.CharField(max_length=limits.COMPANY_NAME_MAX)
    website = models.CharField(max_length=limits.COMPANY_WEBSITE_MAX, blank=True, default="")
    location = models.CharField(max_length=limits.COMPANY_LOCATION_MAX, blank=True, default="",
                                help_text="City and state, or an address.")
    notes = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        verbose_name_plural = "companies"
        constraints = [models.CheckConstraint(condition=Q(kind__in=COMPANY_KINDS), name="company_kind_valid")]
        indexes = [models.Index(fields=["account", "name", "id"], name="company_account_name")]

    def __str__(self) -> str:
        return self.name


class Contact(models.Model):
    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="contacts")
    company = models.ForeignKey(Company, null=True, blank=True, on_delete=models.CASCADE, related_name="contacts")
    # The account's relationship data about a directory lender; the lender's page in the admin shows it
    # to the account's staff only. A lender removed from the directory takes them with it.
    lender = models.ForeignKey("lenders.Lender", null=True, blank=True, on_delete=models.CASCADE,
                               related_name="account_contacts")
    name = models.CharField(max_length=limits.CONTACT_NAME_MAX)
    title = models.CharField(max_length=limits.CONTACT_TITLE_MAX, blank=True, default="")
    email = models.CharField(max_length=limits.EMAIL_MAX, blank=True, default="")
    phone = models.CharField(max_length=limits.CONTACT_PHONE_MAX, blank=True, default="")
    notes = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(company__isnull=False, lender__isnull=True)
                           | Q(company__isnull=True, lender__isnull=False)),
                name="contact_at_company_or_lender",
            ),
        ]
        indexes = [models.Index(fields=["account", "lender", "name"], name="contact_account_lender")]

    def __str__(self) -> str:
        return self.name
