"""Search shapes from uploaded files: GeoJSON, KML (or KMZ) and zipped shapefiles. No Django.

The file is read in memory and never written to disk, so no member of a zip is ever extracted
by its own name; names that would climb out of a folder are refused all the same, as a sign of a
hostile file. A zip's members are read with a cap on what each gives (a zip bomb declares small
sizes and inflates past them), and the whole file is bounded before it gets here (413).
KML goes through defusedxml with DTDs forbidden (no entity expansion, no external fetches);
shapefiles through pyshp. The features are united into one geometry, split at the antimeridian,
and simplified (Douglas-Peucker, topology kept) until it fits the search's vertex limit.
"""
import io
import json
import posixpath
import re
import zipfile
import zlib
from dataclasses import dataclass

import shapefile  # pyshp
import shapely
from defusedxml import DefusedXmlException
from defusedxml import ElementTree as SafeXml

from backend.errors import DomainError

from . import shapes

MAX_UPLOAD_BYTES = 5 << 20
MAX_UNZIPPED_BYTES = 50 << 20
MAX_MEMBERS = 64
MAX_FEATURES = 10000
MAX_FILE_VERTICES = 200000
SHAPEFILE_PARTS = (".shp", ".shx", ".dbf")


class UploadError(DomainError):
    """A file that gives no search shape, with the reason for the user (400)."""

    def __init__(self, detail):
        super().__init__(detail, "file")


class UploadTooLarge(UploadError):
    """More bytes than a shape upload may hold, packed or unpacked (413)."""

    status = 413


@dataclass(frozen=True)
class Reading:
    geometry: dict          # GeoJSON, within the vertex limit
    format: str             # geojson, kml, shapefile
    features: int           # features with a geometry that were united
    vertices: int           # of `geometry`
    simplified: bool
    note: str | None


def read_upload(name, data):
    """The search shape of an uploaded file's bytes (`name` is only a hint of its format)."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadTooLarge(f"the file is larger than {MAX_UPLOAD_BYTES >> 20} MiB")
    if not data.strip():
        raise UploadError("the file is empty")
    lower = str(name or "").lower()
    if data[:4] == b"PK\x03\x04" or lower.endswith((".zip", ".kmz")):
        kind, geometries = _from_zip(data)
    elif lower.endswith(".kml") or data.lstrip()[:1] == b"<":
        kind, geometries = "kml", _from_kml(data)
    elif lower.endswith((".json", ".geojson")) or data.lstrip()[:1] in (b"{", b"["):
        kind, geometries = "geojson", _from_geojson(data)
    else:
        raise UploadError("unknown file type: upload GeoJSON (.geojson, .json), KML (.kml, "
                          ".kmz) or a zipped shapefile (.zip with .shp, .shx and .dbf)")
    return _united(kind, geometries)


# ----------------------------------------------------------------------------- formats

def _from_geojson(data):
    try:
        doc = json.loads(data)
    except RecursionError:
        raise UploadError("the GeoJSON is nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise UploadError(f"the file is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise UploadError("GeoJSON must be an object: a FeatureCollection, a Feature or a "
                          "geometry")
    kind = doc.get("type")
    if kind == "FeatureCollection":
        features = doc.get("features")
        if not isinstance(features, list):
            raise UploadError("the FeatureCollection has no 'features' list")
        if len(features) > MAX_FEATURES:
            raise UploadError(f"the file has {len(features)} features; at most {MAX_FEATURES}")
        out = []
        for i, feature in enumerate(features):
            if not isinstance(feature, dict) or feature.get("type") != "Feature":
                raise UploadError(f"feature {i} is not a GeoJSON Feature")
            if feature.get("geometry") is not None:
                out.append(feature["geometry"])
        return out
    if kind == "Feature":
        return [doc["geometry"]] if doc.get("geometry") is not None else []
    return [doc]


def _local(tag):
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _kml_positions(element, what):
    """The positions of a KML <coordinates> under `element` ('lon,lat[,alt]' tuples)."""
    node = next((e for e in element.iter() if _local(e.tag) == "coordinates"), None)
    if node is None or not (node.text or "").strip():
        raise UploadError(f"a KML {what} has no coordinates")
    positions = []
    for token in node.text.split():
        parts = token.split(",")
        try:
            lon, lat = float(parts[0]), float(parts[1])
        except (IndexError, ValueError):
            raise UploadError(f"a KML {what} has a coordinate that is not "
                              f"'lon,lat[,alt]': {token[:40]!r}") from None
        positions.append([lon, lat])
    return positions


def _kml_ring(element, boundary):
    rings = [e for e in element if _local(e.tag) == boundary]
    return [_kml_positions(r, "polygon boundary") for r in rings]


def _from_kml(data):
    try:
        root = SafeXml.fromstring(data, forbid_dtd=True)
    except DefusedXmlException as exc:
        raise UploadError(f"the KML uses XML features refused for safety: {exc}") from None
    except SafeXml.ParseError as exc:
        raise UploadError(f"the file is not well-formed XML: {exc}") from None
    if _local(root.tag) != "kml":
        raise UploadError("the XML is not KML (its root element is not <kml>)")
    out = []
    for element in root.iter():
        tag = _local(element.tag)
        if tag == "Polygon":
            outer = _kml_ring(element, "outerBoundaryIs")
            if len(outer) != 1:
                raise UploadError("a KML Polygon needs one outerBoundaryIs")
            out.append({"type": "Polygon",
                        "coordinates": outer + _kml_ring(element, "innerBoundaryIs")})
        elif tag == "LineString":
            out.append({"type": "LineString",
                        "coordinates": _kml_positions(element, "LineString")})
        elif tag == "Point":
            out.append({"type": "Point", "coordinates": _kml_positions(element, "Point")[0]})
        if len(out) > MAX_FEATURES:
            raise UploadError(f"the KML has more than {MAX_FEATURES} geometries")
    return out


def _from_zip(data):
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = [m for m in archive.infolist() if not m.is_dir()]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as exc:
        raise UploadError(f"the file is not a readable zip: {exc}") from None
    if len(members) > MAX_MEMBERS:
        raise UploadError(f"the zip holds {len(members)} files; at most {MAX_MEMBERS}")
    for member in members:
        _check_member_name(member.filename)
    if sum(m.file_size for m in members) > MAX_UNZIPPED_BYTES:
        raise UploadTooLarge(f"the zip unpacks to more than {MAX_UNZIPPED_BYTES >> 20} MiB")
    by_suffix = {}
    for member in members:
        if posixpath.basename(member.filename).startswith(("._", ".")):
            continue  # macOS resource forks and hidden files
        suffix = posixpath.splitext(member.filename)[1].lower()
        by_suffix.setdefault(suffix, []).append(member)
    budget = [MAX_UNZIPPED_BYTES]
    if ".shp" in by_suffix:
        return "shapefile", _from_shapefile(archive, by_suffix, budget)
    if ".kml" in by_suffix:
        if len(by_suffix[".kml"]) > 1:
            raise UploadError("the zip holds several .kml files; upload one")
        return "kml", _from_kml(_read(archive, by_suffix[".kml"][0], budget))
    raise UploadError("the zip holds no shapefile (.shp with its .shx and .dbf) and no .kml")


_DRIVE = re.compile(r"^[A-Za-z]:")


def _check_member_name(name):
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or _DRIVE.match(name) or ".." in parts or "\x00" in name:
        raise UploadError(f"the zip holds a file named {name[:80]!r}, which climbs out of its "
                          "folder; such a zip is refused")


def _read(archive, member, budget):
    """A member's bytes, never more than what is left of the budget (whatever it declares)."""
    try:
        with archive.open(member) as stream:
            raw = stream.read(budget[0] + 1)
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, EOFError,
            ValueError, zlib.error) as exc:   # damaged, encrypted or crafted members
        raise UploadError(f"{member.filename} cannot be read from the zip: {exc}") from None
    if len(raw) > budget[0]:
        raise UploadTooLarge(f"the zip unpacks to more than {MAX_UNZIPPED_BYTES >> 20} MiB")
    budget[0] -= len(raw)
    return raw


def _from_shapefile(archive, by_suffix, budget):
    if len(by_suffix[".shp"]) > 1:
        raise UploadError("the zip holds several shapefiles; upload one at a time")
    shp = by_suffix[".shp"][0]
    stem = posixpath.splitext(shp.filename)[0].lower()
    parts = {}
    for suffix in (*SHAPEFILE_PARTS, ".prj"):
        found = [m for m in by_suffix.get(suffix, [])
                 if posixpath.splitext(m.filename)[0].lower() == stem]
        if found:
            parts[suffix] = found[0]
    missing = [s for s in SHAPEFILE_PARTS if s not in parts]
    if missing:
        raise UploadError(f"the shapefile {posixpath.basename(shp.filename)} lacks its "
                          f"{', '.join(missing)}: zip the .shp, .shx and .dbf together")
    if ".prj" in parts:
        _check_projection(_read(archive, parts[".prj"], budget).decode("utf-8", "replace"))
    files = {s[1:]: io.BytesIO(_read(archive, parts[s], budget)) for s in SHAPEFILE_PARTS}
    out = []
    try:
        with shapefile.Reader(**files) as reader:
            if len(reader) > MAX_FEATURES:
                raise UploadError(f"the shapefile has {len(reader)} features; at most "
                                  f"{MAX_FEATURES}")
            for shape in reader.iterShapes():
                if shape.shapeType == shapefile.NULL:
                    continue
                out.append(shape.__geo_interface__)
    except UploadError:
        raise
    except Exception as exc:   # pyshp raises many kinds on a damaged file
        raise UploadError(f"the shapefile cannot be read: {exc}") from None
    return out


def _check_projection(wkt):
    """Refuse a .prj that is not longitude/latitude on WGS 84 (reprojecting is not done)."""
    text = wkt.strip()
    head = text.split("[", 1)[0].strip().upper()
    normal = re.sub(r"[\s_]", "", text.upper())
    if head == "GEOGCS" and ("WGS1984" in normal or "WGS84" in normal):
        return
    summary = text[:120] + ("..." if len(text) > 120 else "")
    raise UploadError("the shapefile is not in longitude/latitude on WGS 84 (its .prj says "
                      f"{summary}); reproject it to WGS 84 (EPSG:4326) and upload it again")


# ---------------------------------------------------------------------------- uniting

def _plane(value, depth=0):
    """GeoJSON coordinates with the heights and measures dropped (tuples made lists)."""
    if isinstance(value, list | tuple) and value and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        return [value[0], value[1]] if len(value) >= 2 else list(value)
    if isinstance(value, list | tuple) and depth < 6:
        return [_plane(v, depth + 1) for v in value]
    return value


def _flat(geometry):
    if not isinstance(geometry, dict):
        raise UploadError("a feature's geometry is not a GeoJSON object")
    if geometry.get("type") == "GeometryCollection":
        members = geometry.get("geometries")
        if not isinstance(members, list):
            raise UploadError("a GeometryCollection has no 'geometries' list")
        return [g for m in members for g in _flat(m)]
    return [{"type": geometry.get("type"), "coordinates": _plane(geometry.get("coordinates"))}]


def _united(kind, geometries):
    flat = [g for geometry in geometries for g in _flat(geometry)]
    if not flat:
        raise UploadError("the file has no geometry to search with")
    parts, total = [], 0
    for i, geometry in enumerate(flat):
        try:
            shape = shapes.parse_geojson(geometry, f"feature {i + 1}", limit=MAX_FILE_VERTICES)
        except shapes.ShapeError as exc:
            hint = ("; is the file projected? give it in longitude/latitude (WGS 84)"
                    if "outside" in str(exc) else "")
            raise UploadError(f"{exc}{hint}") from None
        total += shape.vertices
        if total > MAX_FILE_VERTICES:
            raise UploadError(f"the file has more than {MAX_FILE_VERTICES} vertices")
        parts.append(shape.geometry)
    geometry = shapely.union_all(parts) if len(parts) > 1 else parts[0]
    before = shapely.get_num_coordinates(geometry)
    geometry, tolerance = _fitted(geometry)
    after = shapely.get_num_coordinates(geometry)
    note = None
    if tolerance:
        note = (f"simplified from {before} to {after} vertices (within {tolerance:g}°) to fit "
                f"the search limit of {shapes.MAX_VERTICES}")
    geojson = shapes.to_geojson(geometry)
    try:
        shapes.parse_geojson(geojson, "the united shape")
    except shapes.ShapeError as exc:
        raise UploadError(f"the shapes of the file give no usable search shape: {exc}") from None
    return Reading(geometry=geojson, format=kind, features=len(flat), vertices=after,
                   simplified=bool(tolerance), note=note)


def _fitted(geometry):
    """The geometry within the vertex limit, and the tolerance that took (0: none needed)."""
    if shapely.get_num_coordinates(geometry) <= shapes.MAX_VERTICES:
        return geometry, 0
    minx, miny, maxx, maxy = geometry.bounds
    extent = max(maxx - minx, maxy - miny, 1e-6)
    tolerance = extent / 20000
    while tolerance < extent:
        simpler = shapely.make_valid(geometry.simplify(tolerance, preserve_topology=True))
        if shapely.get_num_coordinates(simpler) <= shapes.MAX_VERTICES:
            return simpler, tolerance
        tolerance *= 2
    raise UploadError(f"the file's {len(getattr(geometry, 'geoms', [geometry]))} separate "
                      f"parts cannot be simplified to {shapes.MAX_VERTICES} vertices; upload "
                      "fewer features")
