"""What the deal team's lists share: the "Active deals" default (deals being worked; closed, dead and
archived deals' rows — the demo account's market history among them — only when asked for), totals
that count that default rather than what it hides, row cells written as a deal team reads them
(two lines: a link over a quiet line), and the row ids an admin form posts (`posted_id`, `ticked_ids`)."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db.models import Q
from django.urls import reverse
from django.utils.html import format_html

from lev import formatting

IN_STAGE = "in_stage"  # no status chosen, a stage named: its deals that are not archived


class DealStatusFilter(admin.SimpleListFilter):
    """Rows of active deals unless another status (lev.enums.DEAL_STATUSES) is asked for. What each
    status is, is the deals app's one definition (deals.pipeline.models.deal_status_q), which a
    subclass there gives as `status_q(status, prefix)`; `deal_path` is the path to the deal from the
    listed model ("" for deals)."""

    title = "deal"
    parameter_name = "deal_status"
    default = "active"
    deal_path = "deal__"
    choice_labels = [("active", "Active deals"), ("closed", "Closed deals"), ("dead", "Dead deals"),
                     ("archived", "Archived deals"), ("all", "All deals")]
    # The list's stage filters: with one of them and no status asked for, the rows are the stage's deals
    # that are not archived (IN_STAGE), as the pipeline's column of that stage counts them.
    stage_params: tuple[str, ...] = ()

    def __init__(self, request, params, model, model_admin):
        self._stage_named = any(name in request.GET for name in self.stage_params)
        super().__init__(request, params, model, model_admin)

    def status_q(self, status: str, prefix: str) -> Q:
        raise NotImplementedError("the deals app says what each status is")

    def lookups(self, request, model_admin):
        return self.choice_labels

    def chosen(self) -> str:
        if self.value() in {value for value, _ in self.choice_labels}:
            return self.value()
        return IN_STAGE if self._stage_named else self.default

    def choices(self, changelist):
        for lookup, title in self.lookup_choices:
            yield {"selected": self.chosen() == lookup, "display": title,
                   "query_string": changelist.get_query_string({self.parameter_name: lookup})}

    def queryset(self, request, queryset):
        return queryset.filter(self.status_q(self.chosen(), self.deal_path))


class DefaultScopeChangeList(ChangeList):
    """A list whose "(N total)" counts the rows its default filter shows (a team's active deals),
    never the archive it hides; once another status is chosen it counts every row as Django does."""

    def get_results(self, request):
        super().get_results(request)
        scope = getattr(self.model_admin, "default_scope_filter", None)
        if scope is None or self.full_result_count is None or scope.parameter_name in request.GET:
            return
        spec = scope(request, {}, self.model, self.model_admin)
        self.full_result_count = spec.queryset(request, self.root_queryset).count()


class DefaultScopeMixin:
    """For a ModelAdmin: lists through DefaultScopeChangeList (set `default_scope_filter`)."""

    default_scope_filter: type[admin.SimpleListFilter] | None = None

    def get_changelist(self, request, **kwargs):
        return DefaultScopeChangeList


def two_lines(first, second, url: str | None = None) -> str:
    """A cell of a link (or text) over a quiet second line."""
    head = format_html('<a href="{}">{}</a>', url, first) if url else format_html("{}", first)
    if not second or second == formatting.EMPTY:
        return head
    return format_html('{}<div class="lev-sub">{}</div>', head, second)


def change_url(obj) -> str:
    return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])


class WordsChoicesFilter(admin.ChoicesFieldListFilter):
    """A choices field's filter in lev.formatting's words ("To be decided", "CMBS", "Non-recourse"),
    not the model's title-cased slugs ("Tbd")."""

    def words(self, value: str) -> str:
        return formatting.label(value)

    def choices(self, changelist):
        words = {str(title): self.words(str(value)) for value, title in self.field.flatchoices}
        for choice in super().choices(changelist):
            display = str(choice["display"])
            for old, new in words.items():
                if display == old or display.startswith(old + " ("):
                    choice["display"] = new + display[len(old):]
                    break
            yield choice


def posted_id(text: str) -> int | None:
    """A row id posted by an admin form: digits only, at most 9 of them, else None."""
    return int(text) if text.isdigit() and len(text) < 10 else None


def ticked_ids(values: list[str]) -> list[int]:
    """The row ids ticked on an admin form, in the order posted, once each; anything not an id left out."""
    return list(dict.fromkeys(i for i in map(posted_id, values) if i is not None))
