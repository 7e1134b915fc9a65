from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from deals.pipeline.models import Stage, StageChange
from lev import limits
from lev.enums import STAGE_KINDS
from lev.serializers import EnumField, StrictSerializer, int_field, text_field

# Loan totals add up many deals' amounts: room for a few digits more than one amount.
TOTAL_DIGITS = limits.MONEY_MAX_DIGITS + 6
STAGE_HELP = "A stage's id, or its key (in_market) or name (In market), in any case."


# --- input --------------------------------------------------------------------------------------
class StageCreateSerializer(StrictSerializer):
    name = text_field(max_length=limits.STAGE_NAME_MAX, required=True, allow_blank=False,
                      help_text="Unique in the pipeline (ignoring case).")
    kind = EnumField(STAGE_KINDS, required=False,
                     help_text="open (default): deals in it are being worked; won: closed; dead: lost or dropped.")
    position = int_field(min_value=1, max_value=limits.STAGES_PER_ACCOUNT_MAX, allow_null=False,
                         help_text="Where to put it, 1 = first (the stages from there on move down one); "
                                   "default last.")


class StageRenameSerializer(StrictSerializer):
    name = text_field(max_length=limits.STAGE_NAME_MAX, required=True, allow_blank=False,
                      help_text="Unique in the pipeline (ignoring case). A default stage keeps its key.")


class StageOrderSerializer(StrictSerializer):
    stage_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=limits.MAX_ID), min_length=1,
        max_length=limits.STAGES_PER_ACCOUNT_MAX,
        help_text="Every stage of the pipeline, each once, in the new order.",
        error_messages={"not_a_list": "must be a list", "min_length": "may not be empty",
                        "max_length": f"may list at most {limits.STAGES_PER_ACCOUNT_MAX} stages"},
    )


class DealMoveSerializer(StrictSerializer):
    stage = text_field(max_length=limits.STAGE_NAME_MAX, required=True, allow_blank=False, help_text=STAGE_HELP)
    reason = text_field(max_length=limits.STAGE_REASON_MAX, help_text="Why, in a few words (kept in the history).")


# --- output -------------------------------------------------------------------------------------
class StageRefSerializer(serializers.ModelSerializer):
    """A stage as a deal names it."""

    class Meta:
        model = Stage
        fields = ("id", "key", "name", "kind")


class StageSerializer(serializers.ModelSerializer):
    """A stage of the account's pipeline: its name, kind (open, closed or dead) and place in the order."""

    class Meta:
        model = Stage
        fields = ("id", "key", "name", "kind", "position")


class PipelineStageSerializer(StageSerializer):
    deal_count = serializers.IntegerField(help_text="The deals in this stage that are not archived.")
    loan_total = serializers.DecimalField(max_digits=TOTAL_DIGITS, decimal_places=2,
                                          help_text="Their amounts added up, US dollars: a deal's winning quote's "
                                                    "loan amount once chosen, else its loan amount.")

    class Meta(StageSerializer.Meta):
        fields = (*StageSerializer.Meta.fields, "deal_count", "loan_total")


class PipelineSerializer(serializers.Serializer):
    results = PipelineStageSerializer(many=True, source="stages")
    deal_count = serializers.IntegerField(help_text="Active deals: not archived, in an open stage (the open "
                                                    "stages' deal_count added up; never a closed or dead stage's).")
    loan_total = serializers.DecimalField(max_digits=TOTAL_DIGITS, decimal_places=2,
                                          help_text="The active deals' amounts added up, US dollars.")


class UserRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class StageNameSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField(help_text="The stage's name at the time of the move.")


class StageChangeSerializer(serializers.ModelSerializer):
    """A deal's move from one stage to another: when, by whom and why."""

    from_stage = serializers.SerializerMethodField()
    to_stage = serializers.SerializerMethodField()
    by = UserRefSerializer(allow_null=True, help_text="Who moved it; for an automatic move, who did what moved it.")

    class Meta:
        model = StageChange
        fields = ("id", "at", "from_stage", "to_stage", "by", "automatic", "reason")

    @extend_schema_field(StageNameSerializer(allow_null=True))
    def get_from_stage(self, change: StageChange) -> dict | None:
        """The stage it left, named as it was then (null for where the deal started)."""
        if change.from_stage_id is None:
            return None
        return {"id": change.from_stage_id, "name": change.from_name}

    @extend_schema_field(StageNameSerializer())
    def get_to_stage(self, change: StageChange) -> dict:
        return {"id": change.to_stage_id, "name": change.to_name}


class DealMoveResultSerializer(serializers.Serializer):
    deal_id = serializers.IntegerField(source="deal.pk")
    stage = StageRefSerializer(source="deal.stage")
    changed = serializers.SerializerMethodField(help_text="False when the deal was already in that stage.")
    change = StageChangeSerializer(allow_null=True)

    def get_changed(self, move) -> bool:
        return move.change is not None
