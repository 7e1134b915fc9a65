from __future__ import annotations

from django.conf import settings
from django.db import models

import lev.lookups  # noqa: F401  (registers the __anybit lookup)
from lev.enums import (
    ASSET_TYPES,
    CAPITAL_SOURCE_TYPES,
    LENDER_TYPES,
    LOAN_TYPES,
    POSITIONS,
    US_STATES,
    choices,
    mask_of,
)


class AssetType(models.Model):
    """Reference list of asset types, addressed by slug everywhere on the wire."""

    slug = models.SlugField(max_length=32, unique=True)
    name = models.CharField(max_length=64)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Lender(models.Model):
    """A lender of the global directory (not tenant scoped)."""

    name = models.CharField(max_length=200)
    website = models.URLField(blank=True, default="")
    city = models.CharField(max_length=100, blank=True, default="")
    state = models.CharField(max_length=2, choices=[(s, s) for s in US_STATES], blank=True, default="")
    about = models.TextField(blank=True, default="")
    lender_types = models.JSONField(default=list, blank=True)
    category = models.CharField(max_length=50, blank=True, default="")
    # Denormalised for directory filters (kept in step by lenders.services).
    lender_type_mask = models.BigIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        # The directory pages by (name, id) (lenders.selectors.DIRECTORY_KEYSET): one range of this index.
        indexes = [models.Index(fields=["name", "id"], name="lenders_lender_name_id")]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs):
        self.lender_type_mask = mask_of(self.lender_types, LENDER_TYPES)
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], "lender_type_mask"}
        super().save(*args, **kwargs)


class LenderProgram(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        INACTIVE = "inactive", "Inactive"

    lender = models.ForeignKey(Lender, on_delete=models.CASCADE, related_name="programs")
    title = models.CharField(max_length=200)
    loan_types = models.JSONField(default=list, blank=True)
    recourse_types = models.JSONField(default=list, blank=True)
    min_loan_amount = models.DecimalField(max_digits=14, decimal_places=2, null=True, blank=True)
    max_loan_amount = models.DecimalField(max_digits=14, decimal_places=2, null=True, blank=True)
    capital_source_type = models.CharField(
        max_length=20, choices=choices(CAPITAL_SOURCE_TYPES), blank=True, default=""
    )
    positions = models.JSONField(default=list, blank=True)
    sponsor_states = models.JSONField(default=list, blank=True, help_text="Empty = nationwide.")
    asset_types = models.JSONField(default=list, blank=True)
    max_ltv = models.DecimalField(max_digits=5, decimal_places=2, null=True, blank=True, help_text="Percent.")
    min_dscr = models.DecimalField(max_digits=4, decimal_places=2, null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    # Bit masks of the list fields above, so the ranking's hard filters run in SQL on any
    # database (SQLite has no array containment). 0 = no restriction for states.
    loan_type_mask = models.BigIntegerField(default=0, editable=False)
    position_mask = models.BigIntegerField(default=0, editable=False)
    state_mask = models.BigIntegerField(default=0, editable=False)
    asset_type_mask = models.BigIntegerField(default=0, editable=False)
    # The amounts and limits above as floats, for the ranking's SQL (lenders.ranking.sql_scoring):
    # at 1M programs, converting numeric to float row by row cost more than the scoring itself
    # (docs/benchmarks.md, §3). Derived like the masks; null where the decimal is.
    min_loan_float = models.FloatField(null=True, editable=False)
    max_loan_float = models.FloatField(null=True, editable=False)
    max_ltv_float = models.FloatField(null=True, editable=False)
    min_dscr_float = models.FloatField(null=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["status", "min_loan_amount", "max_loan_amount"]),
            # The directory's per-lender program count and loan range: without it PostgreSQL may
            # scan every active program once per listed lender (seen on a freshly seeded table).
            models.Index(fields=["lender", "status"], name="lenders_program_lender_status"),
            # Everything the ranking's statement reads of an active program, so it scans this index
            # alone (index-only, a third of the table's size). INCLUDE is PostgreSQL's; SQLite
            # makes a plain partial index.
            models.Index(
                fields=["lender"], name="lenders_program_ranking",
                include=["asset_type_mask", "loan_type_mask", "state_mask", "position_mask", "min_loan_float",
                         "max_loan_float", "capital_source_type", "max_ltv_float", "min_dscr_float"],
                condition=models.Q(status="active"),
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def save(self, *args, **kwargs):
        # Masks are derived data, not a business rule: keeping them here means admin edits,
        # services and bulk seeding can never leave them out of step.
        self.refresh_masks()
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {
                *kwargs["update_fields"], "loan_type_mask", "position_mask", "state_mask", "asset_type_mask",
                "min_loan_float", "max_loan_float", "max_ltv_float", "min_dscr_float",
            }
        super().save(*args, **kwargs)

    def refresh_masks(self) -> None:
        """Recompute the derived fields (masks of the list fields, floats of the amounts and
        limits) before saving."""
        self.loan_type_mask = mask_of(self.loan_types, LOAN_TYPES)
        self.position_mask = mask_of(self.positions, POSITIONS)
        self.state_mask = mask_of(self.sponsor_states, US_STATES)
        self.asset_type_mask = mask_of(self.asset_types, ASSET_TYPES)
        self.min_loan_float = _as_float(self.min_loan_amount)
        self.max_loan_float = _as_float(self.max_loan_amount)
        self.max_ltv_float = _as_float(self.max_ltv)
        self.min_dscr_float = _as_float(self.min_dscr)


def _as_float(value) -> float | None:
    return None if value is None else float(value)


class LenderActivity(models.Model):
    """Activity signals of a lender in one market (state), maintained by a periodic task."""

    lender = models.ForeignKey(Lender, on_delete=models.CASCADE, related_name="activity")
    state = models.CharField(max_length=2, choices=[(s, s) for s in US_STATES])
    quotes_90d = models.PositiveIntegerField(default=0)
    closings_90d = models.PositiveIntegerField(default=0)
    avg_response_hours = models.FloatField(null=True, blank=True)
    score = models.FloatField(default=0.0, help_text="0-1, derived from the counts above.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "lender activity"
        constraints = [models.UniqueConstraint(fields=["lender", "state"], name="uniq_activity_market")]
        # The ranking reads the activity score of every lender in the deal's markets at once:
        # an index-only scan with the lender and score included (PostgreSQL; a plain index elsewhere).
        indexes = [models.Index(fields=["state"], name="lender_activity_state_cover", include=["lender", "score"])]

    def __str__(self) -> str:
        return f"{self.lender_id} in {self.state}"


class LenderSearch(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        PARTIAL = "partial", "Partial"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"

    account = models.ForeignKey("deals.Account", on_delete=models.CASCADE, related_name="lender_searches")
    deal = models.ForeignKey("deals.Deal", on_delete=models.CASCADE, related_name="lender_searches")
    deal_version = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True)
    progress = models.PositiveSmallIntegerField(default=0, help_text="Percent done.")
    total_candidates = models.PositiveIntegerField(default=0)
    # Every eligible lender (one per lender with a program that passed the hard filters)...
    total_matches = models.PositiveIntegerField(default=0)
    # ...of which the best LEV_RANKING_TOP_N are stored as LenderMatch rows, ranks 1..ranked_matches:
    # what result pages, the admin and placements read.
    ranked_matches = models.PositiveIntegerField(
        default=0, help_text="Matches stored (the top LEV_RANKING_TOP_N of total_matches), ranks 1..this.")
    # Set when the purge deleted the stored matches of this (superseded or failed) search.
    matches_purged_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    error_code = models.CharField(max_length=40, blank=True, default="")
    error_message = models.CharField(max_length=500, blank=True, default="")
    # What was ranked: the deal's loan, properties and financials as of `deal_version`, captured
    # when the search started, so a re-run ranks exactly the same request.
    criteria = models.JSONField(default=dict, blank=True)
    # Set by each run that claims the search; every write of a run checks it, so a run that lost
    # the search (its worker stalled and the sweep re-queued it) can never overwrite a newer run.
    run_token = models.CharField(max_length=32, blank=True, default="", editable=False)
    queued_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "lender searches"
        indexes = [models.Index(fields=["deal", "deal_version", "-created_at"])]

    def __str__(self) -> str:
        return f"Search {self.pk} for deal {self.deal_id} ({self.status})"


class LenderMatch(models.Model):
    # No index of its own: uniq_match_rank (search, rank) serves every lookup by search, and one
    # index less is one less to maintain for each of the thousands of rows a search writes.
    search = models.ForeignKey(LenderSearch, on_delete=models.CASCADE, related_name="matches", db_index=False)
    rank = models.PositiveIntegerField()
    lender = models.ForeignKey(Lender, on_delete=models.CASCADE, related_name="+")
    score = models.PositiveSmallIntegerField()
    match_insights = models.JSONField(default=list)
    programs = models.JSONField(default=list, help_text="Compact matching programs, best first (capped).")
    program_count = models.PositiveIntegerField(default=0, help_text="Programs of the lender that matched.")

    class Meta:
        ordering = ["search", "rank"]
        verbose_name_plural = "lender matches"
        constraints = [
            models.UniqueConstraint(fields=["search", "rank"], name="uniq_match_rank"),
            models.UniqueConstraint(fields=["search", "lender"], name="uniq_match_lender"),
        ]

    def __str__(self) -> str:
        return f"#{self.rank} of search {self.search_id}: lender {self.lender_id} ({self.score})"
