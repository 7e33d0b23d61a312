"""STAC API 1.0: documents built from catalog objects, and search requests parsed into a Search.

Pure functions over model objects and plain values: no queries and no HTTP here, so the
rules (RFC 3339 datetimes, bbox/intersects, limits, sort keys, paging tokens) are easy to
test and the views stay thin. Bad input raises StacError with a sentence for the user.
"""
import base64
import binascii
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from urllib.parse import quote, urlencode

from .geo import BBox, BBoxError, make_bbox, parse_bbox

STAC_VERSION = "1.1.0"
FILE_EXTENSION = "https://stac-extensions.github.io/file/v2.1.0/schema.json"
JSON = "application/json"
GEOJSON = "application/geo+json"
OPENAPI = "application/vnd.oai.openapi+json;version=3.0"

CONFORMANCE = [
    "https://api.stacspec.org/v1.0.0/core",
    "https://api.stacspec.org/v1.0.0/collections",
    "https://api.stacspec.org/v1.0.0/ogcapi-features",
    "https://api.stacspec.org/v1.0.0/ogcapi-features#sort",
    "https://api.stacspec.org/v1.0.0/item-search",
    "https://api.stacspec.org/v1.0.0/item-search#sort",
    "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
    "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
    "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
]

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

MEDIA_TYPES = {
    ".hdf": "application/x-hdf",
    ".h4": "application/x-hdf",
    ".h5": "application/x-hdf5",
    ".he5": "application/x-hdf5",
    ".hdf5": "application/x-hdf5",
    ".nc": "application/netcdf",
    ".nc4": "application/netcdf",
    ".json": "application/json",
    ".xml": "application/xml",
    ".met": "text/plain",
    ".txt": "text/plain",
    ".csv": "text/csv",
    ".tif": "image/tiff; application=geotiff",
    ".tiff": "image/tiff; application=geotiff",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
    ".gif": "image/gif",
    ".gz": "application/gzip",
    ".tar": "application/x-tar",
    ".zip": "application/zip",
    ".pdf": "application/pdf",
}
ASSET_ROLES = {
    "data": ["data"],
    "metadata": ["metadata"],
    "browse": ["overview"],
    "qa": ["qa"],
}
# Multihash prefixes (function code, digest length) for the checksums that have one.
MULTIHASH = {"MD5": ("d5", 16), "SHA256": ("12", 32)}


class StacError(ValueError):
    """A search request that cannot be answered; the message says why (a 400)."""


# ---------------------------------------------------------------------------- URLs

@dataclass(frozen=True)
class StacUrls:
    """Absolute URLs of the STAC API (root ends with '/') and of the site it lives on."""

    root: str
    site: str

    @property
    def collections(self):
        return f"{self.root}collections"

    @property
    def search(self):
        return f"{self.root}search"

    @property
    def conformance(self):
        return f"{self.root}conformance"

    def collection(self, key):
        return f"{self.collections}/{quote(key, safe='')}"

    def items(self, key):
        return f"{self.collection(key)}/items"

    def item(self, key, item_id):
        return f"{self.items(key)}/{quote(item_id, safe='')}"

    def download(self, file_id):
        return f"{self.site}api/v1/files/{file_id}/download"

    def service_desc(self):
        return f"{self.site}api/schema/"

    def service_doc(self):
        return f"{self.site}api/docs/"


def _link(rel, href, media_type=JSON, **extra):
    return {"rel": rel, "href": href, "type": media_type, **extra}


# ---------------------------------------------------------------- landing, collections

def landing_page(urls, *, title="Granary", description=None):
    return {
        "type": "Catalog",
        "stac_version": STAC_VERSION,
        "id": "granary",
        "title": title,
        "description": description or "Science data products archived in Granary.",
        "conformsTo": CONFORMANCE,
        "links": [
            _link("self", urls.root, title="This landing page"),
            _link("root", urls.root, title="Granary STAC API"),
            _link("service-desc", urls.service_desc(), OPENAPI, title="OpenAPI definition"),
            _link("service-doc", urls.service_doc(), "text/html", title="API documentation"),
            _link("conformance", urls.conformance, title="Conformance classes"),
            _link("data", urls.collections, title="Collections"),
            _link("search", urls.search, GEOJSON, method="GET", title="Item search"),
            _link("search", urls.search, GEOJSON, method="POST", title="Item search"),
        ],
    }


def conformance():
    return {"conformsTo": CONFORMANCE}


@dataclass(frozen=True)
class Extent:
    """What a collection's archived granules cover (None where there are none)."""

    west: float | None = None
    south: float | None = None
    east: float | None = None
    north: float | None = None
    crosses_antimeridian: bool = False
    start: datetime | None = None
    end: datetime | None = None

    def bbox(self):
        if None in (self.south, self.north):
            return [-180.0, -90.0, 180.0, 90.0]
        if self.crosses_antimeridian or None in (self.west, self.east):
            return [-180.0, self.south, 180.0, self.north]
        return [self.west, self.south, self.east, self.north]


def collection(obj, extent, urls):
    """A STAC Collection for a catalog Collection; `extent` from its archived granules."""
    keywords = [k for k in (obj.platform, obj.instrument, obj.short_name) if k]
    summaries = {}
    if obj.platform:
        summaries["platform"] = [obj.platform]
    if obj.instrument:
        summaries["instruments"] = [obj.instrument]
    if obj.processing_level:
        summaries["processing_level"] = [obj.processing_level]
    return {
        "type": "Collection",
        "stac_version": STAC_VERSION,
        "stac_extensions": [],
        "id": obj.key,
        "title": obj.title or obj.key,
        "description": obj.description or obj.title or obj.key,
        "keywords": keywords,
        "license": "other",
        "extent": {
            "spatial": {"bbox": [extent.bbox()]},
            "temporal": {"interval": [[format_datetime(extent.start),
                                       format_datetime(extent.end)]]},
        },
        "summaries": summaries,
        "links": [
            _link("self", urls.collection(obj.key), title=obj.key),
            _link("root", urls.root, title="Granary STAC API"),
            _link("parent", urls.root, title="Granary STAC API"),
            _link("items", urls.items(obj.key), GEOJSON, title="Granules"),
        ],
    }


def collections_page(pairs, urls):
    """/collections: `pairs` are (collection, extent)."""
    return {
        "collections": [collection(obj, extent, urls) for obj, extent in pairs],
        "links": [
            _link("self", urls.collections, title="Collections"),
            _link("root", urls.root, title="Granary STAC API"),
            _link("parent", urls.root, title="Granary STAC API"),
        ],
    }


# ------------------------------------------------------------------------------ items

def format_datetime(value):
    """RFC 3339 in UTC with a 'Z'; fractions only when there are some."""
    if value is None:
        return None
    # isoformat leaves the fraction out when it is zero, as this format does
    return value.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"


def footprint(bbox):
    """GeoJSON geometry of a granule's box: a Polygon, or a MultiPolygon split at ±180
    when the box crosses the antimeridian (RFC 7946 §3.1.9); None when it has no box."""
    if bbox is None:
        return None
    west, south, east, north = bbox
    if west == east and south == north:
        return {"type": "Point", "coordinates": [west, south]}

    def ring(w, e):
        return [[[w, south], [e, south], [e, north], [w, north], [w, south]]]

    if west > east:
        return {"type": "MultiPolygon", "coordinates": [ring(west, 180.0), ring(-180.0, east)]}
    return {"type": "Polygon", "coordinates": ring(west, east)}


def media_type(name):
    dot = name.rfind(".")
    return MEDIA_TYPES.get(name[dot:].lower()) if dot >= 0 else None


def multihash(checksum_type, checksum):
    """The checksum as multihash hex (file extension), or None for types without one."""
    prefix = MULTIHASH.get(checksum_type)
    if prefix is None:
        return None
    code, length = prefix
    digest = checksum.strip().lower()
    if len(digest) != 2 * length or not re.fullmatch(r"[0-9a-f]+", digest):
        return None
    return f"{code}{length:02x}{digest}"


def asset(file, urls):
    body = {"href": urls.download(file.id), "title": file.name,
            "roles": ASSET_ROLES.get(file.role, [file.role])}
    kind = media_type(file.name)
    if kind:
        body["type"] = kind
    body["file:size"] = file.size
    checksum = multihash(file.checksum_type, file.checksum)
    if checksum:
        body["file:checksum"] = checksum
    return body


def item(granule, urls, files=None):
    """A STAC Item (GeoJSON Feature) for an archived granule and its files (objects with the
    File fields; the granule's own when None)."""
    coll = granule.collection
    properties = dict(granule.attributes or {})
    if coll.platform:
        properties["platform"] = coll.platform
    if coll.instrument:
        properties["instruments"] = [coll.instrument]
    start = format_datetime(granule.temporal_start)
    properties.update({
        "datetime": start,
        "start_datetime": start,
        "end_datetime": format_datetime(granule.temporal_end),
        "created": format_datetime(granule.created_at),
        "updated": format_datetime(granule.updated_at),
    })
    files = list(granule.files.all()) if files is None else files
    key, bbox = coll.key, granule.bbox
    feature = {
        "type": "Feature",
        "stac_version": STAC_VERSION,
        "stac_extensions": [FILE_EXTENSION] if files else [],
        "id": granule.granule_id,
        "collection": key,
        "geometry": footprint(bbox),
    }
    if bbox is not None:
        feature["bbox"] = bbox
    parent = urls.collection(key)
    feature.update({
        "properties": properties,
        "assets": {f.name: asset(f, urls) for f in files},
        "links": [
            _link("self", urls.item(key, granule.granule_id), GEOJSON),
            _link("parent", parent, title=key),
            _link("collection", parent, title=key),
            _link("root", urls.root, title="Granary STAC API"),
        ],
    })
    return feature


def item_collection(granules, urls, *, self_href, next_link=None, files=None):
    """A page of items; `files` maps granule ids to their files (else each granule's own).
    numberMatched is left out on purpose: counting every match costs a full scan of the
    filtered set, which is what keyset paging exists to avoid."""
    links = [_link("self", self_href, GEOJSON), _link("root", urls.root)]
    if next_link is not None:
        links.append(next_link)
    features = [item(g, urls, None if files is None else files.get(g.pk, [])) for g in granules]
    return {
        "type": "FeatureCollection",
        "features": features,
        "links": links,
        "numberReturned": len(features),
    }


def next_get_link(href, params, token):
    query = {k: v for k, v in params.items() if k != "token"}
    query["token"] = token
    return _link("next", f"{href}?{urlencode(query)}", GEOJSON, method="GET")


def next_post_link(href, token):
    """POST paging: the client re-sends its body merged with the token."""
    return _link("next", href, GEOJSON, method="POST", body={"token": token}, merge=True)


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

    bbox: BBox | None = None
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


def geometry_bbox(geometry):
    """The bounding box of a GeoJSON geometry.

    `intersects` is answered with this box, not the exact shape: granule footprints are
    boxes, so the box of the query geometry finds every intersecting granule (and possibly
    a few that only touch its box). A geometry is taken as not crossing the antimeridian.
    """
    if not isinstance(geometry, dict) or "type" not in geometry:
        raise StacError("intersects must be a GeoJSON geometry object with a 'type'")
    kind = geometry["type"]
    depth = {"Point": 0, "MultiPoint": 1, "LineString": 1, "MultiLineString": 2,
             "Polygon": 2, "MultiPolygon": 3}
    if kind == "GeometryCollection":
        members = geometry.get("geometries")
        if not isinstance(members, list) or not members:
            raise StacError("intersects: a GeometryCollection needs a non-empty 'geometries'")
        boxes = [geometry_bbox(g) for g in members]
        return make_bbox(min(b.west for b in boxes), min(b.south for b in boxes),
                         max(b.east for b in boxes), max(b.north for b in boxes))
    if kind not in depth:
        raise StacError(f"intersects: unknown geometry type '{kind}'")
    positions = [geometry.get("coordinates")]
    for _ in range(depth[kind]):
        if not all(isinstance(p, list) and p for p in positions):
            raise StacError(f"intersects: the coordinates of this {kind} are malformed")
        positions = [inner for p in positions for inner in p]
    if not all(_is_position(p) for p in positions):
        raise StacError(f"intersects: the coordinates of this {kind} are malformed")
    lons, lats = [p[0] for p in positions], [p[1] for p in positions]
    try:
        return make_bbox(min(lons), min(lats), max(lons), max(lats))
    except BBoxError as exc:
        raise StacError(f"intersects: {exc}") from None


def _is_position(value):
    return (isinstance(value, list) and len(value) >= 2
            and all(_is_number(v) for v in value))


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
    box = bbox if bbox is not None else intersects
    start = end = None
    if datetime_text not in (None, ""):
        start, end = parse_datetime_interval(datetime_text)
    if token is not None and not isinstance(token, str):
        raise StacError("token must be a string from a 'next' link")
    return Search(
        bbox=box, start=start, end=end, ids=ids, collections=collections,
        limit=DEFAULT_LIMIT if limit is None else _limit(limit), sortby=sortby,
        token=token or None,
    )


def search_from_query(params):
    """A Search from GET query parameters (a mapping of strings)."""
    bbox = intersects = None
    if params.get("bbox") not in (None, ""):
        try:
            bbox = parse_bbox(params["bbox"])
        except BBoxError as exc:
            raise StacError(f"bbox: {exc}") from None
    if params.get("intersects") not in (None, ""):
        try:
            geometry = json.loads(params["intersects"])
        except ValueError:
            raise StacError("intersects must be a GeoJSON geometry in JSON") from None
        intersects = geometry_bbox(geometry)
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
        try:
            bbox = parse_bbox(raw)
        except BBoxError as exc:
            raise StacError(f"bbox: {exc}") from None
    if body.get("intersects") is not None:
        intersects = geometry_bbox(body["intersects"])
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
