"""REST input and output of outreach (deals.outreach.api). Input is strict (unknown keys refused)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from deals.outreach.models import OutboundEmail, OutreachSend, PackageLink
from deals.outreach.templates import PLACEHOLDERS
from lev import limits
from lev.enums import OUTREACH_KINDS
from lev.serializers import EnumField, StrictSerializer, bool_field, int_field, text_field

EMAIL_STATUSES = tuple(OutboundEmail.Status.values)


def _ids(max_length: int, help_text: str) -> serializers.ListField:
    return serializers.ListField(child=int_field(min_value=1, max_value=limits.MAX_ID, allow_null=False,
                                                 required=True),
                                 required=False, min_length=1, max_length=max_length, help_text=help_text)


# --- input --------------------------------------------------------------------------------------------
class OutreachSendInputSerializer(StrictSerializer):
    """Which placements to email, what to share, and which template."""

    placement_ids = _ids(limits.OUTREACH_PLACEMENTS_MAX,
                         "The deal's placements to email; a teaser takes these or all_drafts (one of them).")
    all_drafts = bool_field(help_text="Email every draft placement of the deal (instead of placement_ids).")
    document_ids = serializers.ListField(
        child=int_field(min_value=1, max_value=limits.MAX_ID, allow_null=False, required=True), required=False,
        max_length=limits.OUTREACH_DOCUMENTS_MAX, help_text="The deal's documents each lender's package shares.")
    kind = EnumField(OUTREACH_KINDS, required=False,
                     help_text="teaser (default) or follow_up. A follow_up without placement_ids goes to the "
                               "placements emailed and not answered.")
    expires_in_days = int_field(min_value=1, max_value=limits.PACKAGE_EXPIRES_DAYS_MAX,
                                help_text="How long each package link works (default 30).")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        kind = data.get("kind") or "teaser"
        if data.get("placement_ids") and data.get("all_drafts"):
            raise serializers.ValidationError({"all_drafts": [NOT_BOTH]})
        if kind == "teaser" and not data.get("placement_ids") and not data.get("all_drafts"):
            raise serializers.ValidationError({"placement_ids": [ONE_OF]})
        return data


# The send's rules over two fields, which a schema cannot state (the fields' descriptions say them).
NOT_BOTH = "give placement_ids or all_drafts, not both"
ONE_OF = "give placement_ids, or all_drafts: true"
TARGET_RULES = (f"Validation failed: all_drafts {NOT_BOTH}", f"Validation failed: placement_ids {ONE_OF}")


class OutreachTemplateInputSerializer(StrictSerializer):
    subject = text_field(max_length=limits.EMAIL_SUBJECT_MAX, required=True, allow_blank=False,
                         help_text="One line; placeholders such as $deal_title (only those the template list names).")
    body = text_field(max_length=limits.EMAIL_BODY_MAX, required=True, allow_blank=False,
                      help_text="The email's text; placeholders such as $package_link (only those the template list "
                                "names).")


# --- output -------------------------------------------------------------------------------------------
class OutboundEmailSerializer(serializers.ModelSerializer):
    """One email of the outbox: to whom, its status, attempts and the last error in a plain sentence."""

    lender_name = serializers.CharField(source="placement.lender.name")
    package = serializers.SerializerMethodField()

    class Meta:
        model = OutboundEmail
        fields = ("id", "send_id", "placement_id", "lender_name", "kind", "to_name", "to_address", "subject",
                  "status", "attempts", "next_attempt_at", "last_error", "sent_at", "created_at", "package")

    def get_package(self, email: OutboundEmail) -> dict[str, Any] | None:
        """The email's package link (its id, expiry, whether withdrawn, opens); null once removed."""
        return PackageLinkSerializer(email.package).data if email.package_id else None


class PackageLinkSerializer(serializers.ModelSerializer):
    revoked = serializers.SerializerMethodField()
    document_ids = serializers.SerializerMethodField()

    class Meta:
        model = PackageLink
        fields = ("id", "placement_id", "expires_at", "revoked", "revoked_at", "first_opened_at", "last_opened_at",
                  "opens", "document_ids", "created_at")

    def get_revoked(self, link: PackageLink) -> bool:
        return link.revoked_at is not None

    def get_document_ids(self, link: PackageLink) -> list[int]:
        return sorted(d.pk for d in link.documents.all())


class SendSkippedSerializer(serializers.Serializer):
    placement_id = serializers.IntegerField()
    lender_id = serializers.IntegerField()
    lender_name = serializers.CharField()
    code = serializers.CharField(help_text="The error contract's code: CONFLICT (already sent), VALIDATION_ERROR "
                                           "(no address), BUSINESS_RULE (a status that takes no email).")
    message = serializers.CharField()


def counts_field() -> serializers.DictField:
    return serializers.DictField(child=serializers.IntegerField(),
                                 help_text="Emails by status: " + ", ".join(EMAIL_STATUSES) + ".")


class OutreachSendSerializer(serializers.ModelSerializer):
    """A send's progress: its status (queued, running, done), the emails counted by status, and each email."""

    counts = counts_field()
    emails = OutboundEmailSerializer(many=True, source="emails_list")

    class Meta:
        model = OutreachSend
        fields = ("id", "deal_id", "kind", "status", "total", "counts", "created_at", "finished_at", "emails")


class OutreachSendStartedSerializer(serializers.Serializer):
    send_id = serializers.IntegerField()
    status = serializers.CharField()
    queued = serializers.IntegerField(help_text="Emails queued.")
    skipped = SendSkippedSerializer(many=True, help_text="Placements not emailed, each with why.")
    message = serializers.CharField()


class PreviewRecipientSerializer(serializers.Serializer):
    placement_id = serializers.IntegerField()
    lender_id = serializers.IntegerField()
    lender_name = serializers.CharField()
    to_name = serializers.CharField()
    to_address = serializers.CharField()


class PreviewDocumentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    file_name = serializers.CharField()


class OutreachPreviewSerializer(serializers.Serializer):
    """What a send with the same body would do, nothing written: who would be emailed, who not and why,
    and the documents each package would share."""

    kind = serializers.CharField()
    recipients = PreviewRecipientSerializer(many=True)
    skipped = SendSkippedSerializer(many=True)
    documents = PreviewDocumentSerializer(many=True)

    @staticmethod
    def of(plan) -> dict[str, Any]:
        return {
            "kind": plan.kind,
            "recipients": [{"placement_id": p.pk, "lender_id": p.lender_id, "lender_name": p.lender.name,
                            "to_name": name, "to_address": address} for p, name, address in plan.recipients],
            "skipped": plan.skipped,
            "documents": [{"id": d.pk, "name": d.name, "kind": d.kind,
                           "file_name": d.current.file_name if d.current_id else d.name} for d in plan.documents],
        }


class OutreachTemplateSerializer(serializers.Serializer):
    kind = serializers.CharField()
    subject = serializers.CharField()
    body = serializers.CharField()
    saved = serializers.BooleanField(help_text="False: Lev's own words (the account saved none).")
    placeholders = serializers.DictField(child=serializers.CharField(), help_text="Each placeholder and its meaning.")

    @staticmethod
    def of(kind: str, subject: str, body: str, saved: bool) -> dict[str, Any]:
        return {"kind": kind, "subject": subject, "body": body, "saved": saved, "placeholders": dict(PLACEHOLDERS)}
