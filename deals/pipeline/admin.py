"""The pipeline in the admin: each account's stages (account admins rename, add and reorder them), and
a deal's stage history as an inline of the deal page (deals/admin/deal.py)."""

from __future__ import annotations

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q

from deals.pipeline import services
from deals.pipeline.models import Stage, StageChange, deal_status_q
from deals.pipeline.selectors import IN_STAGE
from lev import admin_lists
from lev.accounts.admin_bases import ADMIN_CSS, AccountScopedAdmin, staff_account_ids
from lev.accounts.models import Membership
from lev.errors import ApplicationError


def check_staff_can_administer(*, user, account_id: int) -> None:
    """Superusers, and the account's admins (owner role), may change its stages."""
    if user.is_superuser:
        return
    if not Membership.objects.filter(user=user, account_id=account_id, role=Membership.Role.OWNER).exists():
        raise PermissionDenied("Only an account admin (owner) can change the pipeline's stages.")


class DealStatusFilter(admin_lists.DealStatusFilter):
    """The lists' deal status (Active by default) as deals.pipeline.models.deal_status_q says it."""

    def status_q(self, status: str, prefix: str) -> Q:
        if status == admin_lists.IN_STAGE:
            return Q(**{f"{prefix}archived": False})
        return deal_status_q(status, prefix)


class StageFilter(admin.SimpleListFilter):
    """The deal list's "By stage", one choice per stage name: each account has its own stages, so whoever
    sees several accounts (operations, a member of two) would otherwise read "Intake" once per account.
    A name selects the deals in a stage of that name (whatever its case, as names are unique within an
    account) in any account the person sees; the list's accounts filter narrows it to one. The home
    page's links to one account's stage (`stage__id__exact`) still filter by that stage, and show it
    chosen here."""

    title = "stage"
    parameter_name = "stage"
    by_id = "stage__id__exact"

    def __init__(self, request, params, model, model_admin):
        self._chosen_id = params.get(self.by_id)
        super().__init__(request, params, model, model_admin)

    def lookups(self, request, model_admin):
        stages = Stage.objects.order_by("position", "name", "id")
        account_ids = staff_account_ids(request)
        if account_ids is not None:
            stages = stages.filter(account_id__in=account_ids)
        names: dict[str, str] = {}  # its lower case → the name as first spelt, in pipeline order
        self._names_by_id = {}
        for pk, name in stages.values_list("id", "name"):
            names.setdefault(name.lower(), name)
            self._names_by_id[str(pk)] = names[name.lower()]
        return [(name, name) for name in names.values()]

    def choices(self, changelist):
        by_id = self._chosen_id[-1] if isinstance(self._chosen_id, list) else self._chosen_id
        chosen = self.value() or self._names_by_id.get(str(by_id))
        yield {"selected": chosen is None, "display": "All",
               "query_string": changelist.get_query_string(remove=[self.parameter_name, self.by_id])}
        for value, title in self.lookup_choices:
            yield {"selected": chosen is not None and chosen.lower() == value.lower(), "display": title,
                   "query_string": changelist.get_query_string({self.parameter_name: value}, [self.by_id])}

    def queryset(self, request, queryset):
        return queryset.filter(stage__name__iexact=self.value()) if self.value() else queryset


@admin.register(Stage)
class StageAdmin(AccountScopedAdmin):
    list_display = ["name", "account", "position", "key", "kind", "active_deals"]
    list_display_links = ["name"]
    list_filter = ["account", "kind"]
    ordering = ["account", "position", "id"]
    fields = ["account", "name", "kind", "position", "key"]
    list_select_related = ["account"]

    class Media:
        css = ADMIN_CSS

    def get_queryset(self, request):
        # As the pipeline's column of the stage counts them (deals.pipeline.selectors.IN_STAGE).
        return super().get_queryset(request).annotate(active=Count("deals", filter=IN_STAGE))

    @admin.display(description="Deals (not archived)", ordering="active")
    def active_deals(self, stage: Stage) -> int:
        return stage.active

    def get_readonly_fields(self, request, obj=None):
        # The key is a default stage's role; the kind of a stage is chosen when it is added.
        return ["key"] if obj is None else ["account", "key", "kind"]

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # deals and their history point at stages: rename one instead

    def save_model(self, request, obj, form, change):
        check_staff_can_administer(user=request.user, account_id=obj.account_id)
        try:
            if not change:
                created = services.stage_create(account=obj.account, name=obj.name, kind=obj.kind,
                                                position=obj.position)
                obj.pk = created.pk
                obj.refresh_from_db()
                obj._state.adding = False
                return
            if "name" in form.changed_data:
                services.stage_rename(stage=obj, name=form.cleaned_data["name"])
            if "position" in form.changed_data:
                others = [pk for pk in Stage.objects.filter(account_id=obj.account_id).exclude(pk=obj.pk)
                          .order_by("position", "id").values_list("pk", flat=True)]
                at = max(0, min(len(others), form.cleaned_data["position"] - 1))
                services.stages_reorder(account=obj.account, stage_ids=[*others[:at], obj.pk, *others[at:]])
        except ApplicationError as error:
            raise PermissionDenied(str(error)) from error


class StageChangeInline(admin.TabularInline):
    """The deal's stage history, oldest first: read-only (a record of what happened)."""

    model = StageChange
    fk_name = "deal"
    extra = 0
    can_delete = False
    fields = ["at", "from_name", "to_name", "by", "automatic", "reason"]
    readonly_fields = fields
    verbose_name = "stage change"
    verbose_name_plural = "stage history"

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("by").order_by("at", "id")
