"""Lender searches of a deal and their ranked matches. Tables keep the names they had when these
models lived in `lenders` (lenders_lendersearch, lenders_lendermatch)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class LenderSearch(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        PARTIAL = "partial", "Partial"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="lender_searches")
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
        db_table = "lenders_lendersearch"
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "lender searches"
        indexes = [models.Index(fields=["deal", "deal_version", "-created_at"])]

    def __str__(self) -> str:
        """As a deal team names it: "Search of Riverside Apartments, Nov 24 (completed)"."""
        from lev.formatting import day

        return f"Search of {self.deal.title}, {day(self.created_at)} ({self.get_status_display().lower()})"


class LenderMatch(models.Model):
    # No index of its own: uniq_match_rank (search, rank) serves every lookup by search, and one
    # index less is one less to maintain for each of the thousands of rows a search writes.
    search = models.ForeignKey(LenderSearch, on_delete=models.CASCADE, related_name="matches", db_index=False)
    rank = models.PositiveIntegerField()
    lender = models.ForeignKey("lenders.Lender", on_delete=models.CASCADE, related_name="+")
    score = models.PositiveSmallIntegerField()
    match_insights = models.JSONField(default=list)
    programs = models.JSONField(default=list, help_text="Compact matching programs, best first (capped).")
    program_count = models.PositiveIntegerField(default=0, help_text="Programs of the lender that matched.")
    # Issue 37: what the best program would lend on the deal (deals.searches.ranking.sizing), the score in
    # parts (predict.Prediction.score_parts), the best program's capital source (the results' mix and
    # filter) and whether the lender is a candidate beyond its stated programs, on its record alone.
    sizing = models.JSONField(default=dict, blank=True)
    score_parts = models.JSONField(default=dict, blank=True)
    capital_source = models.CharField(max_length=20, blank=True, default="")
    outside_box = models.BooleanField(default=False)

    class Meta:
        db_table = "lenders_lendermatch"
        ordering = ["search", "rank"]
        verbose_name_plural = "lender matches"
        constraints = [
            models.UniqueConstraint(fields=["search", "rank"], name="uniq_match_rank"),
            models.UniqueConstraint(fields=["search", "lender"], name="uniq_match_lender"),
        ]

    def __str__(self) -> str:
        return f"#{self.rank} of search {self.search_id}: lender {self.lender_id} ({self.score})"
