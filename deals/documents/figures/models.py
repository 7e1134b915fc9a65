"""Where an applied figure came from: one row per deal and field (a later apply replaces it), naming the
document version it was read from, the value applied, who applied it and when. The summary and the
financials' answer cite it (docs/documents.md). Imported by `deals.models`, so a model of the `deals` app."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from lev import limits
from lev.enums import choices

# What a rent roll or T-12 can set on a deal, and from which reading and figure: the deal's financials'
# field, or the units of the deal's one property.
FIGURE_TARGETS: dict[str, tuple[str, str]] = {
    "in_place_noi": ("t12", "noi"),
    "effective_gross_income": ("t12", "effective_gross_income"),
    "operating_expenses": ("t12", "operating_expenses"),
    "occupancy": ("rent_roll", "occupancy"),
    "in_place_rent": ("rent_roll", "annual_in_place_rent"),
    "units": ("rent_roll", "units"),
}
FIGURE_FIELDS = tuple(FIGURE_TARGETS)
# The (value, label) pairs the API's EnumField makes of them: OpenAPI names their enum DocumentFigureEnum
# (SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]) instead of the generic "FieldsEnum".
FIGURE_FIELD_CHOICES = choices(FIGURE_FIELDS)


class FigureSource(models.Model):
    deal = models.ForeignKey("deals.Deal", on_delete=models.CASCADE, related_name="figure_sources")
    field = models.CharField(max_length=32, choices=[(f, f.replace("_", " ")) for f in FIGURE_FIELDS])
    # The value applied (a money figure, a percent, or units), as it was written to the deal.
    value = models.DecimalField(**limits.MONEY_COLUMN)
    document_version = models.ForeignKey("deals.DocumentVersion", on_delete=models.CASCADE, related_name="+")
    applied_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    applied_at = models.DateTimeField()

    class Meta:
        ordering = ["deal", "field"]
        constraints = [
            models.UniqueConstraint(fields=["deal", "field"], name="uniq_figure_source_per_deal_field"),
            models.CheckConstraint(condition=Q(field__in=FIGURE_FIELDS), name="figure_source_field_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.field} from {self.document_version}"
