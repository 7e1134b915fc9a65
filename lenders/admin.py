"""Admin of the lender directory (enum lists as checkboxes, coverage in words).

A lender's page opens on its profile, above the edit form: who the lender is (type, HQ, its programs
summed up) — directory data, global — and its activity with the viewer's accounts in words (each
account's own placements: `LenderActivity` is tenant-scoped, issue 37). The panels a deal team adds
(its contacts there, its history with the lender) are an account's own data in `deals`, which this
package never imports: `deals` fills them in from its `ready()` through `register_profile_panel`
(a seam, like lev.health's registry).

A deal team's own lenders and programs (issue 38) sit beside the directory's (`DirectoryOrOwnAdmin`): the
team sees both, adds its own and changes only its own (its members above viewer); superusers keep the
directory. The lists mark each row Directory or Own."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Count, Max, Min, Prefetch, Q, Sum
from django.http import HttpRequest
from django.utils.html import format_html

from lenders import program_terms, services
from lenders.models import AssetType, Lender, LenderActivity, LenderProgram
from lenders.rates import admin as rates_admin  # noqa: F401  (registers market rates)
from lev import formatting, limits
from lev.accounts.admin_bases import (
    ADMIN_CSS,
    AccountScopedAdmin,
    DirectoryOrOwnAdmin,
    GlobalAdmin,
    staff_account_ids,
    staff_roles,
    writable_account_ids,
)
from lev.admin_forms import EnumListField, ListsInWordsForViewers, money_field, multiple_field, percent_field
from lev.admin_lists import change_url, two_lines
from lev.enums import (
    ASSET_TYPES,
    LENDER_TYPES,
    LOAN_TYPES,
    POSITIONS,
    PROGRAM_LOAN_TYPES,
    RECOURSE_TYPES,
    US_STATES,
    mask_of,
)
from lev.vocabulary import bps_message, sentence

# The panels `deals` adds to a lender's page: (read(request, lender) -> the template's context, template).
_profile_panels: list[tuple[Callable[[HttpRequest, Lender], dict[str, Any]], str]] = []


def register_profile_panel(read: Callable[[HttpRequest, Lender], dict[str, Any]], template: str) -> None:
    """A panel of a lender's profile, after the directory's own: `read(request, lender)` gives the
    `template`'s context as `panel` (called once per visit; keep its queries bounded). Registering the
    same template again replaces it."""
    _profile_panels[:] = [(r, t) for r, t in _profile_panels if t != template]
    _profile_panels.append((read, template))


def _join(values: set[str], universe: tuple[str, ...]) -> str:
    return formatting.labels(values, universe)


def lender_profile(lender: Lender, account_ids: list[int] | None, *,
                   programs_of: list[int] | None = None) -> dict[str, Any]:
    """Who the lender is and its activity with the given accounts (None: every account, for
    operations), in a deal team's words (three queries whatever the number of its programs and
    markets). Its programs: the directory's and the own of the accounts `programs_of` (None: every
    account's, for operations)."""
    programs = lender.programs.all() if programs_of is None else lender.programs.filter(
        Q(account__isnull=True) | Q(account_id__in=programs_of))
    programs = list(programs.order_by("-status", "id").only(
        "lender_id", "account_id", "title", "status", "loan_types", "positions", "recourse_types", "asset_types",
        "sponsor_states", "min_loan_amount", "max_loan_amount", "max_ltv", "min_dscr", *program_terms.TERM_FIELDS))
    active = [p for p in programs if p.status == LenderProgram.Status.ACTIVE]

    def union(attribute: str) -> set[str]:
        return {value for program in active for value in getattr(program, attribute) or ()}

    lows = [p.min_loan_amount for p in active if p.min_loan_amount is not None]
    highs = [p.max_loan_amount for p in active if p.max_loan_amount is not None]
    ltvs = [p.max_ltv for p in active if p.max_ltv is not None]
    dscrs = [p.min_dscr for p in active if p.min_dscr is not None]
    nationwide = any(not p.sponsor_states for p in active)
    summary = {
        "loan_sizes": formatting.money_range(min(lows, default=None), max(highs, default=None)),
        "asset_types": _join(union("asset_types"), ASSET_TYPES),
        "max_ltv": formatting.percent(max(ltvs, default=None)),
        "min_dscr": formatting.multiple(min(dscrs, default=None)),
        "loan_types": _join(union("loan_types"), LOAN_TYPES),
        "positions": _join(union("positions"), POSITIONS),
        "recourse": _join(union("recourse_types"), RECOURSE_TYPES),
        "coverage": "Nationwide" if nationwide else formatting.coverage(union("sponsor_states")),
    } if active else None
    rows = [{"title": p.title, "active": p.status == LenderProgram.Status.ACTIVE, "own": p.account_id is not None,
             "loan_sizes": formatting.money_range(p.min_loan_amount, p.max_loan_amount),
             "asset_types": formatting.labels(p.asset_types, ASSET_TYPES),
             "leverage": f"{formatting.percent(p.max_ltv)} LTV · {formatting.multiple(p.min_dscr)} DSCR",
             "pricing": program_terms.pricing_in_words(p), "terms": program_terms.terms_in_words(p, empty=""),
             "loan_types": formatting.labels(p.loan_types, LOAN_TYPES),
             "coverage": formatting.coverage(p.sponsor_states)} for p in programs]
    return {"types": formatting.labels(lender.lender_types, LENDER_TYPES),
            "hq": ", ".join(part for part in (lender.city, lender.state) if part) or formatting.EMPTY,
            "website": lender.website, "about": lender.about,
            "programs": rows, "active_count": len(active), "summary": summary,
            "activity": activity_in_words(lender, account_ids)}


def activity_in_words(lender: Lender, account_ids: list[int] | None) -> dict[str, Any]:
    """The given accounts' LenderActivity with the lender (quotes and closings in the last 90 days per
    market, score) as sentences, with its most active markets (two queries). Another
    account's placements never show here."""
    rows = lender.activity.all()
    if account_ids is not None:
        rows = rows.filter(account_id__in=account_ids)
    totals = rows.aggregate(markets=Count("id"), quotes=Sum("quotes_90d"), closings=Sum("closings_90d"),
                            score=Max("score"))
    if not totals["markets"]:
        return {"markets": 0, "sentences": [], "top": []}
    top = list(rows.filter(Q(quotes_90d__gt=0) | Q(closings_90d__gt=0))
               .order_by("-score", "-quotes_90d", "state")
               .values_list("state", "quotes_90d", "closings_90d")[: limits.LENDER_PROFILE_MARKETS_SHOWN])
    quotes, closings, markets = totals["quotes"] or 0, totals["closings"] or 0, totals["markets"]
    sentences = [f"{quotes:,} quote{'s' if quotes != 1 else ''} and {closings:,} closing"
                 f"{'s' if closings != 1 else ''} in the last 90 days, across {markets} market"
                 f"{'s' if markets != 1 else ''}."]
    # The answer time is not said here: an average of the markets' medians is no figure of the
    # lender's. Its one figure (a median over its placements, with the span) is the deal team's panel's.
    level = totals["score"] or 0
    if level > 0:
        words = "Very active" if level >= 0.66 else "Active" if level >= 0.33 else "Quiet"
        sentences.append(f"{words} in its best market (activity score {level:.2f} of 1).")
    return {"markets": markets, "sentences": sentences,
            "top": [f"{state} ({q} quote{'s' if q != 1 else ''}, {c} closing{'s' if c != 1 else ''})"
                    for state, q, c in top]}


# --- lender directory -----------------------------------------------------------------------------
def _whole_number(label: str, help_text: str = "") -> forms.IntegerField:
    """A count or a spread: its bounds and their words are the model's (lenders.program_terms)."""
    return forms.IntegerField(label=label, help_text=help_text, required=False,
                              error_messages={"invalid": program_terms.WHOLE_NUMBER},
                              widget=forms.NumberInput(attrs={"step": "1", "min": "0"}))


class _SpreadField(forms.IntegerField):
    """A spread in basis points: one typed as a percent (2.85) is refused naming the basis points meant, in
    the model's words (lenders.program_terms), as REST and MCP say it."""

    def to_python(self, value):
        try:
            return super().to_python(value)
        except forms.ValidationError:
            raise forms.ValidationError(sentence(bps_message(value, maximum=limits.SPREAD_BPS_MAX)),
                                        code="invalid") from None


def _spread(label: str, help_text: str = "") -> _SpreadField:
    return _SpreadField(label=label, help_text=help_text, required=False,
                        widget=forms.NumberInput(attrs={"step": "1", "min": "0"}))


class LenderProgramForm(forms.ModelForm):
    """Programs' enum lists as checkboxes; the model's save() keeps the bit masks the ranking
    filters on in step with them. The terms are refused by the model's rule (lenders.program_terms,
    run by the form's model validation) and, where a field checks a bound or a fraction itself, in the
    same words."""

    loan_types = EnumListField(PROGRAM_LOAN_TYPES, label="Loan types")
    positions = EnumListField(POSITIONS, label="Positions")
    recourse_types = EnumListField(RECOURSE_TYPES, label="Recourse")
    asset_types = EnumListField(ASSET_TYPES, label="Asset types")
    sponsor_states = EnumListField(
        US_STATES, compact=True, label="Sponsor states",
        help_text="The states this program lends in. Leave every box unchecked for a nationwide program.",
    )
    min_loan_amount = money_field(label="Min loan")
    max_loan_amount = money_field(label="Max loan")
    max_ltv = percent_field(label="Max LTV", max_value=Decimal(limits.LTV_PERCENT_MAX),
                            help_text="Loan-to-value, percent.", fraction_floor=limits.LTV_PERCENT_FLOOR)
    min_dscr = multiple_field(label="Min DSCR", max_value=Decimal(limits.DSCR_INPUT_MAX),
                              help_text="Debt service coverage.")
    min_debt_yield = percent_field(label="Min debt yield", max_value=Decimal(limits.DEBT_YIELD_PERCENT_MAX),
                                   help_text="NOI / loan, percent.", fraction_floor=limits.DEBT_YIELD_PERCENT_FLOOR)
    spread_min_bps = _spread("Min spread (bps)", "Basis points over the index: 250 for 2.50%.")
    spread_max_bps = _spread("Max spread (bps)")
    fixed_rate_min = percent_field(label="Min fixed rate", max_value=Decimal(limits.RATE_PERCENT_MAX),
                                   **limits.RATE_COLUMN, help_text="Percent a year: 6.1 for 6.10%.",
                                   fraction_floor=limits.RATE_PERCENT_FLOOR)
    fixed_rate_max = percent_field(label="Max fixed rate", max_value=Decimal(limits.RATE_PERCENT_MAX),
                                   **limits.RATE_COLUMN, fraction_floor=limits.RATE_PERCENT_FLOOR)
    term_months_min = _whole_number("Min term (months)", "120 for ten years.")
    term_months_max = _whole_number("Max term (months)")
    amortization_years = _whole_number("Amortization (years)", "Empty: not stated.")
    interest_only_months = _whole_number("Interest-only (months)", "Empty: not stated.")

    class Meta:
        model = LenderProgram
        fields = ["title", "status", "capital_source_type", "loan_types", "positions", "recourse_types",
                  "min_loan_amount", "max_loan_amount", "max_ltv", "min_dscr", "min_debt_yield", "asset_types",
                  "sponsor_states", *program_terms.TERM_FIELDS]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # A figure's own bounds in the model rule's words ("Must be at most 100."), not Django's.
        for name in (*program_terms.PERCENTS, "min_dscr"):
            field = self.fields[name]
            field.error_messages["max_value"] = program_terms.at_most("%(limit_value)s")
            field.error_messages["min_value"] = (program_terms.MORE_THAN_ZERO if name == "min_dscr"
                                                 else program_terms.ZERO_OR_MORE)

    def clean(self):
        data = super().clean()
        low, high = data.get("min_loan_amount"), data.get("max_loan_amount")
        if low is not None and high is not None and low > high:
            self.add_error("max_loan_amount", "Must be at least the min loan.")
        if data.get("status") == LenderProgram.Status.ACTIVE and data.get("loan_types") == []:
            self.add_error("loan_types", "An active program offers at least one loan type.")
        return data


PROGRAM_HEAD = ["title", "status", "capital_source_type"]
PROGRAM_FIELDSETS = [
    ("What it lends", {"fields": ["loan_types", "positions", "recourse_types",
                                  ("min_loan_amount", "max_loan_amount"), ("max_ltv", "min_dscr", "min_debt_yield")]}),
    ("Pricing and terms", {"fields": ["rate_type", "rate_index", ("spread_min_bps", "spread_max_bps"),
                                      ("fixed_rate_min", "fixed_rate_max"), ("term_months_min", "term_months_max"),
                                      ("amortization_years", "interest_only_months")]}),
    ("Where and on what", {"fields": ["asset_types", "sponsor_states", "coverage"]}),
]


# A program's lists, read in words by whoever may only view them (the form's checkboxes' labels).
PROGRAM_WORDS = {"loan_types": (PROGRAM_LOAN_TYPES, "Loan types"), "positions": (POSITIONS, "Positions"),
                 "recourse_types": (RECOURSE_TYPES, "Recourse"), "asset_types": (ASSET_TYPES, "Asset types"),
                 "sponsor_states": (US_STATES, "Sponsor states")}


class ProgramCoverage:
    @admin.display(description="Coverage")
    def coverage(self, program: LenderProgram) -> str:
        return formatting.coverage(program.sponsor_states)


class LenderProgramInline(ListsInWordsForViewers, ProgramCoverage, admin.StackedInline):
    model = LenderProgram
    words_fields = PROGRAM_WORDS
    form = LenderProgramForm
    extra = 0
    # Folded: the profile above the form reads the programs; open it to edit them.
    classes = ["collapse"]
    fieldsets = [(None, {"fields": PROGRAM_HEAD}), *PROGRAM_FIELDSETS]
    readonly_fields = ["coverage"]

    def get_queryset(self, request):
        # The lender's programs the user reads: the directory's and its accounts' own.
        account_ids = staff_account_ids(request)
        queryset = super().get_queryset(request)
        return queryset if account_ids is None else queryset.filter(
            Q(account__isnull=True) | Q(account_id__in=account_ids))

    # On the lender's page a program is the lender's: a deal team adds and changes programs on its own
    # lender's page (a new one is the lender's account's: LenderProgram.clean); a directory lender's are
    # the superusers' to keep here (a team adds its own program to one on the programs' add page).
    def _writes(self, request, obj) -> bool:
        parent = self.admin_site._registry.get(self.parent_model)
        return parent is not None and parent.can_write(request, obj) and (
            request.user.is_superuser or (obj is not None and obj.account_id is not None))

    def has_add_permission(self, request, obj=None):
        if request.user.is_superuser:
            return super().has_add_permission(request, obj)
        return self._writes(request, obj)

    def has_change_permission(self, request, obj=None):
        if request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return self._writes(request, obj)

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_delete_permission(request, obj)

    def has_view_permission(self, request, obj=None):
        parent = self.admin_site._registry.get(self.parent_model)
        return super().has_view_permission(request, obj) or (parent is not None
                                                            and parent.has_view_permission(request, obj))

    def shows_words(self, request, obj=None) -> bool:
        # Read-only unless both the lender and its programs may be changed (the admin's own rule).
        parent = self.admin_site._registry.get(self.parent_model)
        return not (self.has_change_permission(request, obj)
                    and (parent is None or parent.has_change_permission(request, obj)))


class LenderForm(forms.ModelForm):
    website = forms.URLField(required=False, max_length=limits.LENDER_WEBSITE_MAX, assume_scheme="https")
    lender_types = EnumListField(LENDER_TYPES, label="Lender types")

    class Meta:
        model = Lender
        fields = ["account", "name", "website", "city", "state", "category", "lender_types", "about"]
        widgets = {"about": forms.Textarea(attrs={"rows": 3})}

    def clean(self):
        data = super().clean()
        account = data.get("account") if "account" in self.fields else self.instance.account
        name = data.get("name")
        if account is not None and name:
            reason = services.name_taken(account_id=account.pk, name=name, lender_id=self.instance.pk)
            if reason is not None:
                self.add_error("name", reason[0].upper() + reason[1:] + ".")
        return data


class OwnerFormMixin:
    """The `account` of a lender or program: chosen once, on the add page. A deal team chooses among the
    accounts it may write to (its own rows only); a superuser leaves it empty for the directory's."""

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "account" and not request.user.is_superuser:
            kwargs["queryset"] = db_field.related_model._default_manager.filter(
                pk__in=writable_account_ids(request))
            field = super().formfield_for_foreignkey(db_field, request, **kwargs)
            field.required, field.empty_label = True, None
            field.help_text = "Your account's own: read by your team alone."
            return field
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "account":
            field.help_text = "Empty: the directory's (every account reads it)."
        return field

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "account"] if obj is not None else fields

    @admin.display(description="Source", ordering="account__name")
    def source(self, obj) -> str:
        return "Directory" if obj.account_id is None else format_html(
            '<span class="lev-own">Own</span> · {}', obj.account.name)


class SourceFilter(admin.SimpleListFilter):
    title = "source"
    parameter_name = "source"

    def lookups(self, request, model_admin):
        return [("directory", "Directory"), ("own", "Own")]

    def queryset(self, request, queryset):
        if self.value() == "directory":
            return queryset.filter(account__isnull=True)
        if self.value() == "own":
            return queryset.filter(account__isnull=False)
        return queryset


class LenderTypeFilter(admin.SimpleListFilter):
    title = "lender type"
    parameter_name = "lender_type"

    def lookups(self, request, model_admin):
        return formatting.label_choices(LENDER_TYPES)

    def queryset(self, request, queryset):
        if self.value() in LENDER_TYPES:
            return queryset.filter(lender_type_mask__anybit=mask_of([self.value()], LENDER_TYPES))
        return queryset


@admin.register(Lender)
class LenderAdmin(OwnerFormMixin, ListsInWordsForViewers, DirectoryOrOwnAdmin):
    """The lender directory (every account ranks its lenders) and each deal team's own lenders beside it
    (read and changed by that team alone)."""

    form = LenderForm
    words_fields = {"lender_types": (LENDER_TYPES, "Lender types")}
    change_form_template = "admin/lenders/lender/change_form.html"
    # What a deal team compares across lenders (of their active programs), in a laptop's width.
    list_display = ["lender_cell", "source", "types", "loan_sizes", "asset_types", "max_leverage", "active_programs"]
    list_display_links = None  # the first cell links to the lender
    list_filter = [SourceFilter, LenderTypeFilter, "state", "category"]
    search_fields = ["name", "city", "about"]
    readonly_fields = ["created_at", "updated_at"]
    inlines = [LenderProgramInline]
    list_per_page = 50
    ordering = ["name", "id"]

    class Media:
        css = ADMIN_CSS

    def get_queryset(self, request):
        """Active programs' figures as aggregates and their asset types in one prefetch: a page of
        the list reads in the same few queries whatever its length. The programs counted: the
        directory's and the user's accounts' own."""
        account_ids = staff_account_ids(request)
        readable = Q() if account_ids is None else (Q(programs__account__isnull=True)
                                                    | Q(programs__account_id__in=account_ids))
        active = Q(programs__status=LenderProgram.Status.ACTIVE) & readable
        asset_types = LenderProgram.objects.filter(status=LenderProgram.Status.ACTIVE).only(
            "id", "lender_id", "asset_types").order_by("id")
        if account_ids is not None:
            asset_types = asset_types.filter(Q(account__isnull=True) | Q(account_id__in=account_ids))
        return super().get_queryset(request).select_related("account").annotate(
            active_program_count=Count("programs", filter=active),
            smallest_loan=Min("programs__min_loan_amount", filter=active),
            largest_loan=Max("programs__max_loan_amount", filter=active),
            highest_ltv=Max("programs__max_ltv", filter=active),
        ).prefetch_related(Prefetch("programs", queryset=asset_types, to_attr="active_programs_assets"))

    def get_exclude(self, request, obj=None):
        # The category is the directory's own bookkeeping (the demo directory is "demo"): superusers' alone,
        # never shown to a deal team (issue 39: lender pages read "Category: demo").
        exclude = list(super().get_exclude(request, obj) or [])
        return exclude if request.user.is_superuser else [*exclude, "category"]

    def get_list_filter(self, request):
        filters = super().get_list_filter(request)
        return filters if request.user.is_superuser else [f for f in filters if f != "category"]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        """A lender's page opens on its profile and the registered panels (above the form)."""
        if obj is not None and not add:
            # The viewer's own accounts' activity, as the panels' history: never another account's, and
            # none for someone in no account (operations included).
            context.update(lev_lender=lender_profile(obj, list(staff_roles(request)),
                                                     programs_of=staff_account_ids(request)),
                           lev_lender_panels=[{"template": template, "panel": read(request, obj)}
                                              for read, template in _profile_panels])
        return super().render_change_form(request, context, add, change, form_url, obj)

    @admin.display(description="Lender / HQ", ordering="name")
    def lender_cell(self, lender: Lender) -> str:
        """The name (linking to the lender) over where it is headquartered."""
        hq = ", ".join(part for part in (lender.city, lender.state) if part)
        return two_lines(lender.name, hq, change_url(lender))

    @admin.display(description="Type")
    def types(self, lender: Lender) -> str:
        return formatting.labels(lender.lender_types, LENDER_TYPES)

    @admin.display(description="Loan size", ordering="largest_loan")
    def loan_sizes(self, lender: Lender) -> str:
        return format_html('<span class="lev-nowrap">{}</span>',
                           formatting.money_range(lender.smallest_loan, lender.largest_loan))

    @admin.display(description="Asset types")
    def asset_types(self, lender: Lender) -> str:
        kinds = {kind for program in lender.active_programs_assets for kind in program.asset_types or ()}
        if len(kinds) > limits.LENDER_LIST_ASSET_TYPES_SHOWN:
            shown = sorted(kinds, key=lambda v: ASSET_TYPES.index(v) if v in ASSET_TYPES else len(ASSET_TYPES))
            extra = len(shown) - limits.LENDER_LIST_ASSET_TYPES_SHOWN
            return f"{formatting.labels(shown[:limits.LENDER_LIST_ASSET_TYPES_SHOWN])} +{extra} more"
        return formatting.labels(kinds, ASSET_TYPES)

    @admin.display(description="Max LTV", ordering="highest_ltv")
    def max_leverage(self, lender: Lender) -> str:
        return formatting.percent(lender.highest_ltv)

    @admin.display(description="Programs", ordering="active_program_count")
    def active_programs(self, lender: Lender) -> int:
        return lender.active_program_count


@admin.register(LenderProgram)
class LenderProgramAdmin(OwnerFormMixin, ListsInWordsForViewers, ProgramCoverage, DirectoryOrOwnAdmin):
    """Lenders' programs: the directory's, and each deal team's own (on its own lender or on a directory
    lender, read and changed by that team alone)."""

    form = LenderProgramForm
    words_fields = PROGRAM_WORDS
    fieldsets = [(None, {"fields": ["lender", "account", *PROGRAM_HEAD]}), *PROGRAM_FIELDSETS,
                 ("Record", {"classes": ["collapse"], "fields": ["created_at", "updated_at"]})]
    # A laptop's width: the program over its lender, then what it lends and where.
    # Whose program it is goes under its lender ("Own · account"), not in a column of its own: a Source
    # column took the list past a 1024 px laptop (tests/browser/test_admin_lists_browser.py).
    list_display = ["program_cell", "status", "loan_types_display", "loan_range", "ltv", "dscr", "coverage"]
    list_display_links = None  # the first cell links to the program
    list_filter = [SourceFilter, "status", "capital_source_type"]
    search_fields = ["title", "lender__name"]
    readonly_fields = ["coverage", "created_at", "updated_at"]
    list_select_related = ["lender", "account"]
    autocomplete_fields = ["lender"]

    class Media:
        css = ADMIN_CSS

    @admin.display(description="Program / lender", ordering="title")
    def program_cell(self, program: LenderProgram) -> str:
        lender = program.lender.name if program.account_id is None else format_html(
            '{} · <span class="lev-own">Own</span> · {}', program.lender.name, program.account.name)
        return two_lines(program.title, lender, change_url(program))

    @admin.display(description="Loan types")
    def loan_types_display(self, program: LenderProgram) -> str:
        return formatting.labels(program.loan_types, LOAN_TYPES)

    @admin.display(description="Loan size", ordering="max_loan_amount")
    def loan_range(self, program: LenderProgram) -> str:
        return formatting.money_range(program.min_loan_amount, program.max_loan_amount)

    @admin.display(description="Max LTV", ordering="max_ltv")
    def ltv(self, program: LenderProgram) -> str:
        return formatting.percent(program.max_ltv)

    @admin.display(description="Min DSCR", ordering="min_dscr")
    def dscr(self, program: LenderProgram) -> str:
        return formatting.multiple(program.min_dscr)


@admin.register(AssetType)
class AssetTypeAdmin(GlobalAdmin):
    """The asset-type vocabulary: global (not tenant-scoped)."""

    list_display = ["slug", "name"]
    search_fields = ["slug", "name"]


@admin.register(LenderActivity)
class LenderActivityAdmin(AccountScopedAdmin):
    """An account's activity with each lender per market, from its own placements: tenant-scoped — a
    deal team sees its own accounts' rows only (issue 37); operations see every account's."""

    list_display = ["lender_link", "state", "quotes", "closings", "response", "activity_score"]
    list_display_links = None  # the first cell links to the row
    list_filter = ["state"]
    search_fields = ["lender__name"]
    readonly_fields = ["updated_at"]
    list_select_related = ["lender"]

    class Media:
        css = ADMIN_CSS

    @admin.display(description="Lender", ordering="lender__name")
    def lender_link(self, row: LenderActivity) -> str:
        return two_lines(row.lender.name, "", change_url(row))

    @admin.display(description="Quotes (90 d)", ordering="quotes_90d")
    def quotes(self, row: LenderActivity) -> int:
        return row.quotes_90d

    @admin.display(description="Closings (90 d)", ordering="closings_90d")
    def closings(self, row: LenderActivity) -> int:
        return row.closings_90d

    # The market's median first answer (deals.placements.activity), said as what it is.
    @admin.display(description="Median answer (90 d)", ordering="avg_response_hours")
    def response(self, row: LenderActivity) -> str:
        return formatting.EMPTY if row.avg_response_hours is None else f"{row.avg_response_hours:,.0f} h"

    @admin.display(description="Score", ordering="score")
    def activity_score(self, row: LenderActivity) -> str:
        return formatting.EMPTY if row.score is None else f"{row.score:.2f}"
