"""Cursor paging: stable under inserts and as fast on page 1,000 as on page 1."""
from rest_framework.pagination import CursorPagination


class CatalogCursorPagination(CursorPagination):
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 1000
    ordering = "-id"

    def get_paginated_response_schema(self, schema):
        """`next` and `previous` are always there (null at either end)."""
        page = super().get_paginated_response_schema(schema)
        page["required"] = ["next", "previous", "results"]
        return page
