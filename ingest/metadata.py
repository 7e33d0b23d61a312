"""Granule metadata from the delivered files. Pure Python, no Django.

Sources, in the order they are believed: a sidecar JSON (UMM-G-like or Granary's own request
shape), an ECS `.met` ODL file, then HDF5 / NetCDF data files: their global attributes (ACDD
names: time_coverage_start, geospatial_lon_min, ...), else their latitude, longitude and time
coordinates (datafiles.py), and their variables. What the request itself says wins over all.

A footprint outline is taken raw (a GeoJSON geometry dict, or WKT text) from the sidecar's
`footprint`, UMM-G GPolygons, the .met G-ring or ACDD geospatial_bounds; registration checks it
(catalog.shapes) and stores it, with its box as the index prefilter. GeoJSON and WKT are planar
(RFC 7946); G-rings and GPolygons are points on the sphere, so `footprint_edges` says SPHERE
for them (each edge the shorter way round).
"""
import json
import math
from dataclasses import dataclass, field

from backend.catalog.geo import BBoxError, make_bbox
from backend.catalog.shapes import PLANAR, SPHERE

from . import datafiles
from .datafiles import plain
from .pdr import parse_time
from .pvl_text import PvlError, parse_pvl

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
NETCDF_CLASSIC = (b"CDF\x01", b"CDF\x02", b"CDF\x05")
MAX_SIDECAR = 16 << 20
MAX_ATTRIBUTES = 50


class MetadataError(ValueError):
    """Metadata that is there but cannot be read, said plainly."""


@dataclass
class Extracted:
    start: object = None
    end: object = None
    bbox: list | None = None
    footprint: dict | str | None = None     # GeoJSON geometry, or WKT text
    footprint_edges: str = PLANAR           # how catalog.shapes reads it: SPHERE for G-rings
    shape: object = None                    # the footprint once registration checked it
    attributes: dict = field(default_factory=dict)
    sources: list = field(default_factory=list)

    def absorb(self, other, source):
        """Fill what is still unknown from `other`."""
        used = False
        if self.start is None and other.start is not None:
            self.start, self.end, used = other.start, other.end, True
        if self.bbox is None and other.bbox is not None:
            self.bbox, used = other.bbox, True
        if self.footprint is None and other.footprint is not None:
            self.footprint, self.footprint_edges = other.footprint, other.footprint_edges
            used = True
        for key, value in other.attributes.items():
            if key not in self.attributes:
                self.attributes[key], used = value, True
        if used:
            self.sources.append(source)


def extract(files):
    """Metadata of a granule from its files: (name, role, path) triples."""
    found = Extracted()
    ordered = sorted(files, key=lambda f: _rank(f[0], f[1]))
    for name, role, path in ordered:
        reader = _reader(name, role, path)
        if reader is None:
            continue
        try:
            found.absorb(reader(path), name)
        except MetadataError as exc:
            raise MetadataError(f"{name}: {exc}") from exc
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise MetadataError(f"{name} cannot be read: {exc}") from exc
    return found


def _rank(name, role):
    lower = name.lower()
    if lower.endswith(".json"):
        return 0
    if lower.endswith(".met"):
        return 1
    return 2 if role == "data" else 3


def _reader(name, role, path):
    lower = name.lower()
    if lower.endswith(".json") and role in ("metadata", "qa"):
        return from_json
    if lower.endswith(".met"):
        return from_met
    if role != "data":
        return None
    with open(path, "rb") as f:
        head = f.read(520)
    if head.startswith(HDF5_SIGNATURE) or head[512:520] == HDF5_SIGNATURE:
        return from_hdf5
    if head[:4] in NETCDF_CLASSIC:
        return from_netcdf
    return None


def _time(value, what):
    try:
        return parse_time(value)
    except (TypeError, ValueError) as exc:
        raise MetadataError(f"{what} {value!r} is not an ISO 8601 date and time") from exc


def _number(value, what):
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise MetadataError(f"{what} {value!r} is not a number") from exc
    if not math.isfinite(number):
        raise MetadataError(f"{what} is not a finite number")
    return number


def _box(west, south, east, north):
    values = (west, south, east, north)
    if all(v is None for v in values):
        return None
    if any(v is None for v in values):
        raise MetadataError("the bounding box lacks a side: give west, south, east and north")
    return [_number(v, what) for v, what in zip(values, ("west", "south", "east", "north"),
                                                  strict=True)]


# ---------------------------------------------------------------------------------------------
# Sidecar JSON


def from_json(path):
    with open(path, "rb") as f:
        raw = f.read(MAX_SIDECAR + 1)
    if len(raw) > MAX_SIDECAR:
        raise MetadataError("the sidecar JSON is larger than 16 MiB")
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise MetadataError(f"the sidecar is not JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise MetadataError("the sidecar JSON must be an object")
    if "TemporalExtent" in doc or "SpatialExtent" in doc:
        return _umm_g(doc)
    out = Extracted()
    temporal = doc.get("temporal")
    if temporal:
        out.start = _time(temporal.get("start"), "temporal.start")
        out.end = _time(temporal.get("end") or temporal.get("start"), "temporal.end")
    if doc.get("bbox") is not None:
        box = doc["bbox"]
        if not isinstance(box, list) or len(box) != 4:
            raise MetadataError("bbox must be [west, south, east, north]")
        out.bbox = _box(*box)
    footprint = doc.get("footprint")
    if footprint is not None:
        if not isinstance(footprint, dict | str):
            raise MetadataError("footprint must be a GeoJSON geometry or WKT text")
        out.footprint = footprint
    if isinstance(doc.get("attributes"), dict):
        out.attributes = dict(doc["attributes"])
    return out


def _umm_g(doc):
    out = Extracted()
    span = (doc.get("TemporalExtent") or {}).get("RangeDateTime") or {}
    if span.get("BeginningDateTime"):
        out.start = _time(span["BeginningDateTime"], "BeginningDateTime")
        out.end = _time(span.get("EndingDateTime") or span["BeginningDateTime"],
                        "EndingDateTime")
    geometry = (((doc.get("SpatialExtent") or {}).get("HorizontalSpatialDomain") or {})
                .get("Geometry") or {})
    rectangles = geometry.get("BoundingRectangles") or []
    if rectangles:
        r = rectangles[0]
        out.bbox = _box(r.get("WestBoundingCoordinate"), r.get("SouthBoundingCoordinate"),
                        r.get("EastBoundingCoordinate"), r.get("NorthBoundingCoordinate"))
    polygons = [_umm_polygon(p) for p in geometry.get("GPolygons") or []]
    if polygons:
        out.footprint = ({"type": "Polygon", "coordinates": polygons[0]} if len(polygons) == 1
                         else {"type": "MultiPolygon", "coordinates": polygons})
        out.footprint_edges = SPHERE
    for attr in doc.get("AdditionalAttributes") or []:
        values = attr.get("Values") or []
        if attr.get("Name") and values:
            out.attributes[attr["Name"]] = values[0] if len(values) == 1 else values
    return out


def _umm_polygon(polygon):
    """A UMM-G GPolygon as GeoJSON polygon rings (boundary, then exclusive zones)."""
    if not isinstance(polygon, dict):
        raise MetadataError("a GPolygon must be an object with a Boundary")
    boundaries = [polygon.get("Boundary")] + [
        zone for zone in ((polygon.get("ExclusiveZone") or {}).get("Boundaries") or [])]
    rings = []
    for boundary in boundaries:
        points = (boundary or {}).get("Points") if isinstance(boundary, dict) else None
        if not isinstance(points, list) or not points:
            raise MetadataError("a GPolygon boundary needs Points")
        rings.append(_closed([[_number(p.get("Longitude"), "Longitude"),
                               _number(p.get("Latitude"), "Latitude")]
                              for p in points if isinstance(p, dict)]))
    return rings


def _closed(ring):
    return ring if ring and ring[0] == ring[-1] else [*ring, *ring[:1]]


# ---------------------------------------------------------------------------------------------
# ECS .met (ODL)


def _met_numbers(root, name):
    """A .met list value such as (10.1, 11.2, 12.3) as numbers; None when it is not there."""
    text = _met_value(root, name)
    if text is None:
        return None
    return [_number(v, name) for v in text.strip("()").split(",") if v.strip()]


def _met_value(root, name):
    for node in root.walk():
        if node.name.upper() == name:
            value = node.value("VALUE")
            if value is not None:
                return value.strip().strip('"')
    return None


def from_met(path):
    with open(path, encoding="ascii", errors="replace") as f:
        text = f.read(MAX_SIDECAR)
    try:
        root = parse_pvl(text)
    except PvlError as exc:
        raise MetadataError(f"the .met file is not ODL: {exc}") from exc
    out = Extracted()
    begin_date = _met_value(root, "RANGEBEGINNINGDATE")
    if begin_date:
        begin_time = _met_value(root, "RANGEBEGINNINGTIME") or "00:00:00"
        end_date = _met_value(root, "RANGEENDINGDATE") or begin_date
        end_time = _met_value(root, "RANGEENDINGTIME") or begin_time
        out.start = _time(f"{begin_date}T{begin_time}", "RANGEBEGINNINGDATE/TIME")
        out.end = _time(f"{end_date}T{end_time}", "RANGEENDINGDATE/TIME")
    out.bbox = _box(*(_met_value(root, f"{side}BOUNDINGCOORDINATE")
                      for side in ("WEST", "SOUTH", "EAST", "NORTH")))
    lons, lats = _met_numbers(root, "GRINGPOINTLONGITUDE"), _met_numbers(root, "GRINGPOINTLATITUDE")
    if lons or lats:
        if not lons or not lats or len(lons) != len(lats):
            raise MetadataError("the G-ring needs as many GRINGPOINTLATITUDE as LONGITUDE values")
        out.footprint = {"type": "Polygon",
                         "coordinates": [_closed([list(p) for p in zip(lons, lats, strict=True)])]}
        out.footprint_edges = SPHERE
    for node in root.walk():
        if node.name.upper() != "ADDITIONALATTRIBUTESCONTAINER":
            continue
        name = _met_value(node, "ADDITIONALATTRIBUTENAME")
        value = _met_value(node, "PARAMETERVALUE")
        if name and value is not None:
            out.attributes[name] = value
    local_id = _met_value(root, "LOCALGRANULEID")
    if local_id:
        out.attributes.setdefault("LocalGranuleID", local_id)
    return out


# ---------------------------------------------------------------------------------------------
# HDF5 and NetCDF: global attributes (ACDD), coordinates and variables


def from_attributes(attrs):
    """Interpret global attributes by the ACDD names."""
    attrs = {k: plain(v) for k, v in attrs.items()}
    lower = {k.lower(): v for k, v in attrs.items()}
    out = Extracted()
    if lower.get("time_coverage_start"):
        out.start = _time(lower["time_coverage_start"], "time_coverage_start")
        out.end = _time(lower.get("time_coverage_end") or lower["time_coverage_start"],
                        "time_coverage_end")
    out.bbox = _box(lower.get("geospatial_lon_min"), lower.get("geospatial_lat_min"),
                    lower.get("geospatial_lon_max"), lower.get("geospatial_lat_max"))
    bounds = lower.get("geospatial_bounds")
    if isinstance(bounds, str) and bounds.strip():
        out.footprint = bounds.strip()
    used = {"time_coverage_start", "time_coverage_end", "geospatial_lon_min",
            "geospatial_lat_min", "geospatial_lon_max", "geospatial_lat_max",
            "geospatial_bounds"}
    for key, value in attrs.items():
        if len(out.attributes) >= MAX_ATTRIBUTES:
            break
        if key.startswith("_") or key.lower() in used:
            continue   # the library's own (_NCProperties), or read above
        if not isinstance(value, str | int | float | bool):
            continue
        if isinstance(value, str) and len(value) > 256:
            continue
        if isinstance(value, float) and not math.isfinite(value):
            continue
        out.attributes[key] = value
    return out


def from_hdf5(path):
    return _from_data_file(datafiles.read_hdf5, path)


def from_netcdf(path):
    return _from_data_file(datafiles.read_netcdf, path)


def _from_data_file(read, path):
    """Times and box from the ACDD attributes, else from the coordinates, which must agree
    with them; the variables (name, units, long name, shape) as the attribute `variables`."""
    try:
        contents = datafiles.read_isolated(read, path)
        out = from_attributes(contents.attributes)
        if out.bbox is not None:
            make_bbox(*out.bbox)
            datafiles.check_box(out.bbox, contents)
        elif contents.lat and contents.lon:
            out.bbox = [contents.lon[0], contents.lat[0], contents.lon[1], contents.lat[1]]
        if out.start is not None:
            datafiles.check_times(out.start, out.end, contents)
        elif contents.time:
            out.start, out.end = contents.time
    except datafiles.FileError as exc:
        raise MetadataError(str(exc)) from exc
    except BBoxError as exc:
        raise MetadataError(f"bounding box: {exc}") from exc
    if contents.variables:
        out.attributes["variables"] = contents.variables
    return out
