"""The summary endpoint's query (strict: an unknown key or detail is a VALIDATION_ERROR) and answer."""

from __future__ import annotations

from rest_framework import serializers

from deals.summaries.summary import DEFAULT_DETAIL, DETAILS
from lev.enums import choices
from lev.serializers import EnumField, StrictSerializer


class SummaryQuerySerializer(StrictSerializer):
    detail = EnumField(DETAILS, required=False,
                       help_text=f"How much to say (default {DEFAULT_DETAIL}). brief: a few lines; standard: each "
                                 "section's leading items; memo: the fullest (every financial figure, the placements "
                                 "one by one, more quotes with their terms).")


class SummarySourceSerializer(serializers.Serializer):
    ref = serializers.IntegerField(help_text="The number the text cites in brackets: [3].")
    record = serializers.CharField(help_text="deal, deal_property, deal_financials, stage_change, lender_search, "
                                             "placement, placement_list or term_sheet_comparison.")
    id = serializers.IntegerField(help_text="The record's id (the deal's, for a record served per deal).")
    field = serializers.CharField(help_text="A dotted path into the answer of `path`, list positions as numbers "
                                            "(quotes.0.all_in_rate).")
    value = serializers.JSONField(allow_null=True, help_text="The value `path` serves at `field`, as it serves it.")
    path = serializers.CharField(help_text="The GET path under /api/v1 that serves the value.")


class SummaryStepSerializer(serializers.Serializer):
    rule = serializers.CharField(help_text="Which rule of docs/summaries.md gave the step.")
    text = serializers.CharField()


class DealSummarySerializer(serializers.Serializer):
    deal_id = serializers.IntegerField()
    detail = serializers.ChoiceField(choices=choices(DETAILS))
    as_of = serializers.DateField(help_text="The day quotes expire and placements wait by; nothing else is dated "
                                            "by the call.")
    text = serializers.CharField(help_text="The summary for a person, one line a fact, figures cited as [n].")
    next_steps = SummaryStepSerializer(many=True, help_text="The next steps the text lists, in order.")
    left_out = serializers.ListField(child=serializers.CharField(),
                                     help_text="Sections left out, and why (a scope the credential lacks).")
    sources = SummarySourceSerializer(many=True, help_text="One per [n] of the text.")
