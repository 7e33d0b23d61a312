"""POST /api/v1/shapes/: an uploaded GeoJSON, KML or zipped shapefile gives one search shape;
hostile files get a 4xx with the reason. Shapefiles are written with pyshp, zips with zipfile."""
import io
import json
import math
import zipfile

import pytest
import shapefile
from django.core.files.uploadedfile import SimpleUploadedFile
from shapely.geometry import Point, box, shape

from backend.catalog import shape_files, shapes

WGS84_PRJ = ('GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,'
             '298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]')
UTM_PRJ = ('PROJCS["WGS_1984_UTM_Zone_33N",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",'
           'SPHEROID["WGS_1984",6378137.0,298.257223563]]],PROJECTION["Transverse_Mercator"]]')


def upload(api, name, data):
    return api.post("/api/v1/shapes/", {"file": SimpleUploadedFile(name, data)},
                    format="multipart")


def refused(response, status, words):
    assert response.status_code == status, response.content
    assert words in response.json()["detail"], response.json()["detail"]


def shapefile_zip(polygons, prj=WGS84_PRJ, parts=(".shp", ".shx", ".dbf"), stem="area"):
    shp, shx, dbf = io.BytesIO(), io.BytesIO(), io.BytesIO()
    with shapefile.Writer(shp=shp, shx=shx, dbf=dbf, shapeType=shapefile.POLYGON) as writer:
        writer.field("name", "C")
        for i, rings in enumerate(polygons):
            writer.poly(rings)
            writer.record(f"p{i}")
    files = {".shp": shp, ".shx": shx, ".dbf": dbf}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for suffix in parts:
            z.writestr(f"{stem}{suffix}", files[suffix].getvalue())
        if prj is not None:
            z.writestr(f"{stem}.prj", prj)
    return out.getvalue()


SQUARE = [[0, 0], [0, 2], [2, 2], [2, 0], [0, 0]]        # clockwise: a shapefile outer ring
OTHER = [[5, 5], [5, 6], [6, 6], [6, 5], [5, 5]]


def test_geojson_feature_collection_is_united(api):
    doc = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {}, "geometry": {"type": "Polygon",
                                                            "coordinates": [SQUARE]}},
        {"type": "Feature", "properties": {}, "geometry": {
            "type": "Polygon", "coordinates": [[[1, 1], [3, 1], [3, 3], [1, 3], [1, 1]]]}},
        {"type": "Feature", "properties": {}, "geometry": None},
    ]}
    body = upload(api, "area.geojson", json.dumps(doc).encode()).json()
    assert body["format"] == "geojson" and body["features"] == 2 and not body["simplified"]
    assert shape(body["geometry"]).equals(box(0, 0, 2, 2).union(box(1, 1, 3, 3)))


def test_shapefile_zip_is_read_and_can_be_searched_with(api, db):
    body = upload(api, "areas.zip", shapefile_zip([[SQUARE], [OTHER]])).json()
    assert body["format"] == "shapefile" and body["features"] == 2
    assert shape(body["geometry"]).equals(box(0, 0, 2, 2).union(box(5, 5, 6, 6)))
    search = api.post("/api/v1/granules/search/", {"intersects": body["geometry"]},
                      format="json")
    assert search.status_code == 200


KML = """<?xml version="1.0" encoding="UTF-8"?>
    <kml xmlns="http://www.opengis.net/kml/2.2"><Document><Placemark><Polygon>
      <outerBoundaryIs><LinearRing><coordinates>
        170,-10,0 {east},-10,0 {east},10,0 170,10,0 170,-10,0
      </coordinates></LinearRing></outerBoundaryIs></Polygon></Placemark>
      <Placemark><Point><coordinates>10,20</coordinates></Point></Placemark>
    </Document></kml>"""


def test_kml_and_kmz(api):
    """Coordinates are planar, as for GeoJSON: across 180° a ring goes past it (170 -> 190)."""
    kml = KML.format(east=190).encode()
    body = upload(api, "area.kml", kml).json()
    assert body["format"] == "kml" and body["features"] == 2
    geometry = shape(body["geometry"])
    assert geometry.intersects(box(175, 0, 176, 1)) and geometry.intersects(box(-176, 0, -175, 1))
    assert not geometry.intersects(box(0, -5, 1, 5))            # it crossed 180°, not 0°
    wide = shape(upload(api, "wide.kml", KML.format(east=-170).encode()).json()["geometry"])
    assert wide.equals(box(-170, -10, 170, 10).union(Point(10, 20)))   # 170 -> -170: the middle
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("doc.kml", kml)
    assert upload(api, "area.kmz", out.getvalue()).json()["features"] == 2


def test_a_detailed_shape_is_simplified_to_the_limit_with_a_note(api):
    n = 3 * shapes.MAX_VERTICES
    ring = [[round(10 * math.cos(2 * math.pi * i / n), 6), round(10 * math.sin(2 * math.pi * i / n),
                                                                 6)] for i in range(n)]
    ring.append(ring[0])
    doc = {"type": "Polygon", "coordinates": [ring]}
    body = upload(api, "circle.json", json.dumps(doc).encode()).json()
    assert body["simplified"] is True and body["vertices"] <= shapes.MAX_VERTICES
    assert f"simplified from {n + 1}" in body["note"]
    # the simplified circle stays close to the original
    assert abs(shape(body["geometry"]).area - shape(doc).area) / shape(doc).area < 0.01


# ------------------------------------------------------------------------------- hostile

def test_missing_shx_or_dbf_is_named(api):
    refused(upload(api, "a.zip", shapefile_zip([[SQUARE]], parts=(".shp", ".dbf"))), 400,
            "lacks its .shx")
    refused(upload(api, "a.zip", shapefile_zip([[SQUARE]], parts=(".shp",))), 400,
            "lacks its .shx, .dbf")


def test_no_shapefile_in_the_zip(api):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("readme.txt", "hello")
    refused(upload(api, "a.zip", out.getvalue()), 400, "no shapefile")


def test_projected_shapefile_is_refused_with_the_reason(api):
    refused(upload(api, "utm.zip", shapefile_zip([[SQUARE]], prj=UTM_PRJ)), 400,
            "reproject it to WGS 84")


def test_projected_coordinates_without_prj_are_refused(api):
    metres = [[500000, 4000000], [500000, 4100000], [600000, 4100000], [600000, 4000000],
              [500000, 4000000]]
    refused(upload(api, "utm.zip", shapefile_zip([[metres]], prj=None)), 400, "projected")


@pytest.mark.parametrize("name", ["../../etc/passwd.shp", "/abs/area.shp", "dir/../../x.dbf",
                                  "C:evil.shp", "..\\..\\win.shx"])
def test_zip_with_climbing_names_is_refused(api, name):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(name, b"x")
    refused(upload(api, "evil.zip", out.getvalue()), 400, "climbs out of its folder")


def test_zip_bomb_is_refused_before_it_inflates(api):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("area.shp", b"\0" * (shape_files.MAX_UNZIPPED_BYTES + 1))
    assert len(out.getvalue()) < shape_files.MAX_UPLOAD_BYTES
    refused(upload(api, "bomb.zip", out.getvalue()), 413, "unpacks to more than")


def test_zip_bomb_that_lies_about_its_size_is_cut_off(api):
    """A member whose header declares a small size is read only up to the budget."""
    big = b"\0" * (shape_files.MAX_UNZIPPED_BYTES + 10)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("area.prj", big)
        z.writestr("area.shp", b"x")
        z.writestr("area.shx", b"x")
        z.writestr("area.dbf", b"x")
    data = bytearray(out.getvalue())
    # rewrite the declared sizes of area.prj (local header and central directory) to 10 bytes
    size = len(big).to_bytes(4, "little")
    data = bytes(data).replace(size, (10).to_bytes(4, "little"))
    response = upload(api, "liar.zip", data)
    assert response.status_code in (400, 413)
    assert "cannot be read" in response.json()["detail"] or "unpacks" in response.json()["detail"]


def test_too_large_file_is_413(api):
    data = b" " * (shape_files.MAX_UPLOAD_BYTES + 1)
    refused(upload(api, "big.geojson", data), 413, "larger than 5 MiB")


@pytest.mark.parametrize("name, data, words", [
    ("a.geojson", b'{"type": "FeatureCollection", "features": [', "not JSON"),
    ("a.geojson", b"[" * 100000, "nested too deeply"),
    ("a.geojson", b'{"type": "FeatureCollection", "features": [1]}', "not a GeoJSON Feature"),
    ("a.geojson", b'{"type": "FeatureCollection", "features": []}', "no geometry"),
    ("a.geojson", b'{"type": "Polygon", "coordinates": [[[0,0],[1,1],[1,0],[0,1],[0,0]]]}',
     "Self-intersection"),
    ("a.kml", b"<kml><Placemark><Polygon>", "not well-formed"),
    ("a.kml", b"<html><body/></html>", "not KML"),
    ("a.kml", b"<kml><Point><coordinates>ten,20</coordinates></Point></kml>", "lon,lat"),
    ("a.zip", b"PK\x03\x04garbage", "not a readable zip"),
    ("a.txt", b"hello", "unknown file type"),
    ("a.geojson", b"   ", "empty"),
])
def test_malformed_files_are_400_with_the_reason(api, name, data, words):
    refused(upload(api, name, data), 400, words)


def test_xml_entity_expansion_is_refused(api):
    bomb = b"""<?xml version="1.0"?>
    <!DOCTYPE kml [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
    <kml><Point><coordinates>&b;</coordinates></Point></kml>"""
    refused(upload(api, "bomb.kml", bomb), 400, "refused for safety")
    external = b"""<?xml version="1.0"?>
    <!DOCTYPE kml [<!ENTITY x SYSTEM "file:///etc/passwd">]><kml>&x;</kml>"""
    refused(upload(api, "ext.kml", external), 400, "refused for safety")


def test_no_file_field_is_400(api):
    refused(api.post("/api/v1/shapes/", {"other": "x"}, format="multipart"), 400,
            "form field 'file'")
