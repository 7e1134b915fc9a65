"""The deal package: the public pages a lender reaches from the link in its email (no sign-in).

`/p/<token>/` shows that lender alone the teaser it was sent, the deal's key figures and the documents
shared in its package; `/p/<token>/documents/<id>/` streams a shared document's current version as an
attachment. The token is the only key: only its SHA-256 is stored (PackageLink.token_hash), so a token
is looked up by its digest, and the page names nothing that the link was not given.

What a visitor gets, and never more:
* a token that is malformed, guessed or unknown, or a document that is not shared in this package (of
  another placement, deal or account; removed from the deal since) → the plain 404 page;
* an expired or withdrawn (revoked) link → a plain 410 page, "This link has expired / was withdrawn";
* too many requests from one address (LEV_PACKAGE_RATE_LIMIT) → 429 with Retry-After.
Every answer is `Cache-Control: no-store`, `X-Robots-Tag: noindex`, `Referrer-Policy: no-referrer`; a
download is also `X-Content-Type-Options: nosniff` and `Content-Security-Policy: sandbox` (a PDF with
scripts is never run as a page of this site). Opening the page records an `opened` event (the link's
opens and first/last open), a download a `downloaded` event naming the document.
"""

from __future__ import annotations

import re
import time

from django.conf import settings
from django.http import FileResponse, HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils import timezone
from django.views.decorators.http import require_safe

from deals.documents.models import Document
from deals.models import DealFinancials, DealProperty
from deals.outreach import services
from deals.outreach.models import OutboundEmail, PackageLink
from deals.outreach.templates import deal_figures
from lev.limits import PACKAGE_TOKEN_MAX
from lev.login_lockout import client_ip
from lev.throttling import admit, parse_rate

_TOKEN = re.compile(rf"^[A-Za-z0-9_-]{{20,{PACKAGE_TOKEN_MAX}}}$")
# Content types a browser could run as a page: always sent as plain bytes.
_ACTIVE = ("text/html", "application/xhtml", "image/svg", "text/xml", "application/xml", "text/javascript",
           "application/javascript")
FIGURES_SHOWN = (("Loan amount", "loan_amount"), ("Loan type", "loan_type"), ("Property type", "property_type"),
                 ("Location", "location"), ("Units", "units"), ("NOI", "noi"), ("LTV", "ltv"), ("DSCR", "dscr"))


def _private(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "no-store"
    response["X-Robots-Tag"] = "noindex, nofollow"
    response["Referrer-Policy"] = "no-referrer"
    return response


def _page(request: HttpRequest, template: str, context: dict, status: int) -> HttpResponse:
    return _private(HttpResponse(render_to_string(template, context, request=request), status=status))


def _not_found(request: HttpRequest) -> HttpResponse:
    return _page(request, "outreach/package_gone.html",
                 {"title": "Not found", "heading": "Nothing here",
                  "lead": "There is no deal package at this address. Check the link in your email."}, 404)


def _gone(request: HttpRequest, revoked: bool) -> HttpResponse:
    word = "was withdrawn" if revoked else "has expired"
    return _page(request, "outreach/package_gone.html",
                 {"title": "Link " + ("withdrawn" if revoked else "expired"), "heading": f"This link {word}",
                  "lead": "Ask the sender for a new link if you still need the deal package."}, 410)


def _throttled(request: HttpRequest) -> HttpResponse | None:
    limit, period = parse_rate(settings.LEV_PACKAGE_RATE_LIMIT)
    now = time.time()
    window = int(now // period)
    if admit(f"package:{client_ip(request) or 'unknown'}:{window}", limit, period):
        return None
    response = _page(request, "outreach/package_gone.html",
                     {"title": "Too many requests", "heading": "Too many requests",
                      "lead": "Wait a minute, then open the link again."}, 429)
    response["Retry-After"] = str(max(1, int((window + 1) * period - now)))
    return response


def _link(request: HttpRequest, token: str) -> PackageLink | HttpResponse:
    """The live link of `token`, or the answer to give instead (429, 404, 410)."""
    refused = _throttled(request)
    if refused is not None:
        return refused
    if not _TOKEN.match(token):
        return _not_found(request)
    link = (PackageLink.objects.select_related("placement__lender", "placement__deal__account")
            .filter(token_hash=services.token_hash(token)).first())
    if link is None or link.placement.deal.account_id != link.account_id:
        return _not_found(request)
    if link.revoked_at is not None or link.expires_at <= timezone.now():
        return _gone(request, revoked=link.revoked_at is not None)
    return link


def package_not_found(request: HttpRequest) -> HttpResponse:
    return _throttled(request) or _not_found(request)


@require_safe
def package_page(request: HttpRequest, token: str) -> HttpResponse:
    link = _link(request, token)
    if isinstance(link, HttpResponse):
        return link
    deal = link.placement.deal
    email = OutboundEmail.objects.filter(package=link).only("body", "subject").first()
    documents = list(Document.objects.filter(services.package_documents_query(link))
                     .select_related("current").order_by("kind", "name", "id"))
    figures = deal_figures(deal=deal, financials=DealFinancials.objects.filter(deal=deal).first(),
                           properties=list(DealProperty.objects.filter(deal=deal).order_by("id")))
    if request.method == "GET":
        services.package_opened(package=link)
    context = {
        "deal_title": figures["deal_title"], "lender": link.placement.lender.name,
        "sender": deal.account.name, "subject": email.subject if email else figures["deal_title"],
        "teaser": _without_link(email.body if email else "", token),
        "figures": [(label, figures[key]) for label, key in FIGURES_SHOWN if figures.get(key)],
        "documents": [{"name": d.name, "file_name": d.current.file_name, "size": d.current.size,
                       "url": f"/p/{token}/documents/{d.pk}/"} for d in documents],
        "expires_at": link.expires_at,
    }
    return _page(request, "outreach/package.html", context, 200)


def _without_link(body: str, token: str) -> str:
    """The teaser as emailed, without the line holding the link itself (the visitor is on it)."""
    return "\n".join(line for line in body.splitlines() if token not in line).strip()


@require_safe
def package_document(request: HttpRequest, token: str, document_id: int) -> HttpResponse:
    link = _link(request, token)
    if isinstance(link, HttpResponse):
        return link
    document = (Document.objects.filter(services.package_documents_query(link), pk=document_id)
                .select_related("current").first())
    if document is None:
        return _not_found(request)
    version = document.current
    try:
        stream = version.file.open("rb")
    except OSError:  # the file is gone from the storage: nothing to serve, and nothing to say why
        return _not_found(request)
    content_type = version.content_type or "application/octet-stream"
    if content_type.startswith(_ACTIVE):
        content_type = "application/octet-stream"
    response = FileResponse(stream, as_attachment=True, filename=version.file_name, content_type=content_type)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    if request.method == "GET":
        services.package_downloaded(package=link, document=document)
    return _private(response)
