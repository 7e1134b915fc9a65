"""The product's URLs plus two reference views the benchmark compares the product's doors with."""

from django.http import HttpResponse, JsonResponse
from django.urls import path

from deals.models import Deal
from lev.errors import ErrorCode
from lev.urls import urlpatterns as product_urls


def noop(request):
    """No query at all: what Django and the middleware cost by themselves."""
    return HttpResponse(b'{"ok":true}', content_type="application/json")


def floor(request, deal_id: int):
    """The floor: one real `SELECT` (a Deal row by primary key) through the project's middleware,
    answered as JSON. No authentication, no tenancy, no rate limit: every door of the product
    (REST, MCP) is reported as a ratio to this."""
    deal = Deal.objects.filter(pk=deal_id).values("id", "title", "loan_amount", "loan_type").first()
    if deal is None:
        return JsonResponse({"code": ErrorCode.NOT_FOUND}, status=404)
    return JsonResponse(deal)


urlpatterns = [path("bench/noop", noop), path("bench/floor/<int:deal_id>", floor), *product_urls]
