"""The deal page's "Email lenders": the teaser to the lenders the deal is placed with, sent from the
admin through the services REST and MCP use (deals.outreach.services). Hung under the deal's admin
URLs by DealPageViews (/admin/deals/deal/<id>/email-lenders/); the Placements panel links to it.

The page is the confirmation MCP asks for: it names each lender and the address it would email (or why
not), the documents each lender's package would share, and the email as the first lender would read it,
before anything is sent. The POST is checked by the REST API's own serializer (the same limits and
messages) and answered with a message on the deal page; a refusal is a message, never a 500. Another
account's deal is the admin's "not found"; a viewer or a read-only member may look but not send."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from rest_framework.exceptions import ValidationError

from deals.documents.selectors import document_list
from deals.models import Deal
from deals.outreach import selectors, services
from deals.outreach.serializers import OutreachSendInputSerializer
from deals.placements.models import Placement
from lev import limits
from lev.accounts.api import validated
from lev.accounts.selectors import check_staff_can_write
from lev.admin_lists import ticked_ids
from lev.errors import ApplicationError, to_application_error


def urls(model_admin) -> list:
    """The page, under the deal's admin URLs (before the admin's own catch-all)."""
    def view(request, object_id):
        return email_lenders_view(model_admin, request, object_id)

    return [path("<path:object_id>/email-lenders/", model_admin.admin_site.admin_view(view),
                 name="deals_deal_email_lenders")]


def _candidates(deal: Deal) -> list[Placement]:
    """The placements a teaser may go to (draft, or marked sent by hand), oldest first."""
    return list(Placement.objects.filter(deal=deal, status__in=services.TEASER_STATUSES)
                .order_by("id")[: limits.OUTREACH_PLACEMENTS_MAX])


def _message(error: ApplicationError) -> str:
    """A refusal as the form's user reads it: each problem beside its field, else the error's own words."""
    fields = getattr(error, "fields", None) or {}
    if fields:
        return "Not sent: " + "; ".join(f"{name.replace('_', ' ')}: {' '.join(map(str, problems))}"
                                        for name, problems in fields.items()) + "."
    return getattr(error, "customer_message", None) or error.message


def _can_send(model_admin, request: HttpRequest, deal: Deal) -> bool:
    if deal.archived or not model_admin.has_change_permission(request, deal):
        return False
    try:
        check_staff_can_write(user=request.user, account_id=deal.account_id)
    except ApplicationError:
        return False
    return True


def email_lenders_view(model_admin, request: HttpRequest, object_id: str) -> HttpResponse:
    deal = model_admin.get_object(request, unquote(object_id))
    if deal is None:
        return model_admin.missing_object(request, object_id)
    if not model_admin.has_view_or_change_permission(request, deal):
        raise PermissionDenied
    here = reverse("admin:deals_deal_email_lenders", args=[deal.pk])
    if request.method == "POST":
        return _send(model_admin, request, deal, here)
    if request.method != "GET":
        return HttpResponseNotAllowed(["GET", "POST"])
    candidates = _candidates(deal)
    # An archived deal is not sent (the plan refuses it): its page lists the lenders and says so.
    plan = services.outreach_plan(deal=deal, placements=candidates) if candidates and not deal.archived else None
    emailed = {placement.pk: (name, address) for placement, name, address in (plan.recipients if plan else [])}
    skipped = {row["placement_id"]: row["message"] for row in (plan.skipped if plan else [])}
    rows = [{"placement": p, "to": emailed.get(p.pk), "why_not": skipped.get(p.pk),
             # A draft is ticked; one marked sent by hand is offered, not ticked (it may have had its email).
             "ticked": p.pk in emailed and p.status == "draft"} for p in candidates]
    preview = services.outreach_preview_email(plan=plan, user=request.user) if plan else None
    documents = list(document_list(deal=deal)[: limits.OUTREACH_DOCUMENTS_MAX])
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts, "title": f"Email lenders about “{deal.title}”", "deal": deal, "rows": rows,
        "documents": documents, "preview": preview, "can_send": _can_send(model_admin, request, deal),
        "expires_in_days": settings.LEV_PACKAGE_EXPIRES_DAYS, "expires_max": limits.PACKAGE_EXPIRES_DAYS_MAX,
        "back_url": reverse("admin:deals_deal_change", args=[deal.pk]), "media": model_admin.media,
        "outbox_url": reverse("admin:deals_outboundemail_changelist"),
    }
    return TemplateResponse(request, "admin/deals/deal/email_lenders.html", context)


def _send(model_admin, request: HttpRequest, deal: Deal, here: str) -> HttpResponse:
    if not model_admin.has_change_permission(request, deal):
        raise PermissionDenied
    placement_ids = ticked_ids(request.POST.getlist("placement_ids"))
    if not placement_ids:
        model_admin.message_user(request, "Tick one or more lenders to email.", messages.WARNING)
        return HttpResponseRedirect(here)
    form = {"placement_ids": placement_ids, "document_ids": ticked_ids(request.POST.getlist("document_ids"))}
    days = request.POST.get("expires_in_days", "").strip()
    if days:
        form["expires_in_days"] = days
    try:
        check_staff_can_write(user=request.user, account_id=deal.account_id)
        data = validated(OutreachSendInputSerializer, form)
        result = services.outreach_send(
            deal=deal, placements=selectors.deal_placements(deal=deal, placement_ids=data["placement_ids"]),
            user=request.user,
            documents=data.get("document_ids") or [], expires_in_days=data.get("expires_in_days"))
    except (ApplicationError, ValidationError) as exc:  # the serializer's refusals are the API's ValidationFailed
        model_admin.message_user(request, _message(to_application_error(exc)), messages.ERROR)
        return HttpResponseRedirect(here)
    queued = [email.placement.lender.name for email in result.queued]
    if queued:
        model_admin.message_user(
            request, f"Emailing {len(queued)} lender{'s' if len(queued) != 1 else ''}: {', '.join(queued)}. "
                     "Each gets its own link to the deal package; the outbox shows each email's progress.",
            messages.SUCCESS)
    for skip in result.skipped:
        model_admin.message_user(request, skip["message"], messages.WARNING)
    return HttpResponseRedirect(reverse("admin:deals_deal_change", args=[deal.pk]) + "#placements")

