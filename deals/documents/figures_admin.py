"""The deal page's "Figures from documents": one document version's figures read and shown beside the
deal's, what could not be read with its row, and "Apply" for the ticked figures — through the services
the REST API uses (deals.documents.figures). Hung under the deal's admin URLs by DealPageViews
(/admin/deals/deal/<id>/figures/<version_id>/); the Documents list links to it. Another account's deal,
or a version not of this deal, is the admin's "not found"; a refusal is a message, never a 500."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from deals.documents.figures import services
from deals.documents.figures.models import FIGURE_FIELDS
from deals.documents.figures.preview import figures_preview
from deals.documents.models import DocumentVersion
from lev.accounts.selectors import check_staff_can_write
from lev.errors import ApplicationError

LABELS = {
    "units": "Units", "occupied_units": "Occupied units", "vacant_units": "Vacant units", "occupancy": "Occupancy",
    "monthly_in_place_rent": "In-place rent a month", "annual_in_place_rent": "In-place rent a year",
    "average_rent": "Average rent of the occupied units", "monthly_market_rent": "Market rent a month",
    "effective_gross_income": "Effective gross income", "operating_expenses": "Operating expenses",
    "noi": "Net operating income", "months": "Months read",
    "in_place_noi": "In-place NOI", "in_place_rent": "In-place rent (a year)",
}
PERCENT = {"occupancy"}
COUNTS = {"units", "occupied_units", "vacant_units", "months"}


def urls(model_admin) -> list:
    """The page, under the deal's admin URLs (before the admin's own catch-all)."""
    def view(request, object_id, version_id):
        return figures_view(model_admin, request, object_id, version_id)

    return [path("<path:object_id>/figures/<int:version_id>/", model_admin.admin_site.admin_view(view),
                 name="deals_deal_figures")]


def _shown(name: str | None, value: str | None) -> str:
    if value is None:
        return "—"
    if name in PERCENT:
        return f"{value}%"
    if name in COUNTS:
        return value
    try:
        return f"${float(value):,.2f}"
    except ValueError:
        return value


def figures_view(model_admin, request: HttpRequest, object_id: str, version_id: int) -> HttpResponse:
    deal = model_admin.get_object(request, unquote(object_id))
    if deal is None:
        return model_admin.missing_object(request, object_id)
    if not model_admin.has_view_or_change_permission(request, deal):
        raise PermissionDenied
    version = (DocumentVersion.objects.select_related("document")
               .filter(pk=version_id, document__deal=deal, document__deleted_at=None).first())
    if version is None:
        raise Http404("No such document version on this deal.")
    here = reverse("admin:deals_deal_figures", args=[deal.pk, version.pk])
    if request.method == "POST":
        if not model_admin.has_change_permission(request, deal):
            raise PermissionDenied
        chosen = [name for name in request.POST.getlist("fields") if name in FIGURE_FIELDS]
        if not chosen:
            model_admin.message_user(request, "Tick one or more figures to apply.", messages.WARNING)
            return HttpResponseRedirect(here)
        try:
            check_staff_can_write(user=request.user, account_id=deal.account_id)
            result = services.figures_apply(deal=deal, version=version, fields=chosen, user=request.user)
        except ApplicationError as exc:
            model_admin.message_user(request, getattr(exc, "customer_message", None) or exc.message, messages.ERROR)
            return HttpResponseRedirect(here)
        applied = ", ".join(LABELS.get(name, name) for name in result.applied)
        model_admin.message_user(request, f"Applied from {version.file_name} (version {version.number}): {applied}.",
                                 messages.SUCCESS)
        return HttpResponseRedirect(here)
    if request.method != "GET":
        return HttpResponseNotAllowed(["GET", "POST"])
    refused = None
    if version.extracted is None or request.GET.get("read") == "again":
        try:
            services.figures_read(version=version)
        except ApplicationError as exc:
            fields = getattr(exc, "fields", {}) or {}
            refused = (fields.get("file") or [exc.message])[0]
    preview = figures_preview(deal=deal, version=version) if refused is None else None
    rows = []
    for figure in (preview or {}).get("figures", []):
        rows.append({**figure, "label": LABELS.get(figure["name"], figure["name"]),
                     "field_label": LABELS.get(figure["field"], figure["field"]) if figure["field"] else "",
                     "value_shown": _shown(figure["name"], figure["value"]),
                     "current_shown": _shown(figure["field"], figure["current"]) if figure["field"] else ""})
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts, "title": f"Figures from {version.file_name}", "deal": deal, "version": version,
        "preview": preview, "rows": rows, "refused": refused,
        "can_apply": not deal.archived and model_admin.has_change_permission(request, deal)
                     and _can_write(request.user, deal.account_id) and bool(
            [r for r in rows if r["field"]]),
        "back_url": reverse("admin:deals_deal_change", args=[deal.pk]), "media": model_admin.media,
    }
    return TemplateResponse(request, "admin/deals/deal/figures.html", context)


def _can_write(user, account_id: int) -> bool:
    try:
        check_staff_can_write(user=user, account_id=account_id)
    except ApplicationError:
        return False
    return True
