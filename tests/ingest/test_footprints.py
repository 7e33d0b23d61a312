"""Footprint outlines at ingest: read from the request, a sidecar (own shape, UMM-G GPolygons),
a .met G-ring or ACDD geospatial_bounds, checked, and stored with their box as the prefilter."""
import json

import pytest
import shapely
from shapely.geometry import Polygon, box, shape

from backend.catalog.models import Granule
from ingest import metadata
from ingest.models import IngestGranule
from tests.ingest.builders import MET, staged_granules

CROSSING = [[170, -10], [-170, -10], [-170, 10], [170, 10], [170, -10]]
PAST_180 = [[170, -10], [190, -10], [190, 10], [170, 10], [170, -10]]
SPLIT = shapely.union_all([box(170, -10, 180, 10), box(-180, -10, -170, 10)])
G_RING = """
  GROUP                  = GPOLYGON
    OBJECT                 = GRINGPOINTLONGITUDE
      NUM_VAL              = 4
      VALUE                = ({})
    END_OBJECT             = GRINGPOINTLONGITUDE
    OBJECT                 = GRINGPOINTLATITUDE
      NUM_VAL              = 4
      VALUE                = ({})
    END_OBJECT             = GRINGPOINTLATITUDE
  END_GROUP              = GPOLYGON
"""


def test_sidecar_and_umm_g_polygons(tmp_path):
    own = tmp_path / "a.json"
    own.write_text(json.dumps({"footprint": {"type": "Polygon", "coordinates": [CROSSING]}}))
    assert metadata.extract([("a.json", "metadata", own)]).footprint["type"] == "Polygon"
    umm = tmp_path / "b.json"
    umm.write_text(json.dumps({"SpatialExtent": {"HorizontalSpatialDomain": {"Geometry": {
        "GPolygons": [{"Boundary": {"Points": [
            {"Longitude": 0, "Latitude": 0}, {"Longitude": 2, "Latitude": 0},
            {"Longitude": 1, "Latitude": 2}]}}]}}}}))
    found = metadata.extract([("b.json", "metadata", umm)])
    assert found.footprint == {"type": "Polygon",
                               "coordinates": [[[0, 0], [2, 0], [1, 2], [0, 0]]]}


def test_met_g_ring(tmp_path):
    ring = G_RING.format("-20.0, 10.0, 5.0, -18.0", "21.0, 22.0, 39.0, 38.0")
    end = "END_GROUP              = INVENTORYMETADATA"
    text = MET.format(granule_id="G.hdf").replace(end, ring + end)
    assert ring.strip() in text
    path = tmp_path / "G.hdf.met"
    path.write_text(text)
    found = metadata.extract([("G.hdf.met", "metadata", path)])
    assert Polygon(found.footprint["coordinates"][0]).equals(
        Polygon([(-20, 21), (10, 22), (5, 39), (-18, 38)]))
    assert found.footprint_edges == "sphere"


def test_acdd_geospatial_bounds_is_wkt():
    found = metadata.from_attributes({"geospatial_bounds": "POLYGON ((0 0, 1 0, 1 1, 0 0))"})
    assert found.footprint == "POLYGON ((0 0, 1 0, 1 1, 0 0))"
    assert "geospatial_bounds" not in found.attributes


@pytest.mark.django_db
def test_a_request_footprint_is_stored_split_with_its_box(client, provider, collection, drain):
    """A request's GeoJSON is planar (RFC 7946): past 180 it is split there; an edge from -170
    to 170 runs across the middle of the map."""
    granules = staged_granules(provider, collection, 3, sizes=(100,))
    granules[0]["footprint"] = {"type": "Polygon", "coordinates": [PAST_180]}
    granules[2]["footprint"] = {"type": "Polygon", "coordinates": [CROSSING]}
    answer = client.post("/api/v1/ingest/requests/", {"granules": granules}, format="json")
    assert answer.status_code == 202, answer.json()
    drain()
    drawn = Granule.objects.get(granule_id=granules[0]["granule_id"])
    assert drawn.bbox == [170, -10, -170, 10]           # the outline's box, not the request's
    assert shapely.from_geojson(drawn.footprint).equals(SPLIT)
    boxed = Granule.objects.get(granule_id=granules[1]["granule_id"])
    assert shape(json.loads(boxed.footprint)).equals(box(*boxed.bbox))
    wide = Granule.objects.get(granule_id=granules[2]["granule_id"])
    assert wide.bbox == [-170, -10, 170, 10]
    assert shapely.from_geojson(wide.footprint).equals(Polygon(CROSSING))


@pytest.mark.django_db
def test_a_met_g_ring_across_180_is_read_on_the_sphere(client, provider, collection, drain):
    """A .met G-ring's points are on the sphere, so its edge 170 -> -170 crosses 180°."""
    from tests.ingest.builders import stage

    granules = staged_granules(provider, collection, 1, sizes=(100,))
    spec = granules[0]
    spec.pop("bbox", None)
    spec.pop("temporal", None)
    ring = G_RING.format(", ".join(str(x) for x, _ in CROSSING[:4]),
                         ", ".join(str(y) for _, y in CROSSING[:4]))
    end = "END_GROUP              = INVENTORYMETADATA"
    met = MET.format(granule_id=spec["granule_id"]).replace(end, ring + end)
    spec["files"].append(stage(provider, f"in/{spec['granule_id']}.met", met.encode(),
                               role="metadata"))
    answer = client.post("/api/v1/ingest/requests/", {"granules": granules}, format="json")
    assert answer.status_code == 202, answer.json()
    drain()
    drawn = Granule.objects.get(granule_id=spec["granule_id"])
    assert shapely.from_geojson(drawn.footprint).equals(SPLIT)
    assert drawn.bbox == [170, -10, -170, 10]


@pytest.mark.django_db
def test_a_bad_footprint_refuses_the_request_with_the_reason(client, provider, collection):
    granules = staged_granules(provider, collection, 1, sizes=(100,))
    granules[0]["footprint"] = {"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [1, 0],
                                                                    [0, 1], [0, 0]]]}
    answer = client.post("/api/v1/ingest/requests/", {"granules": granules}, format="json")
    assert answer.status_code == 400
    assert "Self-intersection" in answer.json()["detail"]
    assert not IngestGranule.objects.exists()


@pytest.mark.django_db
def test_a_bad_outline_in_the_files_fails_the_granule_with_metadata_error(
        client, provider, collection, drain, tmp_path):
    granules = staged_granules(provider, collection, 1, sizes=(100,))
    spec = granules[0]
    spec.pop("bbox", None)
    spec["temporal"] = {"start": "2024-01-01T00:00:00Z", "end": "2024-01-01T00:05:00Z"}
    from tests.ingest.builders import stage

    sidecar = json.dumps({"bbox": [0, 0, 1, 1],
                          "footprint": "POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))"}).encode()
    spec["files"].append(stage(provider, f"in/{spec['granule_id']}.json", sidecar,
                               role="metadata"))
    answer = client.post("/api/v1/ingest/requests/", {"granules": granules}, format="json")
    assert answer.status_code == 202, answer.json()
    drain()
    row = IngestGranule.objects.get()
    assert row.state == "failed" and "Self-intersection" in row.reason
