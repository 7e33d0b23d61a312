"""STAC API 1.0 searches: GET parameters and POST bodies parsed into a Search, paging tokens.

Pure functions over plain values: the rules (RFC 3339 datetimes, bbox/intersects, limits, sort
keys, paging tokens) are easy to test and the views stay thin. Bad input raises StacError with
a sentence for the user.
"""
import base64
import binascii
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

from . import shapes
from .geo import BBoxError, parse_bbox
from .stac import StacError

DEFAULT_LIMIT = 10
MAX_LIMIT = 10000

# Sortable STAC fields -> the model fields (and their kind) behind them, in index order.
SORT_FIELDS = {
    "datetime": (("temporal_start", "datetime"),),
    "start_datetime": (("temporal_start", "datetime"),),
    "end_datetime": (("temporal_end", "datetime"),),
    "id": (("granule_id", "text"),),
    "collection": (("collection__short_name", "text"), ("collection__version", "text")),
}
TIE_BREAKER = ("pk", "int")
DEFAULT_SORT = (("datetime", True),)


# ---------------------------------------------------------------------- RFC 3339 input

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
    r"(?:([Zz])|([+-])(\d{2}):(\d{2}))"
)


def parse_rfc3339(text):
    """An RFC 3339 date-time (a 'T' and a zone are required; 't', 'z' and any number of
    fraction digits are fine; a leap second is read as the end of the 59th)."""
    match = _RFC3339.fullmatch(text.strip())
    if not match:
        raise StacError(
            f"'{text}' is not an RFC 3339 date-time (e.g. 2024-01-31T12:00:00Z)"
        )
    year, month, day, hour, minute, second = (int(g) for g in match.group(1, 2, 3, 4, 5, 6))
    fraction = match.group(7) or ""
    micro = int((fraction + "000000")[:6])
    if second == 60:
        second, micro = 59, 999999
    if match.group(8):
        zone = UTC
    else:
        hours, minutes = int(match.group(10)), int(match.group(11))
        if hours > 23 or minutes > 59:
            raise StacError(f"'{text}' has an impossible time zone offset")
        offset = timedelta(hours=hours, minutes=minutes)
        zone = timezone(-offset if match.group(9) == "-" else offset)
    try:
        return datetime(year, month, day, hour, minute, second, micro, tzinfo=zone)
    except ValueError as exc:
        raise StacError(f"'{text}' is not a real date-time: {exc}") from None


def parse_datetime_interval(text):
    """STAC `datetime`: an instant, or 'start/end' where either end may be '..' or empty
    (open), but not both. Returns (start, end) with None for an open end."""
    text = str(text).strip()
    if "/" not in text:
        instant = parse_rfc3339(text)
        return instant, instant
    parts = text.split("/")
    if len(parts) != 2:
        raise StacError(f"datetime '{text}' must be an instant or one interval 'start/end'")
    start, end = (None if p.strip() in ("", "..") else parse_rfc3339(p) for p in parts)
    if start is None and end is None:
        raise StacError(f"datetime '{text}' is open at both ends: give at least one end")
    if start is not None and end is not None and start > end:
        raise StacError(f"datetime '{text}' ends before it starts")
    return start, end


# ---------------------------------------------------------------------------- searches

@dataclass(frozen=True)
class Search:
    """One item search, whether it came as a query string or a JSON body."""

    shape: shapes.Shape | None = None   # bbox or intersects, tested exactly
    start: datetime | None = None
    end: datetime | None = None
    ids: tuple = ()
    collections: tuple = ()
    limit: int = DEFAULT_LIMIT
    sortby: tuple = DEFAULT_SORT
    token: str | None = None

    def order(self):
        """[(model field, kind, descending)], ending with the unique tie-breaker."""
        keys = [(f, kind, desc) for name, desc in self.sortby for f, kind in SORT_FIELDS[name]]
        keys.append((*TIE_BREAKER, self.sortby[0][1]))
        return keys

    def sort_signature(self):
        return ",".join(("-" if desc else "+") + name for name, desc in self.sortby)


def geometry_shape(geometry):
    """The Shape of an `intersects` GeoJSON geometry (searched with the geometry itself)."""
    try:
        return shapes.parse_geojson(geometry, "intersects")
    except shapes.ShapeError as exc:
        raise StacError(str(exc)) from None


def bbox_shape(value):
    try:
        box = parse_bbox(value)
    except BBoxError as exc:
        raise StacError(f"bbox: {exc}") from None
    return shapes.from_box(*box.as_list())


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _limit(value):
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise StacError(f"limit must be a whole number, not {value!r}")
    if value < 1:
        raise StacError(f"limit must be at least 1 (got {value})")
    return min(value, MAX_LIMIT)


def _sort_key(name, descending):
    name = name.removeprefix("properties.")
    if name not in SORT_FIELDS:
        raise StacError(
            f"cannot sort by '{name}': sortable fields are " + ", ".join(SORT_FIELDS)
        )
    return name, descending


def _sortby_text(text):
    """GET form: 'sortby=-datetime,+id' (an unescaped '+' arrives as a space)."""
    keys = []
    for part in text.split(","):
        raw = part.strip()
        if not raw:
            continue
        descending = raw.startswith("-")
        keys.append(_sort_key(raw.lstrip("+-").strip(), descending))
    return _dedupe_sort(keys)


def _sortby_json(value):
    """POST form: [{"field": "properties.datetime", "direction": "desc"}, ...]."""
    if isinstance(value, str):
        return _sortby_text(value)
    if not isinstance(value, list):
        raise StacError("sortby must be a list of {field, direction} objects")
    keys = []
    for entry in value:
        if not isinstance(entry, dict) or not isinstance(entry.get("field"), str):
            raise StacError("each sortby entry must be an object with a 'field'")
        direction = str(entry.get("direction", "asc")).lower()
        if direction not in ("asc", "desc"):
            raise StacError(f"sortby direction must be 'asc' or 'desc', not '{direction}'")
        keys.append(_sort_key(entry["field"], direction == "desc"))
    return _dedupe_sort(keys)


def _dedupe_sort(keys):
    seen, unique = set(), []
    for name, desc in keys:
        fields = SORT_FIELDS[name]
        if fields not in seen:
            seen.add(fields)
            unique.append((name, desc))
    return tuple(unique) or DEFAULT_SORT


def _names(value, what):
    """ids / collections: a list of strings, or one comma-separated string."""
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v for v in value if v)
    raise StacError(f"{what} must be a list of strings")


def _search(*, bbox=None, intersects=None, datetime_text=None, ids=(), collections=(),
            limit=None, sortby=DEFAULT_SORT, token=None):
    if bbox is not None and intersects is not None:
        raise StacError("use either bbox or intersects, not both")
    shape = bbox if bbox is not None else intersects
    start = end = None
    if datetime_text not in (None, ""):
        start, end = parse_datetime_interval(datetime_text)
    if token is not None and not isinstance(token, str):
        raise StacError("token must be a string from a 'next' link")
    return Search(
        shape=shape, start=start, end=end, ids=ids, collections=collections,
        limit=DEFAULT_LIMIT if limit is None else _limit(limit), sortby=sortby,
        token=token or None,
    )


def search_from_query(params):
    """A Search from GET query parameters (a mapping of strings)."""
    bbox = intersects = None
    if params.get("bbox") not in (None, ""):
        bbox = bbox_shape(params["bbox"])
    if params.get("intersects") not in (None, ""):
        try:
            geometry = json.loads(params["intersects"])
        except ValueError:
            raise StacError("intersects must be a GeoJSON geometry in JSON") from None
        intersects = geometry_shape(geometry)
    return _search(
        bbox=bbox, intersects=intersects, datetime_text=params.get("datetime"),
        ids=_names(params.get("ids", ""), "ids"),
        collections=_names(params.get("collections", ""), "collections"),
        limit=params.get("limit") or None,
        sortby=_sortby_text(params["sortby"]) if params.get("sortby") else DEFAULT_SORT,
        token=params.get("token") or None,
    )


def search_from_body(body):
    """A Search from a POST JSON body."""
    if not isinstance(body, dict):
        raise StacError("the search body must be a JSON object")
    bbox = intersects = None
    if body.get("bbox") is not None:
        raw = body["bbox"]
        if not isinstance(raw, list) or not all(_is_number(v) for v in raw):
            raise StacError("bbox must be an array of numbers: [west, south, east, north]")
        bbox = bbox_shape(raw)
    if body.get("intersects") is not None:
        intersects = geometry_shape(body["intersects"])
    datetime_text = body.get("datetime")
    if datetime_text is not None and not isinstance(datetime_text, str):
        raise StacError("datetime must be a string")
    return _search(
        bbox=bbox, intersects=intersects, datetime_text=datetime_text,
        ids=_names(body.get("ids") or [], "ids"),
        collections=_names(body.get("collections") or [], "collections"),
        limit=body.get("limit"),
        sortby=_sortby_json(body["sortby"]) if body.get("sortby") else DEFAULT_SORT,
        token=body.get("token"),
    )


# ------------------------------------------------------------------------ paging tokens

def encode_token(search, values):
    """An opaque token for the page after the row with these sort-key `values`."""
    plain = [v.isoformat() if isinstance(v, datetime) else v for v in values]
    data = json.dumps({"s": search.sort_signature(), "k": plain}, separators=(",", ":"))
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


def decode_token(search):
    """The sort-key values a token resumes after, checked against the search's sortby."""
    if search.token is None:
        return None
    try:
        padded = search.token + "=" * (-len(search.token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if data["s"] != search.sort_signature():
            raise StacError("this token belongs to a search with another sortby")
        order = search.order()
        values = data["k"]
        if not isinstance(values, list) or len(values) != len(order):
            raise ValueError
        return [_from_token(v, kind) for v, (_, kind, _) in zip(values, order, strict=True)]
    except StacError:
        raise
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise StacError("token is not valid: use the one from a 'next' link") from None


def _from_token(value, kind):
    if kind == "datetime":
        return datetime.fromisoformat(value)
    if kind == "int":
        if not isinstance(value, int):
            raise ValueError
        return value
    if not isinstance(value, str):
        raise ValueError
    return value
