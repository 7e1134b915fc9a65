"""Serializers of lender searches: the start request, the results query and the search with its page of
ranked matches."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from deals.searches.models import LenderMatch, LenderSearch
from deals.searches.selectors import (
    QueueStatus,
    lender_search_pending_seconds,
    lender_search_queue_status,
    lender_search_superseded_by,
)
from lev.enums import CAPITAL_SOURCE_TYPES
from lev.errors import ErrorCode
from lev.serializers import (
    EnumField,
    StrictSerializer,
    page_field,
    page_size_field,
)


# --- lender searches ------------------------------------------------------------------------------
class SearchStartInputSerializer(StrictSerializer):
    """No fields today: the search ranks the deal as it is. Unknown keys are rejected."""


class SearchResultsQuerySerializer(StrictSerializer):
    page = page_field()
    page_size = page_size_field()
    capital_source = EnumField(CAPITAL_SOURCE_TYPES, required=False,
                               help_text="Only the ranked lenders of this kind of capital (their best program's), "
                                         "in rank order: the best of each kind (see by_capital_source).")


class SearchErrorSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()


QUEUE_STATUSES = (QueueStatus.QUEUED, QueueStatus.NOT_PICKED_UP, QueueStatus.NOT_QUEUED)


QUEUE_STATUS_HELP = ("Only while pending (else null): queued — waiting for a worker; not_picked_up — no worker "
                     "has started it for a while; not_queued — the job queue was unreachable, it is queued "
                     "automatically when the queue is back.")


class LenderSearchStartSerializer(serializers.Serializer):
    search_id = serializers.IntegerField(source="pk")
    deal_id = serializers.IntegerField()
    deal_version = serializers.IntegerField()
    status = serializers.CharField()
    progress = serializers.IntegerField()
    total_matches = serializers.IntegerField()
    reused = serializers.SerializerMethodField()
    queue_status = serializers.SerializerMethodField(help_text=QUEUE_STATUS_HELP)
    message = serializers.SerializerMethodField()
    poll_after_ms = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_reused(self, search: LenderSearch) -> bool:
        return not self.context.get("created", True)

    @extend_schema_field(serializers.ChoiceField(choices=QUEUE_STATUSES, allow_null=True))
    def get_queue_status(self, search: LenderSearch) -> str | None:
        return lender_search_queue_status(search=search)

    def get_message(self, search: LenderSearch) -> str:
        queue_status = lender_search_queue_status(search=search)
        if search.status == LenderSearch.Status.COMPLETED:
            text = f"Search {search.pk} is completed: {search.total_matches} lenders matched."
        elif search.status == LenderSearch.Status.FAILED:
            text = f"Search {search.pk} failed: {search.error_message}"
        elif queue_status == QueueStatus.NOT_QUEUED:
            text = (f"Search {search.pk} is pending: it was saved but its ranking job could not be queued "
                    "(the job queue is unreachable). It is queued automatically when the queue is back.")
        elif queue_status == QueueStatus.NOT_PICKED_UP:
            text = (f"Search {search.pk} is pending: no ranking worker has picked it up after "
                    f"{lender_search_pending_seconds(search=search)} s.")
        else:
            text = f"Search {search.pk} is {search.status}: ranking lenders for deal {search.deal_id}."
        if self.get_reused(search):
            text = f"The deal is unchanged since search {search.pk} started, so it is reused. " + text
        return text

    def get_poll_after_ms(self, search: LenderSearch) -> int:
        return poll_after_ms(search)


class LenderSearchListItemSerializer(serializers.Serializer):
    """One search of a deal, as the deal's searches list shows it: read its ranks with
    GET /lender-searches/{search_id}/ (MCP: get_lender_search_results)."""

    search_id = serializers.IntegerField(source="pk")
    deal_id = serializers.IntegerField()
    deal_version = serializers.IntegerField(help_text="The deal's version the search ranked.")
    deal_changed = serializers.SerializerMethodField(
        help_text="The deal changed after this search started; start a new search to rank it again.")
    status = serializers.CharField()
    progress = serializers.IntegerField()
    total_matches = serializers.IntegerField(help_text="Lenders matched (0 until the search is scored).")
    results_removed = serializers.SerializerMethodField(
        help_text="The ranks were removed after retention (a newer search replaced this one).")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_deal_changed(self, search: LenderSearch) -> bool:
        return search.deal_version != self.context["deal_version"]

    def get_results_removed(self, search: LenderSearch) -> bool:
        return search.matches_purged_at is not None


def poll_after_ms(search: LenderSearch) -> int:
    final = (LenderSearch.Status.COMPLETED, LenderSearch.Status.FAILED)
    return 0 if search.status in final else settings.LEV_SEARCH_POLL_AFTER_MS


class SizingSerializer(serializers.Serializer):
    """What the lender's best program would lend on the deal (docs/finance.md, "Sizing")."""

    max_loan = serializers.FloatField(allow_null=True, help_text="US dollars, to the dollar.")
    binding = serializers.ChoiceField(choices=("ltv", "dscr", "debt_yield", "program_max"), allow_null=True)
    shortfall = serializers.FloatField(allow_null=True, help_text="The ask minus max_loan, US dollars; 0 when covered.")
    covers = serializers.BooleanField(allow_null=True)
    rate = serializers.FloatField(allow_null=True, help_text="Percent a year, as sized.")
    rate_source = serializers.ChoiceField(choices=("program", "deal", "default"), allow_null=True)
    amortization_years = serializers.IntegerField(allow_null=True)
    interest_only_months = serializers.IntegerField(allow_null=True)
    dscr_basis = serializers.CharField(allow_null=True)
    missing = serializers.ListField(child=serializers.CharField())
    summary = serializers.CharField()


class ScorePartsSerializer(serializers.Serializer):
    """The score in parts: the score is the predicted chance (percent) of a quote at a size that covers the
    ask — the stated programs' chance, moved by the account's own evidence, times the sizing."""

    program_fit = serializers.IntegerField(help_text="Fit of the best stated program to the deal, 0-100.")
    stated_chance = serializers.IntegerField(help_text="Chance of a quote from the stated programs alone, percent.")
    evidence_chance = serializers.IntegerField(allow_null=True,
                                               help_text="After the account's own outcomes (null: no evidence).")
    sizing = serializers.IntegerField(help_text="100 when the best program covers the ask; less when it falls short.")
    evidence_placements = serializers.FloatField(help_text="Time-weighted placements behind the evidence.")
    evidence = serializers.ChoiceField(choices=("none", "thin", "some", "strong"))


class LenderMatchSerializer(serializers.ModelSerializer):
    lender_name = serializers.CharField(read_only=True)
    lender_own = serializers.BooleanField(read_only=True, help_text="The account's own lender (not the directory's).")
    sizing = serializers.SerializerMethodField(
        help_text="What the best stated program would lend on the deal; null beyond the box (no program) and "
                  "in searches ranked before sizing.")
    score_parts = serializers.SerializerMethodField()
    outside_box = serializers.BooleanField(
        help_text="A candidate on the account's own record alone: no stated program covers the deal.")

    class Meta:
        model = LenderMatch
        fields = ("rank", "lender_id", "lender_name", "lender_own", "score", "match_insights", "programs",
                  "program_count", "capital_source", "outside_box", "sizing", "score_parts")

    @extend_schema_field(SizingSerializer(allow_null=True))
    def get_sizing(self, match: LenderMatch) -> dict | None:
        return match.sizing or None

    @extend_schema_field(ScorePartsSerializer(allow_null=True))
    def get_score_parts(self, match: LenderMatch) -> dict | None:
        return match.score_parts or None


class CapitalSourceMixSerializer(serializers.Serializer):
    capital_source = serializers.CharField(help_text="The kind of capital ('' when not stated).")
    lenders = serializers.IntegerField(help_text="Ranked lenders of this kind.")
    best_rank = serializers.IntegerField()
    best_lender_id = serializers.IntegerField()
    best_lender_name = serializers.CharField()
    best_score = serializers.IntegerField()


class LenderSearchResultsSerializer(serializers.Serializer):
    """A search and one page of its ranked matches; `count`/`next`/`previous` as in every list."""

    search_id = serializers.IntegerField(source="search.pk")
    deal_id = serializers.IntegerField(source="search.deal_id")
    deal_version = serializers.IntegerField(source="search.deal_version")
    deal_changed = serializers.SerializerMethodField(
        help_text="The deal changed after this search started; start a new search to rank it again.")
    status = serializers.CharField(source="search.status")
    progress = serializers.IntegerField(source="search.progress")
    total_candidates = serializers.IntegerField(source="search.total_candidates",
                                                help_text="Programs that passed every hard filter.")
    error = serializers.SerializerMethodField()
    queue_status = serializers.SerializerMethodField(help_text=QUEUE_STATUS_HELP)
    pending_seconds = serializers.SerializerMethodField(
        help_text="Seconds the search has waited for a worker while pending (0 otherwise).")
    poll_after_ms = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField(source="search.created_at")
    finished_at = serializers.DateTimeField(source="search.finished_at")
    count = serializers.IntegerField(
        source="page.total",
        help_text="Every eligible lender the search counted (one per lender with a matching program). Pages "
                  "cover only the best ranked_count of them: next is null after the last stored rank.")
    ranked_count = serializers.IntegerField(
        source="page.ranked",
        help_text="How many of the count are ranked and stored, ranks 1..ranked_count (the top "
                  "LEV_RANKING_TOP_N); 0 until scored, and 0 once results_removed.")
    results_removed = serializers.BooleanField(
        source="page.removed",
        help_text="The stored ranks were removed after retention because a newer search of the deal "
                  "replaced this one (superseded_by_search_id): read that one, or start a new search.")
    superseded_by_search_id = serializers.SerializerMethodField(
        help_text="Only when results_removed (else null): the newer completed search of the same deal.")
    page_ready = serializers.BooleanField(
        source="page.ready",
        help_text="False while the search is still writing this page's ranks: ask for it again later.")
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    results = LenderMatchSerializer(source="page.matches", many=True)
    by_capital_source = CapitalSourceMixSerializer(
        source="page.mix", many=True,
        help_text="The mix of capital among the ranked lenders, each kind with its best lender, most lenders "
                  "first: run a deal to several kinds at once (filter with capital_source).")

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_superseded_by_search_id(self, data) -> int | None:
        if not data["page"].removed:
            return None
        return lender_search_superseded_by(search=data["search"])

    def get_deal_changed(self, data) -> bool:
        current = getattr(data["search"], "current_deal_version", None)
        return current is not None and current != data["search"].deal_version

    @extend_schema_field(SearchErrorSerializer(allow_null=True))
    def get_error(self, data) -> dict | None:
        search = data["search"]
        if search.status != LenderSearch.Status.FAILED:
            return None
        return {"code": search.error_code or ErrorCode.INTERNAL_ERROR.value,
                "message": search.error_message or "Internal error: the lender search failed."}

    @extend_schema_field(serializers.ChoiceField(choices=QUEUE_STATUSES, allow_null=True))
    def get_queue_status(self, data) -> str | None:
        return lender_search_queue_status(search=data["search"])

    def get_pending_seconds(self, data) -> int:
        return lender_search_pending_seconds(search=data["search"])

    def get_poll_after_ms(self, data) -> int:
        return poll_after_ms(data["search"])
