from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Lower

import lev.lookups  # noqa: F401  (registers the __anybit lookup)
from lenders import program_terms
from lenders.rates.models import MarketRate  # noqa: F401  (the market rates room: registered with the app here)
from lev import limits
from lev.enums import (
    ASSET_TYPES,
    CAPITAL_SOURCE_TYPES,
    LENDER_TYPES,
    LOAN_TYPES,
    POSITIONS,
    RATE_INDEX_NAMES,
    RATE_INDEXES,
    RATE_TYPES,
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
    """A lender of the global directory (`account` null: every account reads it, superusers keep it), or an
    account's own lender (`account` set: a lender the team knows and the directory lacks, read and kept by
    that account alone; docs/lender-discovery.md, "The team's own lenders")."""

    account = models.ForeignKey("accounts.Account", null=True, blank=True, on_delete=models.CASCADE,
                                related_name="own_lenders", help_text="Empty: the directory's.")
    name = models.CharField(max_length=limits.LENDER_NAME_MAX)
    website = models.URLField(max_length=limits.LENDER_WEBSITE_MAX, blank=True, default="")
    city = models.CharField(max_length=limits.LENDER_CITY_MAX, blank=True, default="")
    state = models.CharField(max_length=2, choices=[(s, s) for s in US_STATES], blank=True, default="")
    about = models.TextField(blank=True, default="")
    lender_types = models.JSONField(default=list, blank=True)
    category = models.CharField(max_length=50, blank=True, default="")
    # Denormalised for directory filters (kept in step by save() below; bulk_create skips save(), so a
    # bulk writer calls refresh_masks() itself, as deals.demo.directory does).
    lender_type_mask = models.BigIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        # The directory pages by (name, id) (lenders.selectors.DIRECTORY_KEYSET): one range of this index.
        indexes = [models.Index(fields=["name", "id"], name="lenders_lender_name_id")]
        # An account's own lenders have distinct names (whatever the case); the services also refuse an
        # own lender named exactly as a directory lender (lenders.services.lender_create). The directory
        # keeps names as imported: two directory lenders may share one.
        constraints = [models.UniqueConstraint(
            Lower("name"), "account", condition=models.Q(account__isnull=False), name="uniq_own_lender_name",
            violation_error_message="Your account has a lender of this name already.")]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs):
        self.refresh_masks()
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], "lender_type_mask"}
        super().save(*args, **kwargs)

    def refresh_masks(self) -> None:
        """Recompute the derived mask of lender_types (save() does; a bulk writer calls it)."""
        self.lender_type_mask = mask_of(self.lender_types, LENDER_TYPES)

    @property
    def own(self) -> bool:
        """An account's own lender (not the directory's)."""
        return self.account_id is not None


class LenderProgram(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        INACTIVE = "inactive", "Inactive"

    lender = models.ForeignKey(Lender, on_delete=models.CASCADE, related_name="programs")
    # Null: the directory's program. Set: an account's own program, on its own lender or on a directory
    # lender, read by that account alone. A program of an own lender is always that lender's account's
    # (lenders.services keeps it so), so the program's account alone says who may read it: the ranking
    # filters on this column without a join (deals.searches.ranking.filters.hard_filter_q).
    account = models.ForeignKey("accounts.Account", null=True, blank=True, on_delete=models.CASCADE,
                                related_name="own_lender_programs", help_text="Empty: the directory's.")
    title = models.CharField(max_length=limits.PROGRAM_TITLE_MAX)
    loan_types = models.JSONField(default=list, blank=True)
    recourse_types = models.JSONField(default=list, blank=True)
    min_loan_amount = models.DecimalField(**limits.MONEY_COLUMN, null=True, blank=True)
    max_loan_amount = models.DecimalField(**limits.MONEY_COLUMN, null=True, blank=True)
    capital_source_type = models.CharField(
        max_length=20, choices=choices(CAPITAL_SOURCE_TYPES), blank=True, default=""
    )
    positions = models.JSONField(default=list, blank=True)
    sponsor_states = models.JSONField(default=list, blank=True, help_text="Empty = nationwide.")
    asset_types = models.JSONField(default=list, blank=True)
    max_ltv = models.DecimalField(**limits.LTV_PERCENT_COLUMN, null=True, blank=True, help_text="Percent.")
    min_dscr = models.DecimalField(**limits.DSCR_INPUT_COLUMN, null=True, blank=True)
    # The program's terms, as its term sheet or rate sheet states them; each optional. Lender sizing
    # (deals.searches.ranking.sizing) reads them; lenders.program_terms refuses nonsense in them.
    rate_type = models.CharField(max_length=8, choices=choices(RATE_TYPES), blank=True, default="",
                                 help_text="Empty: not stated (or both).")
    rate_index = models.CharField(max_length=16, choices=[(k, RATE_INDEX_NAMES[k]) for k in RATE_INDEXES],
                                  blank=True, default="", help_text="The index a floating rate is priced over.")
    spread_min_bps = models.PositiveIntegerField(null=True, blank=True, help_text="Basis points over the index.")
    spread_max_bps = models.PositiveIntegerField(null=True, blank=True, help_text="Basis points over the index.")
    fixed_rate_min = models.DecimalField(**limits.RATE_COLUMN, null=True, blank=True, help_text="Percent per year.")
    fixed_rate_max = models.DecimalField(**limits.RATE_COLUMN, null=True, blank=True, help_text="Percent per year.")
    term_months_min = models.PositiveSmallIntegerField(null=True, blank=True)
    term_months_max = models.PositiveSmallIntegerField(null=True, blank=True)
    amortization_years = models.PositiveSmallIntegerField(null=True, blank=True)
    interest_only_months = models.PositiveSmallIntegerField(null=True, blank=True)
    min_debt_yield = models.DecimalField(**limits.LTV_PERCENT_COLUMN, null=True, blank=True,
                                         help_text="NOI / loan, percent.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    # Bit masks of the list fields above, so the ranking's hard filters run in SQL on any
    # database (SQLite has no array containment). 0 = no restriction for states.
    loan_type_mask = models.BigIntegerField(default=0, editable=False)
    position_mask = models.BigIntegerField(default=0, editable=False)
    state_mask = models.BigIntegerField(default=0, editable=False)
    asset_type_mask = models.BigIntegerField(default=0, editable=False)
    # The amounts and limits above as floats, for the ranking's SQL (deals.searches.ranking.sql_scoring):
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
                         "max_loan_float", "capital_source_type", "max_ltv_float", "min_dscr_float", "account"],
                condition=models.Q(status="active"),
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def save(self, *args, **kwargs):
        # Masks are derived data, not a business rule: computing them here keeps every save() (admin
        # edits, services) in step. bulk_create and bulk_update skip save(), so a bulk writer calls
        # refresh_masks() itself (deals.demo.directory does; tests/lenders/test_demo_directory.py checks it).
        self.refresh_masks()
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {
                *kwargs["update_fields"], "loan_type_mask", "position_mask", "state_mask", "asset_type_mask",
                "min_loan_float", "max_loan_float", "max_ltv_float", "min_dscr_float",
            }
        super().save(*args, **kwargs)

    def clean_fields(self, exclude=None):
        """The fields' own checks, and lenders.program_terms' on the values as given (before an integer
        field turns a spread of 2.85 into 2)."""
        skip = set(exclude or ())
        errors = {name: messages for name, messages in program_terms.field_errors(
            {name: getattr(self, name) for name in (*program_terms.PERCENTS, "min_dscr", *program_terms.WHOLE_NUMBERS)
             if name not in skip}).items()}
        try:
            super().clean_fields(exclude={*skip, *errors})
        except ValidationError as error:
            errors.update(error.message_dict)
        if errors:
            raise ValidationError(errors)

    def clean(self):
        """Ranges in order, a spread over a named index, no pricing of the other rate type
        (lenders.program_terms); a program of an account's own lender is that account's (set here when
        left empty, as on the lender's page)."""
        errors = program_terms.pair_errors({name: getattr(self, name) for name in program_terms.TERM_FIELDS})
        owner = self.lender.account_id if self.lender_id is not None else None
        if owner is not None and self.account_id is None:
            self.account_id = owner
        elif owner is not None and self.account_id != owner:
            errors["account"] = ["A program of an account's own lender is that account's."]
        if errors:
            raise ValidationError(errors)

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

    @property
    def own(self) -> bool:
        """An account's own program (not the directory's)."""
        return self.account_id is not None


def _as_float(value) -> float | None:
    return None if value is None else float(value)


class LenderActivity(models.Model):
    """One account's activity with a lender in one market (state), maintained by a periodic task from
    that account's own placements (deals.placements.activity). Tenant-scoped: an account's rows are
    computed from its placements only and shown to its members only (issue 37)."""

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="lender_activity")
    lender = models.ForeignKey(Lender, on_delete=models.CASCADE, related_name="activity")
    state = models.CharField(max_length=2, choices=[(s, s) for s in US_STATES])
    quotes_90d = models.PositiveIntegerField(default=0)
    closings_90d = models.PositiveIntegerField(default=0)
    avg_response_hours = models.FloatField(null=True, blank=True)
    score = models.FloatField(default=0.0, help_text="0-1, derived from the counts above.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "lender activity"
        constraints = [models.UniqueConstraint(fields=["account", "lender", "state"], name="uniq_activity_market")]
        indexes = [models.Index(fields=["account", "lender"], name="lender_activity_account")]

    def __str__(self) -> str:
        return f"{self.lender_id} in {self.state}"


class LenderSignal(models.Model):
    """What placements say of a lender for deals with one feature (`dimension` = `value`, e.g. asset type =
    multifamily), maintained by `refresh_lender_signals` (deals.searches.ranking.evidence).

    `account` set: learned from that account's own placements only, read by its searches only. `account`
    null: the pooled aggregate, written only where at least `SIGNAL_MIN_ACCOUNTS` distinct accounts
    contributed, each account's weight capped so that none dominates (docs/ranking.md, "Privacy").

    The `*_weight` figures are time-decayed counts of resolved placements (the ranking's evidence); the
    `*_12m` figures are plain counts over the last 12 months (the insights' words)."""

    # No index of its own: the lookup index below starts with the account (one index less to keep up
    # through a refresh's million rows).
    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, null=True, blank=True,
                                related_name="lender_signals", db_index=False)
    lender = models.ForeignKey(Lender, on_delete=models.CASCADE, related_name="signals")
    dimension = models.CharField(max_length=20)
    value = models.CharField(max_length=48, blank=True, default="")
    sent_weight = models.FloatField(default=0.0)
    quoted_weight = models.FloatField(default=0.0)
    declined_weight = models.FloatField(default=0.0)
    no_answer_weight = models.FloatField(default=0.0)
    won_weight = models.FloatField(default=0.0)
    sent_12m = models.PositiveIntegerField(default=0)
    quoted_12m = models.PositiveIntegerField(default=0)
    declined_12m = models.PositiveIntegerField(default=0)
    no_answer_12m = models.PositiveIntegerField(default=0)
    won_12m = models.PositiveIntegerField(default=0)
    # Outcomes of the lender's latest resolved placements, newest first (q quoted, d declined, n no answer).
    recent = models.CharField(max_length=8, blank=True, default="")
    accounts = models.PositiveIntegerField(default=1, help_text="Distinct accounts behind the figures.")
    refreshed_at = models.DateTimeField()

    class Meta:
        # A search reads one account's rows (and the pooled ones) for the deal's features.
        indexes = [models.Index(fields=["account", "dimension", "value"], name="lender_signal_lookup")]

    def __str__(self) -> str:
        return f"{self.lender_id}: {self.dimension}={self.value}"


class SignalRefresh(models.Model):
    """The last completed refresh of the lender signals (one row), written in the refresh's own
    transaction, and the last failed one where it could be recorded: /health says how fresh the
    signals are."""

    finished_at = models.DateTimeField(null=True, blank=True)
    placements = models.PositiveIntegerField(default=0)
    rows = models.PositiveIntegerField(default=0)
    seconds = models.FloatField(default=0.0)
    failed_at = models.DateTimeField(null=True, blank=True)
    failure = models.CharField(max_length=200, blank=True, default="")

    def __str__(self) -> str:
        if self.finished_at is None:
            return "Lender signals: never refreshed"
        return f"Lender signals refreshed at {self.finished_at:%Y-%m-%d %H:%M}"
