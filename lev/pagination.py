from drf_spectacular.utils import inline_serializer
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination


class StandardPagination(PageNumberPagination):
    """`?page=N&page_size=M` (max 100); body `{"count", "next", "previous", "results"}`."""

    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100


def paginated(item: type[serializers.Serializer], name: str) -> serializers.Serializer:
    """The OpenAPI shape of a StandardPagination page of `item`s, as it is returned (the list views
    are plain APIViews, which drf-spectacular does not paginate by itself)."""
    return inline_serializer(name=name, fields={
        "count": serializers.IntegerField(help_text="Items in all pages."),
        "next": serializers.URLField(allow_null=True, help_text="The next page, or null on the last."),
        "previous": serializers.URLField(allow_null=True, help_text="The previous page, or null on the first."),
        "results": item(many=True),
    })


def results_list(item: type[serializers.Serializer], name: str) -> serializers.Serializer:
    """`{"results": [...]}`: a short list returned whole, in the same envelope as a page."""
    return inline_serializer(name=name, fields={"results": item(many=True)})
