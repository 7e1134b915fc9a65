"""MarketRate: an index's rate on a date. A floating quote is compared with its index's rate as of the
quote's date: the latest rate of that index dated on or before it (lenders.rates.selectors)."""

from __future__ import annotations

from django.db import models

from lev import limits
from lev.enums import RATE_INDEX_NAMES, RATE_INDEXES


class MarketRate(models.Model):
    """One index's rate (percent per year) on one date. Global: no account owns it, every account
    reads it. Written by an admin, the `import_market_rates` command and the demo."""

    index = models.CharField(max_length=16, choices=[(key, RATE_INDEX_NAMES[key]) for key in RATE_INDEXES])
    on = models.DateField(help_text="The date the rate is of.")
    rate = models.DecimalField(**limits.RATE_COLUMN, help_text="Percent per year.")
    source = models.CharField(max_length=limits.MARKET_RATE_SOURCE_MAX, blank=True, default="admin",
                              help_text='Where it came from: "admin", "csv <file name>", "demo".')
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "lenders"
        ordering = ["index", "-on"]
        constraints = [models.UniqueConstraint(fields=["index", "on"], name="market_rate_index_on")]
        # "The latest rate of an index on or before a date" is one step down this index (the unique
        # constraint's index serves the same columns, but not every database orders by it descending).
        indexes = [models.Index(fields=["index", "-on"], name="market_rate_latest")]

    def __str__(self) -> str:
        return f"{self.get_index_display()} {self.rate}% on {self.on.isoformat()}"
