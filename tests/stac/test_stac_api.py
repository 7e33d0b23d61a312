"""The STAC API at /stac/: documents, search rules, paging, visibility and CORS."""
import json

import multihash
import pytest

from backend.catalog import stac, stac_search
from backend.catalog.models import Granule
from tests.factories import GranuleFactory

from .builders import at, make_granule

pytestmark = pytest.mark.django_db

ROOT = "http://testserver/stac/"


def ok(response, content_type="application/geo+json"):
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == content_type
    return response.json()


def bad(response, message):
    assert response.status_code == 400, response.content
    body = response.json()
    assert message in body["detail"], body["detail"]
    assert body["code"] and body["description"]
    return body


def ids(body):
    return [f["id"] for f in body["features"]]


def search(api, **params):
    return api.get("/stac/search", params)


def post(api, body):
    return api.post("/stac/search", body, format="json")


def link(body, rel, method=None):
    found = [x for x in body["links"] if x["rel"] == rel and (not method or x["method"] == method)]
    return found[0] if found else None


# ------------------------------------------------------------------ landing, collections

def test_landing_page_links_and_conformance(api):
    body = ok(api.get("/stac/"), "application/json")
    assert body["type"] == "Catalog" and body["stac_version"] == "1.1.0"
    for uri in (
        "https://api.stacspec.org/v1.0.0/core",
        "https://api.stacspec.org/v1.0.0/item-search",
        "https://api.stacspec.org/v1.0.0/ogcapi-features",
        "https://api.stacspec.org/v1.0.0/item-search#sort",
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
    ):
        assert uri in body["conformsTo"]
    assert link(body, "self")["href"] == ROOT and link(body, "root")["href"] == ROOT
    desc = link(body, "service-desc")
    assert desc["href"] == "http://testserver/api/schema/"
    assert desc["type"] == "application/vnd.oai.openapi+json;version=3.0"
    assert link(body, "conformance")["href"] == ROOT + "conformance"
    assert link(body, "data")["href"] == ROOT + "collections"
    for method in ("GET", "POST"):
        assert link(body, "search", method)["href"] == ROOT + "search"
        assert link(body, "search", method)["type"] == "application/geo+json"
    assert ok(api.get("/stac/conformance"), "application/json")["conformsTo"] == \
        body["conformsTo"]


def test_service_desc_answers_with_openapi_json(api):
    response = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json;version=3.0")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi+json")
    assert "/stac/search" in json.loads(response.content)["paths"]


def test_collections_with_extent_from_archived_granules(api, modis, airs, secret):
    make_granule(modis, "A", at(1), box=(-20, -5, 10, 30))
    make_granule(modis, "B", at(3), box=(0, -40, 15, 5))
    make_granule(airs, "X", at(2), box=(170, -10, -170, 10))
    GranuleFactory(collection=modis, state=Granule.State.ARCHIVING, temporal_start=at(9),
                   west=-170, south=-80, east=170, north=80)
    make_granule(secret, "S", at(1))
    body = ok(api.get("/stac/collections"), "application/json")
    assert [c["id"] for c in body["collections"]] == ["AIRS2RET.7.0", "MOD021KM.061"]
    assert link(body, "self")["href"] == ROOT + "collections"
    modis_doc = ok(api.get("/stac/collections/MOD021KM.061"), "application/json")
    assert modis_doc["type"] == "Collection"
    assert modis_doc["extent"]["spatial"]["bbox"] == [[-20, -40, 15, 30]]
    assert modis_doc["extent"]["temporal"]["interval"] == [
        ["2024-03-01T00:00:00Z", "2024-03-03T00:05:00Z"]]
    assert link(modis_doc, "self")["href"] == ROOT + "collections/MOD021KM.061"
    assert link(modis_doc, "items")["href"] == ROOT + "collections/MOD021KM.061/items"
    assert modis_doc["description"] == "Calibrated radiances"
    airs_doc = body["collections"][0]
    assert airs_doc["extent"]["spatial"]["bbox"] == [[-180, -10, 180, 10]]


def test_empty_collection_has_whole_world_extent(api, modis):
    body = ok(api.get("/stac/collections/MOD021KM.061"), "application/json")
    assert body["extent"]["spatial"]["bbox"] == [[-180, -90, 180, 90]]
    assert body["extent"]["temporal"]["interval"] == [[None, None]]


def test_unknown_and_restricted_collections_are_404_for_anonymous(api, secret):
    for path in ("/stac/collections/NOPE.1", "/stac/collections/non-existent-collection",
                 "/stac/collections/SECRET.1", "/stac/collections/SECRET.1/items",
                 "/stac/collections/SECRET.1/items/S"):
        response = api.get(path)
        assert response.status_code == 404, path
        assert response.json()["detail"]


def test_restricted_collection_visible_to_approved_user(user_api, secret):
    make_granule(secret, "S", at(1))
    assert user_api.get("/stac/collections/SECRET.1").status_code == 404
    secret.approved_users.add(user_api.user)
    assert ok(user_api.get("/stac/collections/SECRET.1"), "application/json")["id"] == "SECRET.1"
    assert ids(ok(search(user_api, collections="SECRET.1"))) == ["S"]
    assert ids(ok(post(user_api, {"collections": ["SECRET.1"]}))) == ["S"]


def test_restricted_granules_never_in_anonymous_search(api, modis, secret):
    make_granule(modis, "PUBLIC", at(1))
    make_granule(secret, "HIDDEN", at(1))
    assert ids(ok(search(api))) == ["PUBLIC"]
    assert ids(ok(search(api, collections="SECRET.1"))) == []
    assert ids(ok(search(api, ids="HIDDEN"))) == []
    assert ids(ok(post(api, {"ids": ["HIDDEN"]}))) == []


def test_only_archived_granules_even_for_operators(operator_api, modis):
    make_granule(modis, "DONE", at(1))
    GranuleFactory(collection=modis, granule_id="BUSY", state=Granule.State.ARCHIVING)
    assert ids(ok(search(operator_api))) == ["DONE"]
    assert operator_api.get("/stac/collections/MOD021KM.061/items/BUSY").status_code == 404


# --------------------------------------------------------------------------------- items

def test_item_document(api, modis):
    granule = make_granule(modis, "MOD021KM.A2024061.0000", at(1),
                           attributes={"day_night": "Day", "cloud_cover": 12})
    body = ok(api.get("/stac/collections/MOD021KM.061/items/MOD021KM.A2024061.0000"))
    assert body["type"] == "Feature" and body["collection"] == "MOD021KM.061"
    assert body["bbox"] == [-10, -10, 10, 10]
    assert body["geometry"] == {"type": "Polygon", "coordinates": [
        [[-10, -10], [10, -10], [10, 10], [-10, 10], [-10, -10]]]}
    props = body["properties"]
    assert props["datetime"] == props["start_datetime"] == "2024-03-01T00:00:00Z"
    assert props["end_datetime"] == "2024-03-01T00:05:00Z"
    assert props["day_night"] == "Day" and props["cloud_cover"] == 12
    assert stac.FILE_EXTENSION in body["stac_extensions"]
    data, browse = (body["assets"][f"MOD021KM.A2024061.0000.{ext}"] for ext in ("hdf", "jpg"))
    files = {f.name: f for f in granule.files.all()}
    data_file = files["MOD021KM.A2024061.0000.hdf"]
    assert data["href"] == f"http://testserver/api/v1/files/{data_file.pk}/download"
    assert data["type"] == "application/x-hdf" and data["roles"] == ["data"]
    assert data["file:size"] == 4
    decoded = multihash.decode(bytes.fromhex(data["file:checksum"]))
    assert (decoded.name, decoded.digest.hex()) == ("md5", data_file.checksum)
    assert browse["type"] == "image/jpeg" and browse["roles"] == ["overview"]
    assert "file:checksum" not in browse
    self_href = ROOT + "collections/MOD021KM.061/items/MOD021KM.A2024061.0000"
    assert link(body, "self")["href"] == self_href
    assert link(body, "parent")["href"] == link(body, "collection")["href"] == \
        ROOT + "collections/MOD021KM.061"


def test_antimeridian_item_is_a_multipolygon_split_at_180(api, modis):
    make_granule(modis, "CROSS", at(1), box=(170, -5, -170, 5))
    body = ok(api.get("/stac/collections/MOD021KM.061/items/CROSS"))
    assert body["bbox"] == [170, -5, -170, 5]
    assert body["geometry"] == {"type": "MultiPolygon", "coordinates": [
        [[[170, -5], [180, -5], [180, 5], [170, 5], [170, -5]]],
        [[[-180, -5], [-170, -5], [-170, 5], [-180, 5], [-180, -5]]],
    ]}


def test_unknown_item_is_404(api, modis):
    assert api.get("/stac/collections/MOD021KM.061/items/nope").status_code == 404


def test_collection_items_page_through_with_next_links(api, modis, airs):
    made = {make_granule(modis, f"G{i}", at(1, i)).granule_id for i in range(7)}
    make_granule(airs, "OTHER", at(1))
    seen, url, pages = [], "/stac/collections/MOD021KM.061/items?limit=3", 0
    while url:
        body = ok(api.get(url))
        seen += ids(body)
        pages += 1
        following = link(body, "next")
        url = following["href"] if following else None
    assert sorted(seen) == sorted(made) and len(seen) == len(made)
    assert pages == 3


# ------------------------------------------------------------------------- search rules

def test_bbox_and_intersects_together_is_400(api, modis):
    polygon = {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]}
    bad(search(api, bbox="0,0,1,1", intersects=json.dumps(polygon)), "not both")
    bad(post(api, {"bbox": [0, 0, 1, 1], "intersects": polygon}), "not both")


@pytest.mark.parametrize("limit", [-1, 0, "x", "1.5"])
def test_bad_limit_is_400(api, modis, limit):
    bad(search(api, limit=limit), "limit")
    bad(post(api, {"limit": limit}), "limit")


def test_limit_defaults_to_10_and_is_clamped(api, modis, monkeypatch):
    for i in range(12):
        make_granule(modis, f"G{i:02d}", at(1, i))
    assert len(ok(search(api))["features"]) == 10
    assert len(ok(search(api, limit=1000000))["features"]) == 12
    monkeypatch.setattr(stac_search, "MAX_LIMIT", 5)
    body = ok(search(api, limit=100000))
    assert len(body["features"]) == 5 and link(body, "next")
    assert len(ok(post(api, {"limit": 100000}))["features"]) == 5


def test_number_matched_is_not_counted(api, modis):
    make_granule(modis, "A", at(1))
    body = ok(search(api))
    assert "numberMatched" not in body and body["numberReturned"] == 1


@pytest.mark.parametrize("value, expected", [
    ("2024-03-02T00:02:00Z", {"B"}),
    ("2024-03-02t00:02:00z", {"B"}),
    ("2024-03-02T00:02:00.123456789Z", {"B"}),
    ("2024-03-02T00:02:00.5+00:00", {"B"}),
    ("2024-03-01T20:02:00-04:00", {"B"}),
    ("2024-03-02T00:00:00Z/2024-03-03T00:00:00Z", {"B", "C"}),
    ("2024-03-02T00:06:00Z/..", {"C"}),
    ("2024-03-02T00:06:00Z/", {"C"}),
    ("../2024-03-01T12:00:00Z", {"A"}),
    ("/2024-03-01T12:00:00Z", {"A"}),
    ("1985-04-12T23:20:50.52Z", set()),
])
def test_datetime_forms(api, modis, value, expected):
    make_granule(modis, "A", at(1))
    make_granule(modis, "B", at(2))
    make_granule(modis, "C", at(3))
    assert set(ids(ok(search(api, datetime=value)))) == expected
    assert set(ids(ok(post(api, {"datetime": value})))) == expected


@pytest.mark.parametrize("value, message", [
    ("/", "open at both ends"),
    ("../..", "open at both ends"),
    ("../", "open at both ends"),
    ("2024-03-01", "not an RFC 3339 date-time"),
    ("2024-03-01T00:00:00", "not an RFC 3339 date-time"),
    ("2024-03-01T00:00:00+0100", "not an RFC 3339 date-time"),
    ("2024-03-01T00:00:00,5Z", "not an RFC 3339 date-time"),
    ("2024-03-01T00:00:00.Z", "not an RFC 3339 date-time"),
    ("2024-13-01T00:00:00Z", "not a real date-time"),
    ("2024-02-30T00:00:00Z", "not a real date-time"),
    ("2024-03-01T25:00:00Z", "not a real date-time"),
    ("2024-03-01T00:00:61Z", "not a real date-time"),
    ("yesterday", "not an RFC 3339 date-time"),
    ("2024-03-02T00:00:00Z/2024-03-01T00:00:00Z", "ends before it starts"),
    ("/2024-03-01T00:00:00Z/2024-03-02T00:00:00Z", "one interval"),
])
def test_bad_datetimes_are_400_with_a_clear_message(api, modis, value, message):
    bad(search(api, datetime=value), message)
    bad(post(api, {"datetime": value}), message)


def test_bbox_search_including_antimeridian(api, modis):
    make_granule(modis, "EAST", at(1), box=(160, -5, 175, 5))
    make_granule(modis, "CROSS", at(2), box=(170, -5, -170, 5))
    make_granule(modis, "WEST", at(3), box=(-179.5, -5, -160, 5))
    make_granule(modis, "ORIGIN", at(4), box=(-10, -10, 10, 10))
    assert set(ids(ok(search(api, bbox="178,-1,-179,1")))) == {"CROSS", "WEST"}
    assert set(ids(ok(search(api, bbox="172,-1,174,1")))) == {"EAST", "CROSS"}
    assert set(ids(ok(search(api, bbox="-175,-1,-174,1")))) == {"CROSS", "WEST"}
    assert set(ids(ok(post(api, {"bbox": [179, -1, -179.5, 1]})))) == {"CROSS", "WEST"}
    assert set(ids(ok(search(api, bbox="0,0,0,1,1,1")))) == {"ORIGIN"}


@pytest.mark.parametrize("value, message", [
    ("[100.0, 0.0, 105.0, 1.0]", "values must be numbers"),
    ("100,1,105,0", "is north of north"),
    ("0,0,1", "needs four numbers"),
    ("0,0,0,1,1", "needs four numbers"),
    ("0,-91,1,1", "latitudes must lie"),
])
def test_bad_bbox_is_400(api, modis, value, message):
    bad(search(api, bbox=value), message)


def test_post_bbox_must_be_an_array(api, modis):
    bad(post(api, {"bbox": "100.0, 0.0, 105.0, 1.0"}), "bbox must be an array")
    bad(post(api, {"bbox": [0, 0, 0]}), "needs four numbers")


def test_intersects_is_answered_with_the_geometry_itself(api, modis):
    make_granule(modis, "IN", at(1), box=(100, 0, 101, 1))
    make_granule(modis, "OUT", at(2), box=(-50, -50, -40, -40))
    make_granule(modis, "CORNER", at(3), box=(100.7, 0.7, 101, 1))  # in the triangle's box only
    triangle = {"type": "Polygon", "coordinates": [
        [[100.2, 0.2], [100.8, 0.2], [100.5, 0.8], [100.2, 0.2]]]}
    point = {"type": "Point", "coordinates": [100.5, 0.5]}
    collection = {"type": "GeometryCollection", "geometries": [
        point, {"type": "LineString", "coordinates": [[-45, -45], [-44, -44]]}]}
    assert ids(ok(search(api, intersects=json.dumps(triangle)))) == ["IN"]
    assert ids(ok(post(api, {"intersects": point}))) == ["IN"]
    assert set(ids(ok(post(api, {"intersects": collection})))) == {"IN", "OUT"}
    bad(post(api, {"intersects": {"type": "Circle", "coordinates": [0, 0]}}), "unknown geometry")
    bad(post(api, {"intersects": {"type": "Polygon", "coordinates": [[0, 0]]}}), "malformed")
    bad(search(api, intersects="{not json"), "GeoJSON")


def test_ids_and_collections_filters_combine(api, modis, airs):
    make_granule(modis, "A", at(1))
    make_granule(modis, "B", at(2))
    make_granule(airs, "A", at(3), box=(50, 50, 60, 60))
    assert sorted(ids(ok(search(api, ids="A,B")))) == ["A", "A", "B"]
    body = ok(search(api, ids="A", collections="AIRS2RET.7.0"))
    assert [(f["id"], f["collection"]) for f in body["features"]] == [("A", "AIRS2RET.7.0")]
    assert ids(ok(search(api, ids="A", bbox="-5,-5,5,5", collections="AIRS2RET.7.0"))) == []
    assert ids(ok(post(api, {"collections": "AIRS2RET.7.0"}))) == ["A"]
    assert ids(ok(search(api, collections="NOPE.1"))) == []


# ------------------------------------------------------------------------------ sorting

@pytest.fixture
def three(modis, airs):
    make_granule(modis, "b", at(2))
    make_granule(airs, "a", at(3))
    make_granule(modis, "c", at(1))


def test_default_sort_is_newest_first(api, three):
    assert ids(ok(search(api))) == ["a", "b", "c"]


@pytest.mark.parametrize("sortby, expected", [
    ("datetime", ["c", "b", "a"]),
    ("+properties.datetime", ["c", "b", "a"]),
    ("-datetime", ["a", "b", "c"]),
    ("id", ["a", "b", "c"]),
    ("-id", ["c", "b", "a"]),
    ("collection,-datetime", ["a", "b", "c"]),
    ("-collection,+datetime", ["c", "b", "a"]),
])
def test_sortby_get(api, three, sortby, expected):
    assert ids(ok(search(api, sortby=sortby))) == expected


def test_sortby_plus_sent_unescaped_reads_as_ascending(api, three):
    assert ids(ok(api.get("/stac/search?sortby=+id"))) == ["a", "b", "c"]


@pytest.mark.parametrize("sortby, expected", [
    ([{"field": "properties.datetime", "direction": "desc"}], ["a", "b", "c"]),
    ([{"field": "properties.datetime", "direction": "asc"}], ["c", "b", "a"]),
    ([{"field": "id", "direction": "desc"}], ["c", "b", "a"]),
    ([{"field": "collection"}, {"field": "datetime", "direction": "desc"}], ["a", "b", "c"]),
])
def test_sortby_post(api, three, sortby, expected):
    assert ids(ok(post(api, {"sortby": sortby}))) == expected


def test_bad_sortby_is_400(api, three):
    bad(search(api, sortby="cloud_cover"), "sortable fields are")
    bad(post(api, {"sortby": [{"field": "id", "direction": "up"}]}), "'asc' or 'desc'")
    bad(post(api, {"sortby": {"field": "id"}}), "sortby must be a list")


# ------------------------------------------------------------------------------- paging

@pytest.fixture
def many(modis, airs):
    """23 granules, some sharing a start time, so the tie-breaker matters."""
    made = set()
    for i in range(23):
        granule = make_granule(modis if i % 3 else airs, f"G{i:02d}", at(1 + i // 4, i % 2))
        made.add((granule.collection.key, granule.granule_id))
    return made


@pytest.mark.parametrize("sortby", ["-datetime", "datetime", "id", "-collection,-id"])
def test_get_paging_visits_every_item_once(api, many, sortby):
    seen, url, pages, last = [], f"/stac/search?limit=5&sortby={sortby}", 0, None
    while url:
        last = ok(api.get(url))
        seen += [(f["collection"], f["id"]) for f in last["features"]]
        pages += 1
        following = link(last, "next")
        if following:
            assert following["method"] == "GET"
            assert following["type"] == "application/geo+json"
        url = following["href"] if following else None
    assert len(seen) == len(set(seen)) == len(many) and set(seen) == many
    assert pages == 5 and len(last["features"]) == 3 and link(last, "next") is None


def test_no_next_link_when_the_last_page_is_exactly_full(api, modis):
    for i in range(4):
        make_granule(modis, f"G{i}", at(1, i))
    first = ok(search(api, limit=2))
    second = ok(api.get(link(first, "next")["href"]))
    assert len(second["features"]) == 2 and link(second, "next") is None


def test_post_paging_merges_the_token_into_the_body(api, many):
    request = {"limit": 4, "collections": ["MOD021KM.061", "AIRS2RET.7.0"],
               "sortby": [{"field": "id", "direction": "asc"}]}
    seen, body, pages = [], dict(request), 0
    while True:
        page = ok(post(api, body))
        seen += ids(page)
        pages += 1
        following = link(page, "next")
        if following is None:
            break
        assert following["method"] == "POST" and following["merge"] is True
        assert following["href"] == ROOT + "search"
        assert set(following["body"]) == {"token"}
        body = {**request, **following["body"]}
    assert seen == sorted(g for _, g in many) and pages == 6


def test_paging_keeps_the_filters(api, many):
    url, seen = "/stac/search?limit=2&collections=AIRS2RET.7.0&datetime=2024-03-01T00:00:00Z/..", []
    while url:
        body = ok(api.get(url))
        seen += [f["collection"] for f in body["features"]]
        following = link(body, "next")
        url = following["href"] if following else None
    assert seen == ["AIRS2RET.7.0"] * 8


def test_bad_or_foreign_tokens_are_400(api, many):
    first = ok(search(api, limit=2, sortby="id"))
    token = link(first, "next")["href"].split("token=")[1]
    bad(search(api, limit=2, sortby="-id", token=token), "another sortby")
    bad(search(api, token="garbage!"), "token is not valid")
    bad(post(api, {"token": 42}), "token must be a string")


def test_a_page_costs_a_fixed_number_of_queries(api, many, django_assert_max_num_queries):
    with django_assert_max_num_queries(3):
        assert len(ok(search(api, limit=20))["features"]) == 20


# -------------------------------------------------------------------------------- CORS

def test_cors_on_responses_errors_and_preflight(api, modis):
    assert search(api)["Access-Control-Allow-Origin"] == "*"
    assert api.get("/stac/")["Access-Control-Allow-Origin"] == "*"
    assert search(api, limit=-1)["Access-Control-Allow-Origin"] == "*"
    assert api.get("/stac/collections/NOPE.1")["Access-Control-Allow-Origin"] == "*"
    preflight = api.options(
        "/stac/search", HTTP_ORIGIN="https://example.org",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type",
    )
    assert preflight.status_code in (200, 204)
    assert preflight["Access-Control-Allow-Origin"] == "*"
    assert "POST" in preflight["Access-Control-Allow-Methods"]
    assert "Content-Type" in preflight["Access-Control-Allow-Headers"]


def test_unknown_stac_path_is_a_json_404_not_the_web_app(api):
    response = api.get("/stac/nothing-here")
    assert response.status_code == 404
    assert "no STAC endpoint" in response.json()["detail"]
    assert response["Access-Control-Allow-Origin"] == "*"
