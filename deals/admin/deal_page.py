"""The deal page: what it shows above its form (`deal_page_context`) and its own views — "Find
lenders", "Place with selected lenders", choosing the winning quote, the whole timeline — each
through the service the API uses, a refusal or an outage answered as a message, never a 500."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.http import url_has_allowed_host_and_scheme

from deals.documents import figures_admin
from deals.documents.admin_views import documents_context
from deals.documents.admin_views import urls as document_urls
from deals.models import Deal, DealFinancials, DealProperty, Placement, TermSheet
from deals.notes.timeline import deal_timeline, deal_timeline_latest
from deals.outreach import admin_send as outreach_admin_send
from deals.placements import selectors as placement_selectors
from deals.placements import services as placement_services
from deals.placements.comparison import term_sheet_comparison
from deals.placements.workflow import OPEN_STATUSES
from deals.searches import services as lender_services
from deals.searches.admin_results import ranked_page
from deals.searches.models import LenderSearch
from deals.searches.ranking import missing_for_search
from deals.searches.selectors import (
    QueueStatus,
    lender_search_latest_completed,
    lender_search_queue_status,
    lender_searches_of_deal,
)
from deals.searches.serializers import LenderSearchStartSerializer
from lev import formatting, limits
from lev.accounts.selectors import check_staff_can_write
from lev.admin_lists import posted_id, ticked_ids
from lev.admin_relay import relay
from lev.enums import ASSET_TYPES
from lev.errors import ApplicationError


class DealPageViews:
    """The deal page's views, mixed into DealAdmin (deals/admin/deal.py): its URLs go before the
    admin's own, and its change form carries the page's summary (`lev_deal`)."""

    def get_urls(self):
        find = path("<path:object_id>/find-lenders/", self.admin_site.admin_view(self.find_lenders_view),
                    name="deals_deal_find_lenders")
        place = path("<path:object_id>/place/", self.admin_site.admin_view(self.place_view), name="deals_deal_place")
        winner = path("<path:object_id>/choose-winner/<int:term_sheet_id>/",
                      self.admin_site.admin_view(self.choose_winner_view), name="deals_deal_choose_winner")
        timeline = path("<path:object_id>/timeline/", self.admin_site.admin_view(self.timeline_view),
                        name="deals_deal_timeline")
        # "Figures from documents" (deals/documents/figures_admin.py): a version's figures, previewed and applied.
        # "Email lenders" (deals/outreach/admin_send.py): the teaser to the placed lenders, confirmed on its page.
        return [find, place, winner, timeline, *document_urls(self), *figures_admin.urls(self),
                *outreach_admin_send.urls(self), *super().get_urls()]

    def timeline_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The deal's whole timeline, newest first (the deal page shows the latest entries): for
        whoever may view the deal; another account's deal is the admin's "not found"."""
        deal = self.get_object(request, unquote(object_id))
        if deal is None:
            return self.missing_object(request, object_id)
        if not self.has_view_or_change_permission(request, deal):
            raise PermissionDenied
        entries = deal_timeline(deal=deal)[::-1]
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts, "title": f"Timeline of “{deal.title}”", "deal": deal, "timeline": entries,
            "back_url": reverse("admin:deals_deal_change", args=[deal.pk]) + "#timeline", "media": self.media,
        }
        return TemplateResponse(request, "admin/deals/deal/timeline.html", context)

    def _posted_deal(self, request: HttpRequest, object_id: str) -> Deal | HttpResponse:
        """The deal a button on its page posts to, or the answer instead: 405 for anything but POST,
        the admin's "not found" for a missing deal or another account's (the same answer)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        deal = self.get_object(request, unquote(object_id))
        if deal is None:
            return self.missing_object(request, object_id)
        if not self.has_change_permission(request):
            raise PermissionDenied
        return deal

    def find_lenders_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        deal = self._posted_deal(request, object_id)
        if not isinstance(deal, Deal):
            return deal
        level, text = start_lender_search(request, deal)
        self.message_user(request, text, level)
        return HttpResponseRedirect(reverse("admin:deals_deal_change", args=[deal.pk]) + "#lender-searches")

    def place_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """"Place with selected lenders": the ranked lenders ticked on the deal page or on one of
        its searches' pages (`search_id`), placed as drafts."""
        deal = self._posted_deal(request, object_id)
        if not isinstance(deal, Deal):
            return deal
        back = _local_path(request.POST.get("next", "")) or reverse("admin:deals_deal_change",
                                                                     args=[deal.pk]) + "#placements"
        lender_ids = sorted(ticked_ids(request.POST.getlist("lender_ids")))
        if not lender_ids:
            self.message_user(request, "Tick one or more ranked lenders to place the deal with.", messages.WARNING)
            return HttpResponseRedirect(back)
        if len(lender_ids) > limits.PLACEMENTS_PER_CREATE_MAX:
            self.message_user(request, f"Place the deal with at most {limits.PLACEMENTS_PER_CREATE_MAX} lenders "
                                       "at once.", messages.ERROR)
            return HttpResponseRedirect(back)
        search_id = request.POST.get("search_id", "")
        search = None
        if search_id:
            pk = posted_id(search_id)
            search = LenderSearch.objects.filter(deal=deal, pk=pk).first() if pk is not None else None
            if search is None:
                self.message_user(request, "That lender search is not one of this deal's.", messages.ERROR)
                return HttpResponseRedirect(back)
        for level, text in place_with_lenders(request, deal, lender_ids, search):
            self.message_user(request, text, level)
        return HttpResponseRedirect(back)

    def choose_winner_view(self, request: HttpRequest, object_id: str, term_sheet_id: int) -> HttpResponse:
        """Choose the winner from the deal page's comparison: GET asks to confirm (what happens, and
        that it cannot be undone), POST chooses it through the API's service and goes back to the
        deal with its answer. Another account's deal or term sheet, or a removed one: 404."""
        deal = self.get_object(request, unquote(object_id))
        term_sheet = None
        if deal is not None:
            term_sheet = (TermSheet.objects.filter(deal=deal, pk=term_sheet_id, deleted_at=None)
                          .select_related("placement__lender").first())
        if term_sheet is None:
            raise Http404("No such term sheet on this deal.")
        if not self.has_change_permission(request):  # an archived deal is refused by the service, in words
            raise PermissionDenied
        back = reverse("admin:deals_deal_change", args=[deal.pk]) + "#term-sheets"
        if request.method == "POST":
            def choose():
                check_staff_can_write(user=request.user, account_id=deal.account_id)
                return placement_services.term_sheet_select_winner(term_sheet=term_sheet, user=request.user)

            refused, choice = relay(f"choosing term sheet {term_sheet.pk} as deal {deal.pk}'s winner in the admin",
                                    choose)
            if refused:
                self.message_user(request, refused[1], refused[0])
            elif not choice.changed:
                self.message_user(request, f"{term_sheet.placement.lender.name}'s quote is already the winner.",
                                  messages.INFO)
            else:
                lost = len(choice.lost_placement_ids)
                self.message_user(request, f"{term_sheet.placement.lender.name}'s quote is the winner: its placement "
                                           f"is won, {lost} other placement{'s' if lost != 1 else ''} lost, and the "
                                           "deal moved to closing.", messages.SUCCESS)
            return HttpResponseRedirect(back)
        if request.method != "GET":
            return HttpResponseNotAllowed(["GET", "POST"])
        others = (Placement.objects.filter(deal=deal, status__in=OPEN_STATUSES).exclude(pk=term_sheet.placement_id)
                  .select_related("lender").order_by("id"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts, "title": "Choose the winning quote", "deal": deal, "term_sheet": term_sheet,
            "lender_name": term_sheet.placement.lender.name, "others": list(others[:limits.ADMIN_WINNER_OTHERS_SHOWN]),
            "others_count": others.count(), "back_url": back, "media": self.media,
        }
        return TemplateResponse(request, "admin/deals/deal/choose_winner.html", context)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and obj.pk:
            context.update(deal_page_context(obj))
            context["lev_deal"].update(documents_context(obj))
            context["lev_deal"]["can_upload"] = _can_write(request.user, obj.account_id)
            context["lev_deal"]["can_choose"] = not obj.archived and context["lev_deal"]["can_upload"]
        return super().render_change_form(request, context, add, change, form_url, obj)


def _can_write(user, account_id: int) -> bool:
    try:
        check_staff_can_write(user=user, account_id=account_id)
    except ApplicationError:
        return False
    return True


def _local_path(url: str) -> str:
    """`url` if it is a path on this site ("/admin/…"), else "": never an absolute URL, not even
    one naming this host, nor a scheme-relative "//host/…" or "/\\host/…"."""
    if not url.startswith("/") or url.startswith(("//", "/\\")):
        return ""
    return url if url_has_allowed_host_and_scheme(url, allowed_hosts=set()) else ""


def start_lender_search(request: HttpRequest, deal: Deal) -> tuple[int, str]:
    """Start (or reuse) a search of the deal through the API's service; the message level and the
    text the API would answer (what is missing, reused, queued or not, done)."""

    def start():
        check_staff_can_write(user=request.user, account_id=deal.account_id)
        return lender_services.lender_search_start(deal=deal, user=request.user)

    refused, result = relay(f"starting a lender search of deal {deal.pk} in the admin", start)
    if refused:
        return refused
    started, created = result
    # Read back: where jobs run in-process the search has already finished by now.
    search = LenderSearch.objects.get(pk=started.pk)
    text = LenderSearchStartSerializer(search, context={"created": created}).data["message"]
    if search.status == LenderSearch.Status.COMPLETED:
        return messages.SUCCESS, text
    if search.status == LenderSearch.Status.FAILED:
        return messages.ERROR, text
    if lender_search_queue_status(search=search) != QueueStatus.QUEUED:
        return messages.WARNING, text
    return messages.INFO, text + " Reload this page to see the ranked lenders."


def place_with_lenders(request: HttpRequest, deal: Deal, lender_ids: list[int],
                       search: LenderSearch | None) -> list[tuple[int, str]]:
    """Place the deal with the chosen lenders through the service every door uses (drafts: the
    deal team sends each when it has contacted the lender); a message per outcome."""

    def create():
        check_staff_can_write(user=request.user, account_id=deal.account_id)
        return placement_services.placements_create(deal=deal, user=request.user, lender_ids=lender_ids,
                                                    search=search)

    refused, batch = relay(f"placing deal {deal.pk} with lenders in the admin", create)
    if refused:
        return [refused]
    outcomes = []
    if batch.created:
        names = ", ".join(p.lender.name for p in batch.created)
        outcomes.append((messages.SUCCESS, f"Placed with {len(batch.created)} lender"
                                           f"{'s' if len(batch.created) != 1 else ''} (drafts): {names}."))
    outcomes.extend((messages.WARNING, failure["message"]) for failure in batch.failed)
    return outcomes


def deal_page_context(deal: Deal) -> dict[str, Any]:
    """What the deal page shows above its form (template blocks in
    deals/templates/admin/deals/deal/change_form.html)."""
    properties = list(DealProperty.objects.filter(deal=deal).order_by("id"))
    financials = DealFinancials.objects.filter(deal=deal).first()
    if financials is not None:
        financials.deal = deal
    latest = lender_search_latest_completed(deal=deal)
    all_placements = placement_selectors.placement_list(deal=deal, filters=placement_selectors.PlacementFilters())
    placements = list(all_placements[: limits.ADMIN_DEAL_PLACEMENTS])
    comparison = term_sheet_comparison(deal=deal)
    # The best first (the winner first of all), bounded. The ranking reads the deal's live quotes (at
    # most TERM_SHEETS_PER_DEAL_MAX): "best first" compares all of them.
    quotes = comparison.quotes[: limits.ADMIN_DEAL_QUOTES]
    # One more than shown: whether older entries are on the whole timeline.
    timeline = deal_timeline_latest(deal=deal, n=limits.ADMIN_TIMELINE_ENTRIES + 1)
    ranked = None
    if latest is not None:
        ranked = ranked_page(latest, page=1, size=limits.ADMIN_TOP_MATCHES, chart_size=limits.ADMIN_TOP_MATCHES)
    return {
        "lev_deal": {
            "properties": properties,
            "states": formatting.labels(sorted({p.state for p in properties if p.state})),
            "asset_types": formatting.labels({p.asset_type for p in properties if p.asset_type}, ASSET_TYPES),
            "units": sum(p.units or 0 for p in properties),
            "financials": financials,
            "missing": missing_for_search(deal, properties),
            "searches": lender_searches_of_deal(deal=deal, limit=limits.ADMIN_DEAL_RECENT_SEARCHES),
            "ranked": ranked,
            "ranked_is_stale": latest is not None and latest.deal_version != deal.version,
            "find_lenders_url": reverse("admin:deals_deal_find_lenders", args=[deal.pk]),
            "place_url": reverse("admin:deals_deal_place", args=[deal.pk]),
            "placements": placements,
            "placement_count": all_placements.count(),  # always: as many queries for 3 placements as for 300
            "comparison": comparison,
            "quotes": quotes,
            "more_quotes": len(comparison.quotes) - len(quotes),
            "has_winner": any(q.winning for q in comparison.quotes),
            # The shown quotes' own notes (the lender's words), one query for all.
            "quote_notes": dict(TermSheet.objects.filter(pk__in=[q.term_sheet_id for q in quotes])
                                .exclude(notes="").values_list("id", "notes")),
            # Newest first, as a deal team reads what happened lately, read alone (not the whole timeline,
            # which is the timeline view's: admin:deals_deal_timeline, and the API's GET …/timeline/).
            "timeline": timeline[: limits.ADMIN_TIMELINE_ENTRIES],
            "older_entries": len(timeline) > limits.ADMIN_TIMELINE_ENTRIES,
            "timeline_url": reverse("admin:deals_deal_timeline", args=[deal.pk]),
        }
    }
