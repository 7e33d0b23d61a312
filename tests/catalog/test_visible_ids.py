"""A search reads the collections its caller sees once per request, by id, not as a subquery
compiled into each of its statements (backend.catalog.services.visible_collection_ids); what
each caller sees is what it saw before, and an approval counts from the next request."""
from datetime import UTC, datetime

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from backend.catalog.models import Collection, Granule
from tests.factories import CollectionFactory, GranuleFactory, UserFactory

pytestmark = pytest.mark.django_db

SEARCH = {"start": "2024-01-01", "end": "2024-12-31", "include": "facets,timeline"}


@pytest.fixture
def catalog():
    restricted = CollectionFactory(short_name="SECRET", version="1",
                                   access=Collection.Access.RESTRICTED)
    public = CollectionFactory(short_name="OPEN", version="1")
    for collection, n in ((restricted, 3), (public, 2)):
        for day in range(1, n + 1):
            GranuleFactory(collection=collection, state=Granule.State.ARCHIVED,
                           temporal_start=datetime(2024, 3, day, tzinfo=UTC),
                           temporal_end=datetime(2024, 3, day, 1, tzinfo=UTC))
    return restricted, public


def _ids(response):
    assert response.status_code == 200, response.content[:300]
    return sorted(g["collection"] for g in response.json()["results"])


def test_the_search_page_reads_the_visible_collections_once(user_api, catalog):
    with CaptureQueriesContext(connection) as queries:
        response = user_api.get("/api/v1/granules/", {**SEARCH, "collection": "OPEN.1"})
    assert _ids(response) == ["OPEN.1", "OPEN.1"]
    # the approvals table is where visibility is decided: one statement reads it
    assert [q["sql"].count("approved_users") > 0 for q in queries.captured_queries].count(
        True) == 1
    facets = response.json()["facets"]
    assert {c["value"]: c["count"] for c in facets["collection"]} == {"OPEN.1": 2}


def test_each_caller_sees_what_it_may_and_an_approval_counts_from_the_next_request(
        user_api, operator_api, api, catalog):
    restricted, _ = catalog
    assert _ids(user_api.get("/api/v1/granules/", SEARCH)) == ["OPEN.1"] * 2
    assert _ids(api.get("/api/v1/granules/", SEARCH)) == ["OPEN.1"] * 2
    assert _ids(operator_api.get("/api/v1/granules/", SEARCH)) == ["OPEN.1"] * 2 + [
        "SECRET.1"] * 3
    refused = user_api.get("/api/v1/granules/", {**SEARCH, "collection": "SECRET.1"})
    assert refused.status_code == 400 and "SECRET.1" in refused.content.decode()
    restricted.approved_users.add(user_api.user)
    assert _ids(user_api.get("/api/v1/granules/", {**SEARCH, "collection": "SECRET.1"})) == [
        "SECRET.1"] * 3
    assert _ids(user_api.get("/api/v1/granules/", SEARCH)) == ["OPEN.1"] * 2 + ["SECRET.1"] * 3
    other = UserFactory()
    user_api.force_authenticate(other)       # the same client, another user: not the first's
    assert _ids(user_api.get("/api/v1/granules/", SEARCH)) == ["OPEN.1"] * 2


@pytest.mark.parametrize("key, said", [
    ("OPEN", "collection key 'OPEN' must look like SHORT.VERSION"),
    ("OPEN.2", "unknown collection OPEN.2"),
    ("SECRET.1", "unknown collection SECRET.1"),       # not the caller's: as unknown
    ("open.1", "unknown collection open.1"),           # keys are exact, as the database's
])
def test_a_named_collection_the_caller_does_not_see_is_a_400_that_says_which(
        user_api, catalog, key, said):
    response = user_api.get("/api/v1/granules/", {**SEARCH, "collection": f"OPEN.1,{key}"})
    assert response.status_code == 400
    assert said in response.json()["detail"]


def test_a_version_may_hold_dots(user_api, catalog):
    dotted = CollectionFactory(short_name="AIRS2RET_NRT", version="7.0")
    GranuleFactory(collection=dotted, state=Granule.State.ARCHIVED,
                   temporal_start=datetime(2024, 3, 9, tzinfo=UTC),
                   temporal_end=datetime(2024, 3, 9, 1, tzinfo=UTC))
    response = user_api.get("/api/v1/granules/", {**SEARCH, "collection": "AIRS2RET_NRT.7.0"})
    assert _ids(response) == ["AIRS2RET_NRT.7.0"]


def _brute_facets(granules):
    """The facets worked out from granule objects, one by one: {facet: {value: count}}."""
    out = {"collection": {}, "platform": {}, "instrument": {}, "processing_level": {}}
    for g in granules:
        c = g.collection
        for facet, value in (("collection", f"{c.short_name}.{c.version}"),
                             ("platform", c.platform), ("instrument", c.instrument),
                             ("processing_level", c.processing_level)):
            if value:
                out[facet][value] = out[facet].get(value, 0) + 1
    return out


def _facets(response, inside="facets"):
    assert response.status_code == 200, response.content[:300]
    body = response.json()
    return {facet: {row["value"]: row["count"] for row in rows}
            for facet, rows in (body[inside] if inside else body).items()
            if facet != "counts_exact"}


@pytest.mark.parametrize("box", [None, "-180,-90,180,90"])
def test_the_facets_take_the_collections_fields_from_the_visibility_read(
        user_api, operator_api, catalog, box):
    restricted, public = catalog
    other = CollectionFactory(short_name="AQUA", version="2", platform="Aqua",
                              instrument="AIRS", processing_level="")
    for day in (4, 5):
        GranuleFactory(collection=other, state=Granule.State.ARCHIVED,
                       temporal_start=datetime(2024, 3, day, tzinfo=UTC),
                       temporal_end=datetime(2024, 3, day, 1, tzinfo=UTC))
    search = {**SEARCH, "collection": "AQUA.2"} | ({"bbox": box} if box else {})
    with CaptureQueriesContext(connection) as queries:
        response = user_api.get("/api/v1/granules/", search)
    seen = Granule.objects.exclude(collection=restricted).select_related("collection")
    assert _facets(response) == _brute_facets(seen)     # facets leave the collection out
    # no statement reads the counted collections' fields: the visibility's read brought them
    # (on SQLite the collections' spans are read from the collections too, with their granules)
    assert [q["sql"] for q in queries.captured_queries
            if 'FROM "catalog_collection"' in q["sql"] and "approved_users" not in q["sql"]
            and "catalog_granule" not in q["sql"]] == []
    # an operator reads no visibility: the facets read the collections they count
    assert _facets(operator_api.get("/api/v1/granules/", search)) == _brute_facets(
        Granule.objects.select_related("collection"))
    counted = user_api.get("/api/v1/granules/facets/", {"start": "2024-01-01"})
    assert _facets(counted, inside=None) == _brute_facets(seen)


def test_the_visibility_read_brings_every_field_a_facet_shows():
    from backend.catalog import services, visibility

    shown = {field.removeprefix("collection__") for fields in services.FACETS.values()
             for field in fields}
    assert shown <= set(visibility.FACET_FIELDS)


def test_the_visibility_read_built_once_serves_each_caller_its_own(catalog, monkeypatch):
    """The read is compiled once per connection (backend.fixed_reads) and each caller's id
    goes to both of its places: the approvals and the providers' members."""
    from rest_framework.test import APIClient

    from backend.catalog import visibility
    from tests.factories import ProviderFactory

    restricted, _ = catalog
    built = []
    build = visibility._SIGNED_IN_SEES.build
    monkeypatch.setattr(visibility._SIGNED_IN_SEES, "build",
                        lambda user_id: built.append(user_id) or build(user_id))
    connections["default"].__dict__.pop("_fixed_reads", None)
    approved, member, neither = UserFactory(), UserFactory(), UserFactory()
    restricted.approved_users.add(approved)
    ProviderFactory(name="HOLDS").collections.add(restricted)
    restricted.providers.get().members.add(member)
    expected = {approved: ["OPEN.1"] * 2 + ["SECRET.1"] * 3,
                member: ["OPEN.1"] * 2 + ["SECRET.1"] * 3, neither: ["OPEN.1"] * 2}
    client = APIClient()
    for _ in range(2):
        for user in (neither, approved, member, neither):
            client.force_authenticate(user)
            assert _ids(client.get("/api/v1/granules/", SEARCH)) == expected[user]
    assert len(built) == 1


@pytest.mark.parametrize("who", ["user", "operator"])
def test_a_search_page_builds_what_its_caller_sees_once(
        user_api, operator_api, catalog, monkeypatch, who):
    """The list, the facets and the timeline of one request share one queryset of the visible
    granules; the next request builds its own (an approval counts at once)."""
    from backend.catalog import visibility

    builds = []
    real = visibility.Granule

    class Counting:
        class objects:   # noqa: N801 - stands in for the manager
            @staticmethod
            def select_related(*fields):
                builds.append(fields)
                return real.objects.select_related(*fields)

        State = real.State

    monkeypatch.setattr(visibility, "Granule", Counting)
    client = user_api if who == "user" else operator_api
    for n in (1, 2):
        assert _ids(client.get("/api/v1/granules/", SEARCH)) == (
            ["OPEN.1"] * 2 + (["SECRET.1"] * 3 if who == "operator" else []))
        assert len(builds) == n
