"""Tenancy in the admin: one mechanism for every registered ModelAdmin.

Every admin of the site is one of three kinds (a test walks `admin.site._registry` and refuses a
model that is none of them, so a new model cannot be forgotten):

* `AccountScopedAdmin` — rows that belong to an account (deals, API keys, idempotency records,
  OAuth grants, …), reached from the model by `account_path`. A staff user who is not a superuser
  sees and changes only the rows of the accounts it is a member of; another account's row is
  missing everywhere the admin reaches rows — the list, the change, delete and history pages
  (Django's "doesn't exist" redirect), actions (they run on the scoped queryset), the date
  hierarchy, and the autocomplete of any field that points at the model. Superusers see all.
  `DirectoryOrOwnAdmin` is one of them for shared rows beside an account's own (the lender directory and
  a team's own lenders): a null account is the directory's, read by all, kept by superusers.
* `GlobalAdmin` — data shared by every account (the lender directory, asset types, base rates):
  not tenant-scoped; model permissions decide who may change it, and only superusers delete (a
  deletion would cascade into every account's rows).
* `SuperuserOnlyAdmin` — site operations data that no account owns and that would cross accounts if
  shown (sign-in records, OAuth clients and raw tokens, permission groups): superusers only.

All three narrow what a form or a filter offers the same way: a foreign-key or many-to-many choice
(and a list filter on a relation, e.g. "account") lists only the rows the staff user may see in the
related model's own admin, so choosing another account (or its deal) is not offered, and a posted id
of one is refused by the form as an invalid choice.

This module is in `lev` and imports no feature app: accounts are reached through the user's
`memberships` relation by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from django.contrib import admin, messages
from django.contrib.admin.utils import get_fields_from_path, unquote
from django.core.exceptions import FieldDoesNotExist
from django.db.models import Model, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.text import capfirst
from django.utils.translation import gettext
from simple_history.admin import SimpleHistoryAdmin

# The admin's own stylesheet (deals/static/lev_admin/admin.css), served by the site itself.
ADMIN_CSS = {"all": ["lev_admin/admin.css"]}

_CACHE_ATTRIBUTE = "_lev_staff_account_ids"


def staff_roles(request: HttpRequest) -> dict[int, str]:
    """The signed-in user's role in each account it is a member of, {account id: role} (read once per
    request: the tenancy of every page and the app list's sections share it)."""
    cached = getattr(request, _CACHE_ATTRIBUTE, None)
    if cached is None:
        user = request.user
        cached = dict(user.memberships.values_list("account_id", "role")) if user.is_authenticated else {}
        setattr(request, _CACHE_ATTRIBUTE, cached)
    return cached


def staff_account_ids(request: HttpRequest) -> list[int] | None:
    """The accounts whose rows the signed-in staff user sees: every account (None) for a superuser
    (operations), else the accounts the user is a member of (read once per request)."""
    if request.user.is_superuser:
        return None
    return list(staff_roles(request))


def choices_for(request: HttpRequest, site: admin.AdminSite, model: type[Model]) -> QuerySet | None:
    """The rows of `model` a form or filter may offer the staff user: what that model's admin lets it
    see, or None (no narrowing) for a model without an admin of this module (e.g. memberships)."""
    model_admin = site._registry.get(model)
    if isinstance(model_admin, TenancyAdmin):
        return model_admin.visible(request, model._default_manager.all())
    return None


class ScopedRelatedFieldListFilter(admin.RelatedFieldListFilter):
    """A filter on a relation (e.g. "account") that lists only the rows the staff user may see."""

    def field_choices(self, field, request, model_admin):
        choices = choices_for(request, model_admin.admin_site, field.related_model)
        if choices is None:
            return super().field_choices(field, request, model_admin)
        ordering = self.field_admin_ordering(field, request, model_admin)
        target = field.target_field.attname
        return [(getattr(row, target), str(row)) for row in choices.order_by(*ordering or ["pk"])]


class _NarrowedChoices:
    """Foreign-key and many-to-many choices narrowed to what the staff user may see (admins and inlines)."""

    def _narrowed(self, db_field, request, kwargs: dict) -> dict:
        if "queryset" not in kwargs:
            choices = choices_for(request, self.admin_site, db_field.related_model)
            if choices is not None:
                kwargs["queryset"] = choices
        return kwargs

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        return super().formfield_for_foreignkey(db_field, request, **self._narrowed(db_field, request, kwargs))

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        return super().formfield_for_manytomany(db_field, request, **self._narrowed(db_field, request, kwargs))


def _titled(response: HttpResponse, title: Callable[[dict], str | None]) -> HttpResponse:
    """`response` with its page's title (the <title> and the <h1>) set to `title(its context)` when that
    is not None: a template response is rendered after the view returns, so its context can still change."""
    if isinstance(response, TemplateResponse) and response.context_data is not None:
        text = title(response.context_data)
        if text is not None:
            response.context_data.update(title=text, subtitle=None)
    return response


class TenancyAdmin(_NarrowedChoices, admin.ModelAdmin):
    """The base of the three kinds; `tenancy` names which one a model is.

    Its pages are titled in the product's words, not Django's stock ones: a list is "Deals" (not "Select
    deal to change"), a record's page "Deal: Riverside Apartments Refinance" (not "Change deal" over the
    name), a new one's "New deal", and "History of …" and "Delete …?" (tests/admin/test_titles.py walks
    every page)."""

    tenancy: ClassVar[str]

    def missing_object(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """What the admin answers for a row the user cannot see (another account's, or gone): Django's own
        words ("Deal with ID "7" doesn't exist. Perhaps it was deleted?", its translation catalogue's)
        and the admin's index — the same answer whether the row exists elsewhere or not."""
        message = gettext("%(name)s with ID “%(key)s” doesn\u2019t exist. Perhaps it was deleted?") % {
            "name": self.opts.verbose_name, "key": unquote(object_id)}
        self.message_user(request, message, messages.WARNING)
        return HttpResponseRedirect(reverse("admin:index", current_app=self.admin_site.name))

    def changelist_view(self, request, extra_context=None):
        return _titled(super().changelist_view(request, extra_context),
                       lambda context: capfirst(self.opts.verbose_name_plural))

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        def title(context: dict) -> str:
            original = context.get("original")
            if context.get("add") or original is None:
                return f"New {self.opts.verbose_name}"
            return f"{capfirst(self.opts.verbose_name)}: {original}"

        return _titled(super().changeform_view(request, object_id, form_url, extra_context), title)

    def history_view(self, request, object_id, extra_context=None):
        return _titled(super().history_view(request, object_id, extra_context),
                       lambda context: f"History of {self.opts.verbose_name} {context['object']}"
                       if context.get("object") is not None else None)

    def delete_view(self, request, object_id, extra_context=None):
        # Django's "Cannot delete deal" (what stops it is listed below) stays as it is.
        return _titled(super().delete_view(request, object_id, extra_context),
                       lambda context: f"Delete {self.opts.verbose_name} {context['object']}?"
                       if context.get("object") is not None and context.get("title") == gettext("Delete") else None)

    def visible(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        """The rows of `queryset` the staff user may see."""
        raise NotImplementedError

    def get_queryset(self, request):
        return self.visible(request, super().get_queryset(request))

    def get_inlines(self, request, obj):
        # An inline that shows a saved record's own rows (`change_page_only`, e.g. its notes) is left out
        # of the add page: nothing to show yet, and no formset for the add form to post.
        inlines = super().get_inlines(request, obj)
        return inlines if obj is not None else [i for i in inlines if not getattr(i, "change_page_only", False)]

    def get_list_filter(self, request):
        filters = []
        for item in super().get_list_filter(request):
            if isinstance(item, str):
                try:
                    field = get_fields_from_path(self.model, item)[-1]
                except FieldDoesNotExist:
                    field = None
                if field is not None and field.is_relation:
                    item = (item, ScopedRelatedFieldListFilter)
            filters.append(item)
        return filters


class AccountScopedAdmin(TenancyAdmin):
    """Rows that belong to an account, reached from the model by `account_path` ("pk" for the
    account itself). `account_path_is_many`: the path runs through a to-many relation (a user's
    memberships), so it is matched in a subquery and a row is never listed twice."""

    tenancy = "account"
    account_path: ClassVar[str] = "account"
    account_path_is_many: ClassVar[bool] = False

    def visible(self, request, queryset):
        account_ids = staff_account_ids(request)
        if account_ids is None:
            return queryset
        lookup = {f"{self.account_path}__in": account_ids}
        if self.account_path_is_many:
            return queryset.filter(pk__in=self.model._default_manager.filter(**lookup).values("pk"))
        return queryset.filter(**lookup)


class AccountSetOnceAdmin(AccountScopedAdmin):
    """A row whose account is chosen when it is added and never changed after (its related rows are that
    account's): the account is read-only on a saved row's page."""

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "account"] if obj is not None else fields


def writable_account_ids(request: HttpRequest) -> list[int]:
    """The accounts whose records the signed-in user may change: those where its role is above viewer."""
    return [account_id for account_id, role in staff_roles(request).items() if role != "viewer"]


class DirectoryOrOwnAdmin(AccountScopedAdmin):
    """Shared rows beside an account's own (the lender directory and a team's own lenders, issue 38): a row
    whose `account_path` is null is the directory's — every account reads it, superusers keep it — and a
    row with an account is that account's own: its members read it and those above viewer add and change
    it; another account's is missing everywhere, as for `AccountScopedAdmin` (of which this is one kind,
    so its tests walk it). Deleting stays the superusers' (a deletion cascades into placements)."""

    def visible(self, request, queryset):
        account_ids = staff_account_ids(request)
        if account_ids is None:
            return queryset
        return queryset.filter(Q(**{f"{self.account_path}__isnull": True})
                               | Q(**{f"{self.account_path}__in": account_ids}))

    def owner_id(self, obj: Model) -> int | None:
        return getattr(obj, f"{self.account_path}_id")

    def can_write(self, request: HttpRequest, obj: Model | None = None) -> bool:
        """Whether the user may add (obj None) or change `obj` here: a superuser anything, anyone else the
        own rows of an account where it is above viewer, never the directory's."""
        if request.user.is_superuser:
            return True
        writable = writable_account_ids(request)
        return bool(writable) if obj is None else self.owner_id(obj) in writable

    def has_add_permission(self, request, *args):
        if request.user.is_superuser:
            return super().has_add_permission(request, *args)
        return self.has_view_permission(request) and self.can_write(request)

    def has_change_permission(self, request, obj=None):
        if request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return self.has_view_permission(request) and self.can_write(request, obj)

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_delete_permission(request, obj)


class AccountScopedHistoryAdmin(AccountScopedAdmin, SimpleHistoryAdmin):
    """An account's rows with django-simple-history's history pages (who changed what, when), kept to
    the account as every other page: another account's row has no history page here (the admin's
    "doesn't exist" answer, as for its change page) — simple-history's own view would otherwise show
    a row it cannot find in the scoped queryset from its last historical record. The pages only read:
    a historical version is never saved back (a revert would skip the services and their rules)."""

    def _scoped_or_missing(self, request, object_id: str):
        obj = self.get_object(request, unquote(object_id))
        return obj, (None if obj is not None else
                     self.missing_object(request, object_id))

    def history_view(self, request, object_id, extra_context=None):
        _obj, missing = self._scoped_or_missing(request, object_id)
        return missing or super().history_view(request, object_id, extra_context)

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        if request.method != "GET":
            return HttpResponseNotAllowed(["GET"])
        _obj, missing = self._scoped_or_missing(request, object_id)
        return missing or super().history_form_view(request, object_id, version_id, extra_context)

    def revert_disabled(self, request, obj=None) -> bool:
        return True


class GlobalAdmin(TenancyAdmin):
    """Data every account shares (not tenant-scoped): model permissions decide who may change it.
    Deleting is for superusers: a deleted lender would take every account's placements with it (and
    Django's confirmation page would list them)."""

    tenancy = "global"

    def visible(self, request, queryset):
        return queryset

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_delete_permission(request, obj)


class SuperuserOnlyAdmin(TenancyAdmin):
    """Site operations data no account owns: shown to superusers only, to nobody else at all."""

    tenancy = "superuser"

    def visible(self, request, queryset):
        return queryset if request.user.is_superuser else queryset.none()

    def has_module_permission(self, request):
        return request.user.is_superuser and super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_view_permission(request, obj)

    def has_add_permission(self, request, *args):
        return request.user.is_superuser and super().has_add_permission(request, *args)

    def has_change_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_delete_permission(request, obj)


class TenancyInlineMixin(_NarrowedChoices):
    """For inlines: their choices are narrowed as their admin's are (their rows are the parent's)."""


def restrict_to_superusers(site: admin.AdminSite, *models: type[Model]) -> None:
    """Re-register another package's admins of `models` as superuser-only (their own options kept)."""
    for model in models:
        current = site._registry.get(model)
        if current is None or isinstance(current, TenancyAdmin):
            continue
        base = type(current)
        site.unregister(model)
        site.register(model, type(base.__name__, (SuperuserOnlyAdmin, base), {"__module__": __name__,
                                                                             "__doc__": base.__doc__}))


def revoke_each(model_admin: admin.ModelAdmin, request: HttpRequest, items: Iterable[Any],
                revoke: Callable[[Any], Any], what: str) -> None:
    """An admin action's body: revoke each of `items` (the admin's scoped queryset) and say how many."""
    count = 0
    for item in items:
        revoke(item)
        count += 1
    model_admin.message_user(request, f"Revoked {count} {what}.", messages.SUCCESS)
