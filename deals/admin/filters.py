"""The deal list's filters: status (active by default), property state and asset type, the latest
lender search's status."""

from __future__ import annotations

from django.contrib import admin

from deals.models import DealProperty
from deals.pipeline.admin import DealStatusFilter, StageFilter
from deals.searches.models import LenderSearch
from lev import formatting
from lev.accounts.admin_bases import staff_account_ids
from lev.enums import ASSET_TYPES, US_STATES


class ArchivedFilter(DealStatusFilter):
    """Active deals (not archived, in an open stage) unless another status is asked for; with a stage
    chosen and no status, that stage's deals that are not archived (its pipeline column)."""

    title = "status"
    parameter_name = "archived"  # the list's links keep their name: ?archived=dead
    deal_path = ""
    stage_params = (StageFilter.parameter_name, StageFilter.by_id)
    choice_labels = [("active", "Active"), ("closed", "Closed"), ("dead", "Dead"), ("archived", "Archived"),
                     ("all", "All")]


class PropertyFilter(admin.SimpleListFilter):
    """Deals with a property of the chosen value (listing only values the user's deals have)."""

    field: str
    universe: tuple[str, ...]

    def lookups(self, request, model_admin):
        properties = DealProperty.objects.exclude(**{self.field: ""})
        account_ids = staff_account_ids(request)
        if account_ids is not None:
            properties = properties.filter(deal__account_id__in=account_ids)
        present = set(properties.values_list(self.field, flat=True).distinct())
        return [(v, formatting.label(v)) for v in self.universe if v in present]

    def queryset(self, request, queryset):
        if self.value() in self.universe:
            # A subquery, so a deal with two matching properties is listed once.
            with_it = DealProperty.objects.filter(**{self.field: self.value()}).values("deal_id")
            return queryset.filter(pk__in=with_it)
        return queryset


class PropertyStateFilter(PropertyFilter):
    title = "property state"
    parameter_name = "property_state"
    field = "state"
    universe = US_STATES


class AssetTypeFilter(PropertyFilter):
    title = "asset type"
    parameter_name = "asset_type"
    field = "asset_type"
    universe = ASSET_TYPES


class LatestSearchFilter(admin.SimpleListFilter):
    title = "latest lender search"
    parameter_name = "latest_search"

    def lookups(self, request, model_admin):
        return [*LenderSearch.Status.choices, ("none", "None yet")]

    def queryset(self, request, queryset):
        if self.value() == "none":
            return queryset.filter(latest_search_status__isnull=True)
        if self.value() in LenderSearch.Status.values:
            return queryset.filter(latest_search_status=self.value())
        return queryset

