from django.http import HttpResponse
from django.urls import path

from lev.urls import urlpatterns as product_urls


def noop(request):
    return HttpResponse(b'{"ok":true}', content_type="application/json")


urlpatterns = [path("bench/noop", noop), *product_urls]
