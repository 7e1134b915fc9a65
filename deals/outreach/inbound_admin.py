"""Lenders' replies in the admin (docs/outreach.md): the account's replies, "To assign" first, and a page to
assign one to a placement of the same account, which applies it as a matched reply
(deals.outreach.inbound.inbound_assign). Account-scoped like the rest of the admin: a member sees its
accounts' replies; a reply naming no account (account empty) is seen and assigned by superusers only.

Also the chasing page (`chase/<which>/`): the placements of the person's accounts emailed and not
answered — opened, or not opened — linked from the home page's "Waiting on a lender"
(deals.outreach.chase).
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone

from deals.models import Deal
from deals.outreach import chase
from deals.outreach.inbound import inbound_assign, suggested_placement
from deals.outreach.models import InboundEmail
from deals.outreach.services import outreach_follow_up
from deals.placements.models import Placement
from lev.accounts.admin_bases import ADMIN_CSS, AccountScopedAdmin
from lev.accounts.models import Account
from lev.accounts.selectors import check_staff_can_write
from lev.errors import ApplicationError, Forbidden


class PlacementChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj: Placement) -> str:
        return f"{obj.deal.title} — {obj.lender.name} ({obj.get_status_display().lower()})"


class AssignForm(forms.Form):
    placement = PlacementChoice(queryset=Placement.objects.none(), label="Placement",
                                help_text="The reply is applied to it: first response, a note on the deal, "
                                          "its attachments as the deal's documents.")

    def __init__(self, *args, placements, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["placement"].queryset = placements


@admin.register(InboundEmail)
class InboundEmailAdmin(AccountScopedAdmin):
    list_display = ["subject_cell", "from_address", "status", "reason", "received_at", "placement_cell"]
    list_filter = ["status"]
    search_fields = ["subject", "from_address", "from_name"]
    ordering = ["-status", "-received_at"]  # unmatched ("To assign") first, then matched, then assigned
    readonly_fields = ["account", "status", "reason", "from_name", "from_address", "to_address", "subject", "body",
                       "attachments_cell", "placement", "note", "received_at", "assigned_by", "assigned_at"]
    exclude = ["raw", "message_id", "attachments"]
    list_select_related = ["placement__deal", "placement__lender"]

    class Media:
        css = ADMIN_CSS

    @admin.display(description="Subject", ordering="subject")
    def subject_cell(self, obj: InboundEmail) -> str:
        return obj.subject or "(no subject)"

    @admin.display(description="Placement")
    def placement_cell(self, obj: InboundEmail) -> str:
        if obj.placement is None:
            return "To assign" if obj.status == InboundEmail.Status.UNMATCHED else "—"
        return f"{obj.placement.deal.title} — {obj.placement.lender.name}"

    @admin.display(description="Attachments")
    def attachments_cell(self, obj: InboundEmail) -> str:
        """Each attachment in words: kept as the deal's document (its kind), refused (why), or waiting."""
        words = []
        for item in obj.attachments or []:
            name = item.get("name", "attachment")
            if item.get("refused"):
                words.append(f"{name} — refused: {item['refused']}")
            elif item.get("document_id"):
                words.append(f"{name} — kept as the deal's {str(item.get('kind', 'other')).replace('_', ' ')}")
            else:
                words.append(f"{name} — becomes a document when the reply is assigned")
        return "; ".join(words) or "—"

    def has_add_permission(self, request) -> bool:
        return False  # replies arrive by email

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # read-only; assigning is its own page

    def has_delete_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser  # operators clear junk the reply address attracted

    def get_urls(self):
        site = self.admin_site
        return [
            path("<path:object_id>/assign/", site.admin_view(self.assign_view), name="deals_inboundemail_assign"),
            path("chase/follow-up/", site.admin_view(self.follow_up_view), name="deals_outreach_follow_up"),
            path("chase/<str:which>/", site.admin_view(self.chase_view), name="deals_outreach_chase"),
            *super().get_urls(),
        ]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and obj.status == InboundEmail.Status.UNMATCHED and self._may_assign(request, obj):
            context["lev_assign_url"] = reverse("admin:deals_inboundemail_assign", args=[obj.pk])
        return super().render_change_form(request, context, add, change, form_url, obj)

    @staticmethod
    def _may_assign(request: HttpRequest, inbound: InboundEmail) -> bool:
        if inbound.account_id is None:
            return request.user.is_superuser
        try:
            check_staff_can_write(user=request.user, account_id=inbound.account_id)
        except Forbidden:
            return False
        return True

    def _placements(self, inbound: InboundEmail):
        placements = Placement.objects.select_related("deal", "lender").order_by("-sent_at", "-pk")
        if inbound.account_id is not None:
            placements = placements.filter(deal__account_id=inbound.account_id)
        return placements.filter(deal__archived=False)

    def assign_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """GET: the reply and the account's placements (the one its address names chosen first); POST:
        applied to the chosen one. Another account's reply (or one naming no account, for a member): 404;
        a viewer: 403."""
        inbound = self.get_object(request, unquote(object_id))
        if inbound is None:
            raise Http404("No such reply.")
        if request.method not in ("GET", "POST"):
            return HttpResponseNotAllowed(["GET", "POST"])
        if not self._may_assign(request, inbound):
            raise PermissionDenied
        back = reverse("admin:deals_inboundemail_change", args=[inbound.pk])
        if inbound.status != InboundEmail.Status.UNMATCHED:
            self.message_user(request, "This reply is already on its placement.", messages.INFO)
            return HttpResponseRedirect(back)
        placements = self._placements(inbound)
        suggested = suggested_placement(inbound)
        form = AssignForm(request.POST if request.method == "POST" else None, placements=placements,
                          initial={"placement": suggested.pk if suggested is not None else None})
        if request.method == "POST" and form.is_valid():
            placement = form.cleaned_data["placement"]
            try:
                inbound = inbound_assign(inbound=inbound, placement=placement, user=request.user)
            except ApplicationError as error:
                form.add_error(None, error.message)
            else:
                self.message_user(request, f"The reply is on {placement.lender.name}'s placement of "
                                           f"{placement.deal.title}.", messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:deals_placement_change", args=[placement.pk]))
        context = {**self.admin_site.each_context(request), "opts": self.opts, "inbound": inbound, "form": form,
                   "title": f"Assign the reply from {inbound.from_address}", "back_url": back,
                   "media": self.media + form.media}
        return TemplateResponse(request, "admin/deals/inboundemail/assign.html", context)

    def chase_view(self, request: HttpRequest, which: str) -> HttpResponse:
        """The placements of the person's accounts waiting on a silent lender (chase.CHASES)."""
        if which not in chase.CHASES:
            raise Http404("No such list.")
        # The person's accounts, as on the home page (a superuser's too: the page is a team's).
        accounts = list(Account.objects.filter(memberships__user=request.user).order_by("name", "pk"))
        chosen = request.GET.get("account", "")
        if chosen.isdigit():  # one of them (the home page links each account's own counts)
            accounts = [account for account in accounts if account.pk == int(chosen)]
        now = timezone.now()
        rows = [{"placement": p, "days": (now - p.sent_at).days if p.sent_at else None,
                 "url": reverse("admin:deals_placement_change", args=[p.pk]),
                 "deal_url": reverse("admin:deals_deal_change", args=[p.deal_id])}
                for p in chase.silent_placements(accounts=accounts, which=which)[:500]]
        deals: dict[int, dict] = {}
        for row in rows:
            deal = row["placement"].deal
            deals.setdefault(deal.pk, {"deal": deal, "url": row["deal_url"], "lenders": []})["lenders"].append(
                row["placement"].lender.name)
        context = {**self.admin_site.each_context(request), "opts": self.opts, "rows": rows, "which": which,
                   "deals": list(deals.values()), "follow_up_url": reverse("admin:deals_outreach_follow_up"),
                   "title": f"Waiting on a lender: {chase.CHASES[which].lower()}",
                   "other": [{"label": label, "url": reverse("admin:deals_outreach_chase", args=[key])}
                             for key, label in chase.CHASES.items() if key != which]}
        return TemplateResponse(request, "admin/deals/inboundemail/chase.html", context)

    def follow_up_view(self, request: HttpRequest) -> HttpResponse:
        """POST deal=<id>: a polite follow-up to the deal's silent lenders (deals.outreach.services.
        outreach_follow_up: the same path as the teaser), then back to the list. A deal of an account the
        person is not a member of: 404; a viewer: 403."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        which = request.POST.get("which", "")
        back = reverse("admin:deals_outreach_chase", args=[which if which in chase.CHASES else "opened"])
        deal_id = request.POST.get("deal", "")
        deal = (Deal.objects.filter(pk=int(deal_id), account__memberships__user=request.user).first()
                if deal_id.isdigit() and len(deal_id) < 19 else None)
        if deal is None:
            raise Http404("No such deal.")
        try:
            check_staff_can_write(user=request.user, account_id=deal.account_id)
        except Forbidden:
            raise PermissionDenied from None
        try:
            result = outreach_follow_up(deal=deal, user=request.user)
        except ApplicationError as error:
            self.message_user(request, f"No follow-up sent: {error.message}", messages.ERROR)
            return HttpResponseRedirect(back)
        lenders = [email.placement.lender.name for email in result.queued]
        if lenders:
            self.message_user(request, f"A follow-up on {deal.title} is on its way to {', '.join(lenders)}.",
                              messages.SUCCESS)
        else:
            self.message_user(request, f"No lender of {deal.title} is waiting for a follow-up.", messages.INFO)
        for skipped in result.skipped:
            self.message_user(request, skipped.get("message", ""), messages.WARNING)
        return HttpResponseRedirect(back)
