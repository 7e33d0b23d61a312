"""Cursor paging: stable under inserts and as fast on page 1,000 as on page 1."""
import base64
import binascii
import json
from datetime import datetime

from rest_framework.pagination import CursorPagination
from rest_framework.utils.urls import replace_query_param

from backend.errors import DomainError


class CatalogCursorPagination(CursorPagination):
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 1000
    ordering = "-id"

    def get_page_size(self, request):
        """DRF quietly pages by the default when `limit` is not a number (`limit=null`): a
        client that sent a wrong one would never know, so that is a 400; a whole number past
        the bounds is still clamped to them, as DRF does."""
        raw = request.query_params.get(self.page_size_query_param)
        if raw is not None:
            try:
                int(raw)
            except ValueError:
                raise DomainError(f"limit must be a whole number, not {raw[:40]!r}.",
                                  "limit") from None
        return super().get_page_size(request)

    def get_paginated_response_schema(self, schema):
        """`next` and `previous` are always there (null at either end)."""
        page = super().get_paginated_response_schema(schema)
        page["required"] = ["next", "previous", "results"]
        return page


# Sortable granule fields -> (model field, kind); created_at is when the granule was ingested.
GRANULE_SORTS = {
    "temporal_start": ("temporal_start", "datetime"),
    "temporal_end": ("temporal_end", "datetime"),
    "granule_id": ("granule_id", "text"),
    "created_at": ("created_at", "datetime"),
    "total_size": ("total_size", "int"),
}
DEFAULT_GRANULE_SORT = "-temporal_start"


class GranuleKeysetPagination(CatalogCursorPagination):
    """Keyset paging of a granule search under any of GRANULE_SORTS, either direction.

    A cursor holds the sort values of the row it continues from (and the id, the
    tie-breaker), so a page is "the rows after these values", exact under ties and as cheap
    deep into the results as on the first page; DRF's own cursor keeps only the first key
    plus an offset. `ordering` is a comma-separated list of fields, `-` for descending;
    `limit` is clamped to its bounds, as DRF's pagination and STAC servers do, and the page
    says so (`limit`, `note`); a limit that is not a whole number is a 400.
    """

    page_size = 50
    min_page_size, max_page_size = 10, 500

    def paginate_queryset(self, queryset, request, view=None):
        from .services import keyset_q, sort_values

        self.base_url = request.build_absolute_uri()
        self.page_size, self.note = self._limit(request)
        self.sort = self._sort(request)
        order = self.order()
        after, self.reverse = self._cursor(request)
        walk = [(f, kind, desc != self.reverse) for f, kind, desc in order]
        rows = queryset.order_by(*(f"-{f}" if desc else f for f, _, desc in walk))
        if after is not None:
            rows = rows.filter(keyset_q(walk, after))
        rows = list(rows[: self.page_size + 1])
        more, rows = len(rows) > self.page_size, rows[: self.page_size]
        if self.reverse:
            rows.reverse()
        self.has_next = more if not self.reverse else True
        self.has_previous = more if self.reverse else after is not None
        self.first = sort_values(rows[0], order) if rows else None
        self.last = sort_values(rows[-1], order) if rows else None
        return rows

    def order(self):
        """[(model field, kind, descending)], ending with the id as tie-breaker."""
        keys = [(*GRANULE_SORTS[name], desc) for name, desc in self.sort]
        return [*keys, ("pk", "int", self.sort[0][1])]

    def signature(self):
        return ",".join(("-" if desc else "") + name for name, desc in self.sort)

    def _limit(self, request):
        """(page size, a note when the asked limit was clamped, else None)."""
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size, None
        try:
            limit = int(raw)
        except ValueError:
            raise DomainError(f"limit must be a whole number (pages hold {self.min_page_size} "
                              f"to {self.max_page_size}), not {raw[:40]!r}.", "limit") from None
        used = min(max(limit, self.min_page_size), self.max_page_size)
        if used == limit:
            return limit, None
        return used, (f"limit {limit} is outside {self.min_page_size}..{self.max_page_size}: "
                      f"pages hold {used}")

    def get_paginated_response(self, data):
        response = super().get_paginated_response(data)
        response.data["limit"] = self.page_size
        if self.note:
            response.data["note"] = self.note
        return response

    def get_paginated_response_schema(self, schema):
        page = super().get_paginated_response_schema(schema)
        page["properties"]["limit"] = {"type": "integer", "description": "Granules per page"}
        page["properties"]["note"] = {
            "type": "string", "description": "Present when the asked limit was clamped"}
        return page

    def _sort(self, request):
        raw = request.query_params.get("ordering") or DEFAULT_GRANULE_SORT
        keys, seen = [], set()
        for part in (p.strip() for p in raw.split(",") if p.strip()):
            name = part.lstrip("-+")
            if name not in GRANULE_SORTS:
                raise DomainError(f"cannot sort by {name!r}: sortable fields are "
                                  + ", ".join(GRANULE_SORTS) + " (- before one: descending)",
                                  "ordering")
            if name not in seen:
                seen.add(name)
                keys.append((name, part.startswith("-")))
        return keys or [(DEFAULT_GRANULE_SORT.lstrip("-"), True)]

    def _cursor(self, request):
        """(sort values to continue after, whether it walks backwards), or (None, False)."""
        raw = request.query_params.get(self.cursor_query_param)
        if not raw:
            return None, False
        try:
            data = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
            if data["o"] != self.signature():
                raise DomainError("this cursor belongs to a search in another order: start "
                                  "again from the first page", "cursor")
            order = self.order()
            if not isinstance(data["k"], list) or len(data["k"]) != len(order):
                raise ValueError
            values = [_from_cursor(v, kind) for v, (_, kind, _) in zip(
                data["k"], order, strict=True)]
            return values, bool(data.get("r"))
        except DomainError:
            raise
        except (ValueError, KeyError, TypeError, binascii.Error):
            raise DomainError("cursor is not valid: use the one from a next or previous link",
                              "cursor") from None

    def _link(self, values, reverse):
        plain = [v.isoformat() if isinstance(v, datetime) else v for v in values]
        data = {"o": self.signature(), "k": plain, **({"r": 1} if reverse else {})}
        token = base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode())
        return replace_query_param(self.base_url, self.cursor_query_param,
                                   token.decode().rstrip("="))

    def get_next_link(self):
        return self._link(self.last, False) if self.has_next and self.last else None

    def get_previous_link(self):
        return self._link(self.first, True) if self.has_previous and self.first else None

    def get_schema_operation_parameters(self, view):
        return [
            {"name": self.cursor_query_param, "required": False, "in": "query",
             "description": "The page's position, from a next or previous link",
             "schema": {"type": "string"}},
            {"name": self.page_size_query_param, "required": False, "in": "query",
             # no minimum or maximum: any whole number is taken, clamped (the page says so)
             "description": f"Granules per page, {self.min_page_size} to "
                            f"{self.max_page_size} (default {self.page_size}); a limit "
                            "outside is clamped to the nearer bound",
             "schema": {"type": "integer"}},
            {"name": "ordering", "required": False, "in": "query",
             "description": "Sort fields, comma-separated, - for descending: "
                            + ", ".join(GRANULE_SORTS) + " (created_at: ingest time; "
                            f"default {DEFAULT_GRANULE_SORT})",
             "schema": {"type": "string", "example": DEFAULT_GRANULE_SORT}},
        ]


def _from_cursor(value, kind):
    """A cursor's value checked against its kind (a forged one is refused, not queried)."""
    if kind == "datetime":
        value = datetime.fromisoformat(value)
        if value.tzinfo is None:
            raise ValueError
    if kind == "int" and not (isinstance(value, int) and not isinstance(value, bool)
                              and -(2**63) <= value < 2**63):
        raise ValueError
    if kind == "text" and not isinstance(value, str):
        raise ValueError
    return value


class GranuleSearchPagination(GranuleKeysetPagination):
    """The catalog's granule search: its page may also carry the facets and the timeline
    (include=facets,timeline: catalog.search_summary)."""

    def get_paginated_response_schema(self, schema):
        page = super().get_paginated_response_schema(schema)
        page["properties"]["facets"] = {
            "allOf": [{"$ref": "#/components/schemas/GranuleFacets"}],
            "description": "With include=facets: as /granules/facets/ (the same filters less "
                           "collection, processing_level, platform and instrument)"}
        page["properties"]["timeline"] = {
            "allOf": [{"$ref": "#/components/schemas/Timeline"}],
            "description": "With include=timeline: as /granules/timeline/ (the same filters)"}
        return page
