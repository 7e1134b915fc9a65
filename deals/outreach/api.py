"""REST views of outreach: validate → call a service or selector → serialize. Tenancy as for deals:
another account's deal, placement, send, package or document is a 404 exactly like a missing one.
Sending email is a placements write (placements:write); reading its progress a placements read; the
account's templates are deals:read / deals:write."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from deals.api import DealScopedView
from deals.outreach import selectors, services
from deals.outreach.serializers import (
    OutboundEmailSerializer,
    OutreachPreviewSerializer,
    OutreachSendInputSerializer,
    OutreachSendSerializer,
    OutreachSendStartedSerializer,
    OutreachTemplateInputSerializer,
    OutreachTemplateSerializer,
    PackageLinkSerializer,
)
from deals.placements.selectors import placement_get
from lev.accounts.api import validated
from lev.accounts.scopes import DEALS_READ, DEALS_WRITE, PLACEMENTS_READ, PLACEMENTS_WRITE
from lev.enums import OUTREACH_KINDS
from lev.errors import NotFound
from lev.idempotency.services import idempotent
from lev.limits import MAX_ID
from lev.openapi import IDEMPOTENCY_KEY, READ_ERRORS, WRITE_ERRORS


def _started_message(result: services.SendResult) -> str:
    queued, skipped = len(result.queued), len(result.skipped)
    words = f"{queued} email{'s' if queued != 1 else ''} queued"
    if skipped:
        words += f"; {skipped} placement{'s' if skipped != 1 else ''} not emailed (see skipped)"
    return f"{words}. Follow the send's progress at /outreach/{result.send.pk}/."


def _placements(view: DealScopedView, deal, data: dict) -> list:
    kind = data.get("kind") or "teaser"
    if data.get("placement_ids"):
        return selectors.deal_placements(deal=deal, placement_ids=data["placement_ids"])
    if kind == "follow_up":
        return services.follow_up_targets(deal=deal)
    return selectors.draft_placements(deal=deal)


class DealOutreachPreviewApi(DealScopedView):
    required_scopes = {"POST": PLACEMENTS_READ}

    @extend_schema(operation_id="deals_outreach_preview", request=OutreachSendInputSerializer,
                   responses={200: OutreachPreviewSerializer, **READ_ERRORS})
    def post(self, request: Request, deal_id: int) -> Response:
        """What `POST /deals/{id}/outreach/` with the same body would do, writing and sending nothing: the
        lenders and addresses it would email, those it would not (and why), the documents it would share."""
        data = validated(OutreachSendInputSerializer, request.data)
        deal = self.deal(request, deal_id, refs_only=True)
        plan = services.outreach_plan(deal=deal, placements=_placements(self, deal, data),
                                      kind=data.get("kind") or "teaser", documents=data.get("document_ids") or [])
        return Response(OutreachPreviewSerializer(OutreachPreviewSerializer.of(plan)).data)


class DealOutreachApi(DealScopedView):
    required_scopes = {"POST": PLACEMENTS_WRITE}

    @extend_schema(operation_id="deals_outreach_create", request=OutreachSendInputSerializer,
                   parameters=[IDEMPOTENCY_KEY], responses={202: OutreachSendStartedSerializer, **WRITE_ERRORS})
    def post(self, request: Request, deal_id: int) -> Response:
        """Email the deal to lenders: each placement's lender contact gets the account's teaser (or
        follow-up) with a personal link to the deal package sharing `document_ids`. Queued at once (202)
        and delivered by a job: follow `GET /outreach/{send_id}/`. Placement by placement: queued, or
        not (`skipped`: already sent, no email address, a status that takes no email). Draft placements
        become sent. A follow_up without placement_ids goes to those emailed and not answered."""
        def send() -> Response:
            data = validated(OutreachSendInputSerializer, request.data)
            deal = self.deal(request, deal_id, refs_only=True)
            kind = data.get("kind") or "teaser"
            result = services.outreach_send(deal=deal, placements=_placements(self, deal, data), user=request.user,
                                            kind=kind,
                                            documents=data.get("document_ids") or [],
                                            expires_in_days=data.get("expires_in_days"))
            result.send.refresh_from_db(fields=["status"])
            body = {"send_id": result.send.pk, "status": result.send.status, "queued": len(result.queued),
                    "skipped": result.skipped, "message": _started_message(result)}
            return Response(OutreachSendStartedSerializer(body).data, status=status.HTTP_202_ACCEPTED)

        return idempotent(request, send)


class OutreachSendApi(DealScopedView):
    required_scopes = {"GET": PLACEMENTS_READ}

    @extend_schema(operation_id="outreach_retrieve", responses={200: OutreachSendSerializer, **READ_ERRORS})
    def get(self, request: Request, send_id: int) -> Response:
        """A send's progress: queued, running or done; its emails counted by status, and each email with its
        status, attempts, next attempt and last error (a plain sentence)."""
        return Response(OutreachSendSerializer(selectors.send_get(account=self.account(request),
                                                                 send_id=send_id)).data)


class PlacementEmailsApi(DealScopedView):
    required_scopes = {"GET": PLACEMENTS_READ}

    @extend_schema(operation_id="placements_emails_list",
                   responses={200: OutboundEmailSerializer(many=True), **READ_ERRORS})
    def get(self, request: Request, placement_id: int) -> Response:
        """The emails sent (or being sent) on the placement, oldest first, each with its package link's
        opens."""
        if not 0 < placement_id <= MAX_ID:
            raise NotFound("Placement", placement_id)
        placement = placement_get(account=self.account(request), placement_id=placement_id)
        return Response(OutboundEmailSerializer(selectors.placement_emails(placement=placement), many=True).data)


class PackageRevokeApi(DealScopedView):
    required_scopes = {"POST": PLACEMENTS_WRITE}

    @extend_schema(operation_id="packages_revoke", request=None,
                   responses={200: PackageLinkSerializer, **WRITE_ERRORS})
    def post(self, request: Request, package_id: int) -> Response:
        """Withdraw a deal package link: its page and downloads answer "withdrawn" from now on. Safe to
        repeat."""
        package = selectors.package_get(account=self.account(request), package_id=package_id)
        return Response(PackageLinkSerializer(services.package_revoke(package=package)).data)


KIND_PARAMETER = OpenApiParameter("kind", str, OpenApiParameter.PATH, enum=list(OUTREACH_KINDS))


class OutreachTemplateListApi(DealScopedView):
    required_scopes = {"GET": DEALS_READ}

    @extend_schema(operation_id="outreach_templates_list",
                   responses={200: OutreachTemplateSerializer(many=True), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        """The account's teaser and follow-up templates (Lev's own where none is saved) and the placeholders
        they may use."""
        account = self.account(request)
        rows = [OutreachTemplateSerializer.of(kind, *services.template_for(account=account, kind=kind))
                for kind in OUTREACH_KINDS]
        return Response(OutreachTemplateSerializer(rows, many=True).data)


class OutreachTemplateDetailApi(DealScopedView):
    required_scopes = {"GET": DEALS_READ, "PUT": DEALS_WRITE}

    def _kind(self, kind: str) -> str:
        if kind not in OUTREACH_KINDS:
            raise NotFound("Outreach template", kind)
        return kind

    @extend_schema(operation_id="outreach_templates_retrieve", parameters=[KIND_PARAMETER],
                   responses={200: OutreachTemplateSerializer, **READ_ERRORS})
    def get(self, request: Request, kind: str) -> Response:
        kind = self._kind(kind)
        found = services.template_for(account=self.account(request), kind=kind)
        return Response(OutreachTemplateSerializer(OutreachTemplateSerializer.of(kind, *found)).data)

    @extend_schema(operation_id="outreach_templates_update", parameters=[KIND_PARAMETER],
                   request=OutreachTemplateInputSerializer, responses={200: OutreachTemplateSerializer, **WRITE_ERRORS})
    def put(self, request: Request, kind: str) -> Response:
        """Save the account's template: a one-line subject and a body, with placeholders from the list only
        (an unknown one is refused, naming those it may use)."""
        kind = self._kind(kind)
        data = validated(OutreachTemplateInputSerializer, request.data)
        saved = services.template_save(account=self.account(request), kind=kind, subject=data["subject"],
                                       body=data["body"], user=request.user)
        return Response(OutreachTemplateSerializer(
            OutreachTemplateSerializer.of(kind, saved.subject, saved.body, True)).data)
