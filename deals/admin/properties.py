"""The property list: each deal's properties, saved through the deal services (a change bumps
the deal's version; an archived deal's properties are read-only)."""

from __future__ import annotations

from django.contrib import admin

from deals import services
from deals.admin.forms import DealPropertyForm
from deals.models import DealProperty
from lev import formatting
from lev.accounts.admin_bases import ADMIN_CSS, AccountScopedAdmin
from lev.admin_lists import WordsChoicesFilter, change_url, two_lines


@admin.register(DealProperty)
class DealPropertyAdmin(AccountScopedAdmin):
    account_path = "deal__account"
    form = DealPropertyForm
    # A laptop's width: the property over where it is, its deal, what it is.
    list_display = ["property_cell", "deal", "kind", "units"]
    list_display_links = None  # the first cell links to the property
    list_filter = ["state", ("asset_type", WordsChoicesFilter)]
    search_fields = ["name", "address", "city", "deal__title"]
    readonly_fields = ["created_at", "updated_at"]
    list_select_related = ["deal"]
    autocomplete_fields = ["deal"]

    class Media:
        css = ADMIN_CSS

    @admin.display(description="Property", ordering="name")
    def property_cell(self, prop: DealProperty) -> str:
        where = ", ".join(part for part in (prop.city, prop.state) if part)
        return two_lines(prop.name or formatting.EMPTY, where, change_url(prop))

    @admin.display(description="Asset type", ordering="asset_type")
    def kind(self, prop: DealProperty) -> str:
        return formatting.label(prop.asset_type) if prop.asset_type else formatting.EMPTY

    def get_form(self, request, obj=None, **kwargs):
        kwargs["fields"] = ["deal", *services.PROPERTY_FIELDS]
        return super().get_form(request, obj, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "deal"] if obj is not None else fields

    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and not (obj is not None and obj.deal.archived)

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and not (obj is not None and obj.deal.archived)

    def save_model(self, request, obj, form, change):
        data = {name: form.cleaned_data.get(name) for name in services.PROPERTY_FIELDS}
        if change:
            changed = {name: value for name, value in data.items() if name in form.changed_data}
            services.deal_property_update(prop=obj, data=changed)
        else:
            created = services.deal_property_create(deal=form.cleaned_data["deal"], data=data)
            obj.pk = created.pk

    def delete_model(self, request, obj):
        services.deal_property_delete(prop=obj)

    def delete_queryset(self, request, queryset):
        for prop in queryset.select_related("deal"):
            services.deal_property_delete(prop=prop)
