from __future__ import annotations

from typing import Any

from rest_framework import serializers

from deals.companies.models import Company, Contact
from deals.companies.selectors import CompanyFilters
from lev import limits
from lev.enums import COMPANY_KINDS
from lev.serializers import (
    EnumField,
    PageQuerySerializer,
    StrictSerializer,
    TextRegexField,
    _messages,
    text_field,
)


def pattern_field(pattern: str, *, max_length: int, example: str, help_text: str) -> TextRegexField:
    # The patterns of lev.limits, which the MCP tools' schemas carry too: both doors accept the same text.
    return TextRegexField(
        pattern, max_length=max_length, required=False, allow_blank=True, allow_null=True, help_text=help_text,
        error_messages=_messages(invalid=f"must be {example}",
                                 max_length=f"must be at most {max_length} characters"),
    )


def email_field() -> TextRegexField:
    return pattern_field(limits.EMAIL_PATTERN, max_length=limits.EMAIL_MAX,
                         example="an email address such as name@example.com", help_text="Email address.")


# --- input --------------------------------------------------------------------------------------------
class CompanyInputSerializer(StrictSerializer):
    kind = EnumField(COMPANY_KINDS, required=True, help_text="sponsor, borrower, broker or other.")
    name = text_field(max_length=limits.COMPANY_NAME_MAX, required=True, allow_blank=False, help_text="Company name.")
    website = pattern_field(limits.WEBSITE_PATTERN, max_length=limits.COMPANY_WEBSITE_MAX,
                            example="a web address starting with http:// or https:// (https://example.com)",
                            help_text="https://…")
    location = text_field(max_length=limits.COMPANY_LOCATION_MAX, help_text="City and state, or an address.")
    notes = text_field(max_length=limits.COMPANY_NOTES_MAX)


class ContactInputSerializer(StrictSerializer):
    name = text_field(max_length=limits.CONTACT_NAME_MAX, required=True, allow_blank=False, help_text="Full name.",
                      single_line=True)
    title = text_field(max_length=limits.CONTACT_TITLE_MAX, help_text="Job title.")
    email = email_field()
    phone = pattern_field(limits.PHONE_PATTERN, max_length=limits.CONTACT_PHONE_MAX,
                          example="a phone number such as +1 212 555 0100 (an extension as x12)",
                          help_text="Phone number, e.g. +1 212 555 0100 x12.")
    notes = text_field(max_length=limits.CONTACT_NOTES_MAX)


class CompanyListQuerySerializer(PageQuerySerializer):
    kind = EnumField(COMPANY_KINDS, required=False)
    search = text_field(max_length=limits.SEARCH_TEXT_MAX, help_text="Words in the company name.")

    def to_filters(self) -> CompanyFilters:
        return CompanyFilters(kind=self.validated_data.get("kind"), search=self.validated_data.get("search"))


class ContactListQuerySerializer(PageQuerySerializer):
    search = text_field(max_length=limits.SEARCH_TEXT_MAX, help_text="Words in the contact's name.")


# --- output -------------------------------------------------------------------------------------------
class CompanySerializer(serializers.ModelSerializer):
    """A company the team works with (a sponsor, a borrower, a broker, ...), with its number of contacts."""

    contact_count = serializers.IntegerField(read_only=True, default=0)

    class Meta:
        model = Company
        fields = ("id", "kind", "name", "website", "location", "notes", "contact_count", "created_at", "updated_at")


class ContactSerializer(serializers.ModelSerializer):
    """A person at a company or at a lender, and how to reach them."""

    company_name = serializers.SerializerMethodField()
    lender_name = serializers.SerializerMethodField()

    class Meta:
        model = Contact
        fields = ("id", "company_id", "company_name", "lender_id", "lender_name", "name", "title", "email", "phone",
                  "notes", "created_at", "updated_at")

    def get_company_name(self, contact: Contact) -> str | None:
        return contact.company.name if contact.company_id else None

    def get_lender_name(self, contact: Contact) -> str | None:
        return contact.lender.name if contact.lender_id else None


class CompanyRefSerializer(serializers.Serializer):
    """A deal's sponsor or borrower: enough to name it (the rest: GET /companies/{id}/)."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return {"id": instance.pk, "name": instance.name, "kind": instance.kind}
