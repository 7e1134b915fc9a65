"""Serializers of the history import's REST door (deals.history.api): the upload, the apply, a job."""

from __future__ import annotations

import json
import re
from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from deals.history import jobs
from deals.history.models import HistoryImport
from lev import limits
from lev.serializers import StrictSerializer

NEW_LENDERS_MAX = 200
MAPPING_MAX = 1000
# Control characters in a name are read as blanks (none belongs in a lender's name; PostgreSQL's JSON
# refuses NUL): what the schema allows is never refused for them.
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAPPING_HELP = ('Lender names of the file mapped to lenders: a JSON object {"name": lender_id}, or (in a form) '
                'repeated "name=lender_id" values.')


def _mapping(value: Any) -> dict[str, int]:
    """{name: lender id} from a JSON object, a JSON object as text, or a list of such texts or of
    "name=id" texts (a form's repeated field)."""
    items = value if isinstance(value, list) else [value]
    mapping: dict[str, int] = {}
    for item in items:
        if isinstance(item, str) and item.strip().startswith("{"):
            try:
                item = json.loads(item)
            except ValueError:
                raise serializers.ValidationError("is not a JSON object of names and lender ids") from None
        if isinstance(item, dict):
            pairs = list(item.items())
        elif isinstance(item, str) and "=" in item:
            name, _, lender = item.rpartition("=")
            pairs = [(name, lender.strip())]
        else:
            raise serializers.ValidationError('must be a JSON object {"name": lender_id} or "name=lender_id"')
        for name, lender in pairs:
            name = _name(name)
            if not name or len(name) > limits.LENDER_NAME_MAX:
                raise serializers.ValidationError(f"names have 1 to {limits.LENDER_NAME_MAX} characters")
            if isinstance(lender, bool) or not str(lender).isdigit() or not 0 < int(lender) < 2**63:
                raise serializers.ValidationError(f'"{name[:80]}" must map to a lender id (a positive integer)')
            mapping[name] = int(lender)
    if len(mapping) > MAPPING_MAX:
        raise serializers.ValidationError(f"may map at most {MAPPING_MAX} names")
    return mapping


def _name(raw: Any) -> str:
    """A name as the file's names are compared: blanks collapsed (a name of blanks alone kept as written,
    so what a client sends is never read as empty when it was not); control characters read as blanks."""
    text = CONTROL.sub(" ", str(raw))
    return " ".join(text.split()) or text


def _json_names(text: str) -> list[str] | str:
    """A form's JSON list of names, or the text itself: a name that only begins with "["."""
    try:
        names = json.loads(text)
    except ValueError:
        return text
    return names if isinstance(names, list) and all(isinstance(n, str) for n in names) else text


def _names(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in items:
        if isinstance(item, str) and item.strip().startswith("["):
            item = _json_names(item)
        for name in item if isinstance(item, list) else [item]:
            if not isinstance(name, str) or not name or len(name) > limits.LENDER_NAME_MAX:
                raise serializers.ValidationError(f"each name has 1 to {limits.LENDER_NAME_MAX} characters")
            names.append(_name(name))
    if len(names) > NEW_LENDERS_MAX:
        raise serializers.ValidationError(f"may name at most {NEW_LENDERS_MAX} lenders")
    return names


# A form's "name=lender_id" (the name: something other than blanks, the id: a positive integer).
MAPPING_PAIR = r"^\s*[^\s=][^=]{0,199}=[1-9][0-9]{0,17}$"


@extend_schema_field({"oneOf": [{"type": "object", "maxProperties": MAPPING_MAX,
                                 "propertyNames": {"minLength": 1, "maxLength": limits.LENDER_NAME_MAX},
                                 "additionalProperties": {"type": "integer", "minimum": 1, "maximum": 10**18 - 1}},
                                {"type": "string", "pattern": MAPPING_PAIR}], "description": MAPPING_HELP})
class MappingField(serializers.Field):
    def to_internal_value(self, data: Any) -> dict[str, int]:
        return _mapping(data)

    def to_representation(self, value: Any) -> Any:
        return value


@extend_schema_field({"oneOf": [{"type": "array", "maxItems": NEW_LENDERS_MAX, "items": {
                                    "type": "string", "minLength": 1, "maxLength": limits.LENDER_NAME_MAX}},
                                {"type": "string", "minLength": 1, "maxLength": limits.LENDER_NAME_MAX}],
                      "description": "Names of the file to add as lenders of the account's own (a JSON list, or "
                                     "repeated values in a form)."})
class NamesField(serializers.Field):
    def to_internal_value(self, data: Any) -> list[str]:
        return _names(data)

    def to_representation(self, value: Any) -> Any:
        return value


# In a multipart upload a field is text: the mapping as repeated "name=lender_id" values, new lenders as
# repeated names (an empty value is no name, as an empty form field is). The schema says so for that body, in
# a pattern every regex dialect reads alike.
FORM_PAIR = r"^[^=]{1,200}=[1-9][0-9]{0,17}$"


@extend_schema_field({"type": "array", "maxItems": MAPPING_MAX, "items": {"type": "string", "pattern": FORM_PAIR},
                      "description": 'Lender names of the file mapped to lenders: repeated "name=lender_id" values.'})
class FormMappingField(MappingField):
    def to_internal_value(self, data: Any) -> dict[str, int]:
        items = data if isinstance(data, list) else [data]
        if not all(isinstance(item, str) and re.fullmatch(FORM_PAIR, item) for item in items):
            raise serializers.ValidationError('each value is "name=lender_id" (a name, then a positive integer)')
        mapping = {_name(name): int(lender) for name, _, lender in (item.rpartition("=") for item in items)}
        if len(mapping) > MAPPING_MAX:
            raise serializers.ValidationError(f"may map at most {MAPPING_MAX} names")
        return mapping


@extend_schema_field({"type": "array", "maxItems": NEW_LENDERS_MAX, "items": {
                          "type": "string", "maxLength": limits.LENDER_NAME_MAX},
                      "description": "Names of the file to add as lenders of the account's own (repeated values; "
                                     "an empty one is no name)."})
class FormNamesField(NamesField):
    def to_internal_value(self, data: Any) -> list[str]:
        items = [item for item in (data if isinstance(data, list) else [data]) if item != ""]
        return _names(items) if items else []


class _MultiValue:
    """A form's repeated values of `mapping` and `new_lenders` as lists (a QueryDict keeps only the last)."""

    @staticmethod
    def data_of(data: Any) -> dict[str, Any]:
        if hasattr(data, "getlist"):
            plain = {key: data.get(key) for key in data}
            for key in ("mapping", "new_lenders"):
                if key in data:
                    values = data.getlist(key)
                    plain[key] = values if len(values) > 1 else values[0]
            return plain
        return data if isinstance(data, dict) else {}


@extend_schema_field({"type": "string", "format": "binary", "minLength": 1})
class UploadField(serializers.FileField):
    """A file part of a multipart body (the schema says binary, not a URL as a FileField's output is)."""


class HistoryUploadSerializer(StrictSerializer):
    file = UploadField(help_text="The history file: CSV or XLSX (docs/import-export.md), at most "
                                           "LEV_HISTORY_UPLOAD_MAX_BYTES.", allow_empty_file=False)
    dry_run = serializers.BooleanField(required=False, default=False,
                                       help_text="A preview: every row checked and its plan said, nothing written.")
    mapping = FormMappingField(required=False)
    new_lenders = FormNamesField(required=False)


class HistoryApplySerializer(StrictSerializer):
    dry_run = serializers.BooleanField(required=False, default=False,
                                       help_text="Preview again (with the new mapping) instead of applying.")
    mapping = MappingField(required=False, help_text=MAPPING_HELP + " Replaces the earlier job's mapping.")
    new_lenders = NamesField(required=False)


class ProgressSerializer(serializers.Serializer):
    rows_read = serializers.IntegerField()
    rows_refused = serializers.IntegerField()
    deals_created = serializers.IntegerField()
    placements_created = serializers.IntegerField()
    term_sheets_created = serializers.IntegerField()


class ProblemSerializer(serializers.Serializer):
    line = serializers.IntegerField(allow_null=True)
    column = serializers.CharField(allow_blank=True)
    message = serializers.CharField()


class LinksSerializer(serializers.Serializer):
    self = serializers.CharField(help_text="This job.")
    report = serializers.CharField(help_text="The refused rows as CSV (line, column, reason).")
    apply = serializers.CharField(help_text="POST: a new job on the same file (apply the preview, or map names).")


class HistoryImportSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()
    file_kept = serializers.SerializerMethodField()

    class Meta:
        model = HistoryImport
        fields = ["id", "status", "dry_run", "file_name", "size", "file_kept", "mapping", "new_lenders", "progress",
                  "message", "summary", "created_at", "started_at", "finished_at", "links"]

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, job: HistoryImport) -> dict[str, int]:
        return jobs.progress_of(job)

    @extend_schema_field(LinksSerializer)
    def get_links(self, job: HistoryImport) -> dict[str, str]:
        return {"self": reverse("history-import-detail", args=[job.pk]),
                "report": reverse("history-import-report", args=[job.pk]),
                "apply": reverse("history-import-apply", args=[job.pk])}

    def get_file_kept(self, job: HistoryImport) -> bool:
        return bool(job.file)


class HistoryImportDetailSerializer(HistoryImportSerializer):
    problems = ProblemSerializer(many=True, help_text="The first 200 problems (the report has them as CSV).")
    plan = serializers.ListField(child=serializers.CharField(), help_text="A preview's first 500 plan lines.")

    class Meta(HistoryImportSerializer.Meta):
        fields = [*HistoryImportSerializer.Meta.fields, "problems", "plan"]
