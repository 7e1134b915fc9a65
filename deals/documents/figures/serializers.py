"""REST input (strict: an unknown key is a VALIDATION_ERROR) and output of a document's figures."""

from __future__ import annotations

from rest_framework import serializers

from deals.documents.figures.models import FIGURE_FIELDS
from deals.serializers import DealFinancialsDoc, FigureSourceRefSerializer
from lev.serializers import EnumField, StrictSerializer, int_field

VERSION_HELP = "The document's version to read (1, 2, …); default its current one."


class FiguresReadInputSerializer(StrictSerializer):
    version = int_field(min_value=1, max_value=2**31 - 1, help_text=VERSION_HELP)


class FiguresApplyInputSerializer(StrictSerializer):
    version = int_field(min_value=1, max_value=2**31 - 1, help_text=VERSION_HELP)
    fields = serializers.ListField(
        child=EnumField(FIGURE_FIELDS), allow_empty=False, min_length=1, max_length=len(FIGURE_FIELDS), required=False,
        allow_null=True,
        help_text="The deal's fields to set from the document (default every one it gives): in_place_noi, "
                  "effective_gross_income, operating_expenses from a T-12; occupancy, in_place_rent (a year), units "
                  "(the deal's one property) from a rent roll.")


class FigureSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The figure read (units, occupancy, noi, …).")
    value = serializers.CharField(help_text="As read: a decimal string (money in US dollars, occupancy in percent).")
    field = serializers.CharField(allow_null=True, help_text="The deal's field it applies to; null when it is shown "
                                                             "only (occupied units, the monthly rent).")
    current = serializers.CharField(allow_null=True, help_text="The deal's value of that field now, a decimal string.")
    source = FigureSourceRefSerializer(allow_null=True, help_text="Where the deal's current value came from, when it "
                                                                  "was applied from a document.")


class FigureProblemSerializer(serializers.Serializer):
    row = serializers.IntegerField(allow_null=True, help_text="The file's row (as the spreadsheet numbers it); null "
                                                              "for the file as a whole.")
    message = serializers.CharField()


class FiguresPreviewSerializer(serializers.Serializer):
    document_id = serializers.IntegerField()
    deal_id = serializers.IntegerField()
    version = serializers.IntegerField()
    file_name = serializers.CharField()
    kind = serializers.ChoiceField(choices=[("rent_roll", "rent roll"), ("t12", "T-12")])
    layout = serializers.CharField(help_text="yardi, realpage, appfolio or generic (a hand-made sheet).")
    rows_read = serializers.IntegerField()
    figures = FigureSerializer(many=True)
    problems = FigureProblemSerializer(many=True, help_text="What could not be read, each with its row; never dropped.")


class FigureAppliedSerializer(serializers.Serializer):
    field = serializers.CharField()
    value = serializers.CharField()


class FigureSkippedSerializer(serializers.Serializer):
    field = serializers.CharField()
    reason = serializers.CharField()


class FiguresAppliedSerializer(serializers.Serializer):
    document_id = serializers.IntegerField()
    deal_id = serializers.IntegerField()
    version = serializers.IntegerField()
    applied = FigureAppliedSerializer(many=True)
    skipped = FigureSkippedSerializer(many=True, help_text="Figures left alone, and why (units without one property).")
    financials = DealFinancialsDoc()
