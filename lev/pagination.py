from rest_framework.pagination import PageNumberPagination


class StandardPagination(PageNumberPagination):
    """`?page=N&page_size=M` (max 100); body `{"count", "next", "previous", "results"}`."""

    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100
