"""A search page builds what it asks of the database once: its shape is parsed once per
request (not by the view and by each filter set), and the residency annotation is built only
for the rows the page reads (it was built for a queryset the known ids then replaced)."""
import json
from datetime import UTC, datetime

import pytest

from backend.catalog import filters, services
from backend.catalog.models import Granule
from tests.factories import CollectionFactory, GranuleFactory

pytestmark = pytest.mark.django_db

SEARCH = {"start": "2024-03-01", "end": "2024-03-31", "include": "facets,timeline"}


@pytest.fixture
def granules():
    collection = CollectionFactory(short_name="BOXES", version="1")
    made = {}
    for name, (west, south, east, north) in {"in": (0, 0, 5, 5), "edge": (8, 8, 15, 15),
                                              "out": (50, 50, 60, 60)}.items():
        made[name] = GranuleFactory(
            collection=collection, state=Granule.State.ARCHIVED, west=west, south=south,
            east=east, north=north, temporal_start=datetime(2024, 3, 2, tzinfo=UTC),
            temporal_end=datetime(2024, 3, 2, 1, tzinfo=UTC))
    return made


@pytest.fixture
def counted(monkeypatch):
    calls = {"shape": 0, "residency": 0}
    parse, annotate = filters._search_shape, services.with_residency

    def shape(*args):
        calls["shape"] += 1
        return parse(*args)

    def residency(queryset):
        calls["residency"] += 1
        return annotate(queryset)

    monkeypatch.setattr(filters, "_search_shape", shape)
    monkeypatch.setattr(services, "with_residency", residency)
    return calls


@pytest.mark.parametrize("collection", [None, "BOXES.1"])
def test_a_search_page_parses_its_bbox_once_and_annotates_its_rows_once(
        user_api, granules, counted, collection):
    search = {**SEARCH, "bbox": "-1,-1,10,10"} | ({"collection": collection} if collection
                                                  else {})
    response = user_api.get("/api/v1/granules/", search)
    assert response.status_code == 200, response.content[:300]
    body = response.json()
    # the boxes [0,5]x[0,5] and [8,15]x[8,15] meet [-1,10]x[-1,10]; [50,60]x[50,60] does not
    assert sorted(g["id"] for g in body["results"]) == sorted(
        [granules["in"].pk, granules["edge"].pk])
    assert body["timeline"]["total"] == 2
    assert {row["value"]: row["count"] for row in body["facets"]["collection"]} == {
        "BOXES.1": 2}
    assert counted == {"shape": 1, "residency": 1}


def test_each_request_parses_its_own_shape(user_api, granules, counted):
    first = user_api.get("/api/v1/granules/", {**SEARCH, "bbox": "-1,-1,10,10"})
    second = user_api.get("/api/v1/granules/", {**SEARCH, "bbox": "49,49,61,61"})
    assert [g["id"] for g in first.json()["results"]] != [g["id"] for g in
                                                          second.json()["results"]]
    assert [g["id"] for g in second.json()["results"]] == [granules["out"].pk]
    assert counted["shape"] == 2


@pytest.mark.parametrize("bad", ["1,2,3", "a,b,c,d", "10,0,5,95"])
def test_a_bad_bbox_is_still_a_400_each_time(user_api, granules, bad):
    for _ in range(2):
        response = user_api.get("/api/v1/granules/", {**SEARCH, "bbox": bad})
        assert response.status_code == 400, response.content[:300]
        assert "bbox" in response.content.decode()


def test_a_posted_search_with_a_geojson_shape_is_parsed_once(user_api, granules, counted):
    shape = {"type": "Polygon", "coordinates": [[[-1, -1], [10, -1], [10, 10], [-1, 10],
                                                 [-1, -1]]]}
    response = user_api.post("/api/v1/granules/search/?include=facets,timeline",
                             json.dumps({"start": "2024-03-01", "intersects": shape}),
                             content_type="application/json")
    assert response.status_code == 200, response.content[:300]
    assert sorted(g["id"] for g in response.json()["results"]) == sorted(
        [granules["in"].pk, granules["edge"].pk])
    assert counted["shape"] == 1
