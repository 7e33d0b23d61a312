"""STAC API 1.0 documents built from catalog objects: landing page, collections, items.

Pure functions over model objects and plain values: no queries and no HTTP here, so the
documents are easy to test and the views stay thin. Parsing a search request is stac_search.
"""
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, urlencode

from backend.errors import DomainError

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
# Multihash function codes and digest lengths for the checksums that have one (the multicodec
# table); CKSUM and ADLER32 have no code there, so their assets carry no file:checksum.
MULTIHASH = {"MD5": (0xD5, 16), "SHA256": (0x12, 32)}


class StacError(DomainError):
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
    return f"{_varint(code)}{_varint(length)}{digest}"


def _varint(number):
    """Unsigned LEB128 as hex, as multihash writes its code and length: MD5's 0xd5 is 'd501'."""
    out = bytearray()
    while True:
        low, number = number & 0x7F, number >> 7
        out.append(low | (0x80 if number else 0))
        if not number:
            return out.hex()


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
        "geometry": (json.loads(granule.footprint) if getattr(granule, "footprint", None)
                     else footprint(bbox)),
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
