"""The deal package's public pages (deals.outreach.package), included at the site's root by lev/urls.py."""

from django.urls import path, re_path

from deals.outreach import package

urlpatterns = [
    path("p/<str:token>/", package.package_page, name="deal-package"),
    path("p/<str:token>/documents/<int:document_id>/", package.package_document, name="deal-package-document"),
    # Anything else under /p/: the package's own plain 404 (not cached, not indexed, no referrer).
    re_path(r"^p/", package.package_not_found),
]
