"""The admin's doors to the history export (docs/import-export.md, "Export"): the deal list's actions
"Export selected deals (CSV)" / "(XLSX)", and a whole-account export linked above the deal list. Both
call deals.history.export through the REST export's file response; both see only the accounts the staff
user sees (a superuser: any), and an export is one account's (its own lenders go with it)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest

from deals.history.export import FORMATS
from deals.history.export_api import TABLES, export_file_response
from lev.accounts.admin_bases import staff_account_ids
from lev.accounts.models import Account


def export_selected(model_admin: admin.ModelAdmin, request: HttpRequest, queryset, kind: str) -> HttpResponse | None:
    """The selected deals (of one account) as a history file; a message instead when they are of several."""
    ids = list(queryset.values_list("pk", flat=True))
    accounts = sorted(set(queryset.model._default_manager.filter(pk__in=ids).values_list("account_id", flat=True)))
    if len(accounts) != 1:
        model_admin.message_user(request, "Select deals of one account to export: a history file is one "
                                          "account's (its own lenders go with it).", messages.ERROR)
        return None
    return export_file_response(account=Account.objects.get(pk=accounts[0]), kind=kind, deals=ids)


def export_accounts(request: HttpRequest) -> list[Account]:
    """The accounts whose whole history the staff user may export from the deal list: those it sees."""
    account_ids = staff_account_ids(request)
    accounts = Account.objects.order_by("name")
    return list(accounts if account_ids is None else accounts.filter(pk__in=account_ids))


def account_export_view(model_admin: admin.ModelAdmin, request: HttpRequest) -> HttpResponse:
    """GET ?account=ID&format=csv|xlsx[&table=own_lenders]: an account's whole history (the account may be
    left out when the user sees one). Another account is "not found", as everywhere in the admin."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    kind, table = request.GET.get("format", "xlsx"), request.GET.get("table", "history")
    if kind not in FORMATS or table not in TABLES:
        return HttpResponseBadRequest("format must be csv or xlsx; table history or own_lenders.")
    visible = export_accounts(request)
    wanted = request.GET.get("account", "")
    if not wanted and len(visible) == 1:
        return export_file_response(account=visible[0], kind=kind, table=table)
    account = next((a for a in visible if str(a.pk) == wanted), None)
    if account is None:
        raise Http404("No such account.")
    return export_file_response(account=account, kind=kind, table=table)


def export_links(request: HttpRequest) -> list[tuple[str, str]]:
    """The deal list's "Export history" links: for the account the list is filtered to, or the one account
    the user sees; none when the list spans several accounts. No query of its own (the list page's query
    count is held by a test): the account's id is all a link needs."""
    from django.urls import reverse
    from django.utils.http import urlencode

    account_ids = staff_account_ids(request)  # read once per request, by the list's tenancy already
    wanted = request.GET.get("account__id__exact", "")
    if wanted.isdigit() and (account_ids is None or int(wanted) in account_ids):
        account_id = int(wanted)
    elif account_ids is not None and len(account_ids) == 1:
        account_id = account_ids[0]
    else:
        return []
    url = reverse("admin:deals_deal_export_history")
    return [(f"Export history ({label})", f"{url}?{urlencode({'account': account_id, 'format': kind})}")
            for kind, label in (("xlsx", "XLSX"), ("csv", "CSV"))]
