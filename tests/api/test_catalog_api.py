"""The catalog read API: visibility by role, filters, paging, and clear 400s for bad input."""
import itertools
from datetime import UTC, datetime

import pytest

from backend.catalog.geo import BBox
from backend.catalog.models import Collection, Granule
from tests.factories import CollectionFactory, FileFactory, GranuleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def public():
    return CollectionFactory(short_name="MOD021KM", version="061")


@pytest.fixture
def restricted():
    return CollectionFactory(short_name="AIRS2RET_NRT", version="7.0",
                             access=Collection.Access.RESTRICTED)


def keys(response):
    assert response.status_code == 200, response.content
    return [c["key"] for c in response.json()["results"]]


def test_anonymous_sees_public_collections_only(api, public, restricted):
    assert keys(api.get("/api/v1/collections/")) == ["MOD021KM.061"]
    assert api.get("/api/v1/collections/AIRS2RET_NRT.7.0/").status_code == 404


def test_approved_user_and_operator_see_restricted(user_api, operator_api, public, restricted):
    assert keys(user_api.get("/api/v1/collections/")) == ["MOD021KM.061"]
    restricted.approved_users.add(user_api.user)
    assert keys(user_api.get("/api/v1/collections/")) == ["AIRS2RET_NRT.7.0", "MOD021KM.061"]
    assert keys(operator_api.get("/api/v1/collections/")) == ["AIRS2RET_NRT.7.0", "MOD021KM.061"]


def test_collection_by_key_with_dotted_version(api):
    CollectionFactory(short_name="GHRSST_OISST_L4", version="2.1", title="SST")
    response = api.get("/api/v1/collections/GHRSST_OISST_L4.2.1/")
    assert response.status_code == 200
    assert response.json()["version"] == "2.1"


def test_collection_counts_archived_granules_only(api, public):
    GranuleFactory.create_batch(3, collection=public)
    GranuleFactory(collection=public, state=Granule.State.ARCHIVING)
    assert api.get("/api/v1/collections/MOD021KM.061/").json()["granule_count"] == 3


def test_collection_counts_follow_state_changes_bulk_updates_and_deletes(api, public):
    """The list's counts (trigger-kept on PostgreSQL) equal the archived granules counted one by
    one after every kind of write: creates, a bulk state update, a move, a delete."""
    other = CollectionFactory(short_name="MOD10C1", version="061")
    made = GranuleFactory.create_batch(6, collection=public) + GranuleFactory.create_batch(
        2, collection=other)

    def listed():
        return {c["key"]: c["granule_count"] for c in api.get("/api/v1/collections/").json()[
            "results"]}

    def by_hand():
        return {c.key: sum(1 for g in Granule.objects.filter(collection=c)
                           if g.state == Granule.State.ARCHIVED)
                for c in Collection.objects.all()}

    assert listed() == by_hand() == {"MOD021KM.061": 6, "MOD10C1.061": 2}
    Granule.objects.filter(pk__in=[g.pk for g in made[:2]]).update(
        state=Granule.State.WITHDRAWN)
    Granule.objects.filter(pk=made[2].pk).update(collection=other)
    made[3].delete()
    assert listed() == by_hand() == {"MOD021KM.061": 2, "MOD10C1.061": 3}


def test_collection_free_text(api, public):
    CollectionFactory(short_name="MOD10C1", title="Snow Cover Daily L3 Global")
    assert keys(api.get("/api/v1/collections/?q=snow")) == ["MOD10C1.061"]


def test_granules_hide_restricted_and_unarchived(api, public, restricted):
    visible = GranuleFactory(collection=public)
    GranuleFactory(collection=public, state=Granule.State.ARCHIVING)
    GranuleFactory(collection=restricted)
    ids = [g["granule_id"] for g in api.get("/api/v1/granules/").json()["results"]]
    assert ids == [visible.granule_id]


def test_granule_shows_files_and_bbox(api, public):
    granule = GranuleFactory(collection=public, west=170, south=-5, east=-170, north=5)
    FileFactory(granule=granule, name="a.hdf", size=123)
    body = api.get(f"/api/v1/granules/{granule.pk}/").json()
    assert body["collection"] == "MOD021KM.061"
    assert body["bbox"] == [170, -5, -170, 5]
    assert [(f["name"], f["size"]) for f in body["files"]] == [("a.hdf", 123)]


def test_filter_by_collection_key(api, public):
    other = CollectionFactory()
    mine = GranuleFactory(collection=public)
    GranuleFactory(collection=other)
    results = api.get("/api/v1/granules/?collection=MOD021KM.061").json()["results"]
    assert [g["id"] for g in results] == [mine.pk]


def test_temporal_overlap(api, public):
    def at(day, hour=0):
        return datetime(2024, 3, day, hour, tzinfo=UTC)

    early = GranuleFactory(collection=public, temporal_start=at(1), temporal_end=at(1, 5))
    spans = GranuleFactory(collection=public, temporal_start=at(1, 22), temporal_end=at(2, 2))
    late = GranuleFactory(collection=public, temporal_start=at(3), temporal_end=at(3, 5))

    def found(query):
        return {g["id"] for g in api.get(f"/api/v1/granules/?{query}").json()["results"]}

    assert found("start=2024-03-02&end=2024-03-02") == {spans.pk}
    assert found("start=2024-03-02T03:00:00Z") == {late.pk}
    assert found("end=2024-03-01T12:00:00Z") == {early.pk}
    assert found("end=2024-03-01T23:00:00Z") == {early.pk, spans.pk}


BOXES = [
    (-10, -10, 10, 10), (100, 20, 120, 40), (170, -10, -170, 10), (175, 50, -175, 60),
    (-180, -90, 180, 90), (-179, -5, -171, 5), (160, -20, 179, 20), (-30, 60, -20, 70),
]


def test_bbox_filter_agrees_with_geometry_including_antimeridian(api, public):
    """The SQL filter finds exactly the footprints the pure geometry says intersect."""
    granules = {GranuleFactory(collection=public, west=w, south=s, east=e, north=n).pk: (w, s, e, n)
                for w, s, e, n in BOXES}
    for query in itertools.chain(BOXES, [(179, -1, -179, 1), (0, 80, 1, 81)]):
        text = ",".join(str(v) for v in query)
        response = api.get(f"/api/v1/granules/?bbox={text}&limit=100")
        found = {g["id"] for g in response.json()["results"]}
        expected = {pk for pk, box in granules.items() if BBox(*box).intersects(BBox(*query))}
        assert found == expected, f"bbox={text}"


def test_attribute_filters(api, public):
    day_clear = GranuleFactory(collection=public, attributes={"day_night": "Day", "cloud_cover": 5})
    GranuleFactory(collection=public, attributes={"day_night": "Night", "cloud_cover": 5})
    GranuleFactory(collection=public, attributes={"day_night": "Day", "cloud_cover": 80})
    results = api.get("/api/v1/granules/?attr.day_night=Day&attr.cloud_cover.lt=20").json()
    assert [g["id"] for g in results["results"]] == [day_clear.pk]


def test_cursor_paging_visits_every_granule_once(api, public):
    made = {g.pk for g in GranuleFactory.create_batch(23, collection=public)}
    seen, url = [], "/api/v1/granules/?limit=10"
    while url:
        body = api.get(url).json()
        seen += [g["id"] for g in body["results"]]
        url = body["next"]
    assert sorted(seen) == sorted(made)


def test_ordering_by_size(api, public):
    small = GranuleFactory(collection=public, total_size=1)
    big = GranuleFactory(collection=public, total_size=100)
    results = api.get("/api/v1/granules/?ordering=-total_size").json()["results"]
    assert [g["id"] for g in results] == [big.pk, small.pk]


@pytest.mark.parametrize("query, message", [
    ("bbox=1,2,3", "bbox: needs four numbers"),
    ("bbox=0,50,10,10", "bbox: south (50) is north of north (10)"),
    ("bbox=x,1,2,3", "bbox: values must be numbers"),
    ("start=yesterday", "start: 'yesterday' is not an ISO 8601 date"),
    ("start=2024-13-45", "start: '2024-13-45' is not a valid date"),
    ("end=2024-02-30T10:00:00Z", "end: '2024-02-30T10:00:00Z' is not a valid date"),
    ("start=2024-03-02&end=2024-03-01", "end: 2024-03-01 is before start 2024-03-02"),
    ("collection=NOPE.1", "collection: unknown collection NOPE.1"),
    ("collection=NOPE", "must look like SHORT.VERSION"),
    ("attr.cloud_cover.lt=abc", "'abc' is not a number"),
    ("attr.cloud_cover.near=3", "OP one of eq, ne, lt"),
    ("state=lost", "state: Select a valid choice"),
    ("intersects={not json", "GeoJSON geometry in JSON"),
    ('intersects={"type": "Polygon", "coordinates": [[[0,0],[1,0],[1,1],[0,1]]]}', "not closed"),
    ('intersects={"type": "Polygon", "coordinates": [[[0,0],[1,1],[1,0],[0,1],[0,0]]]}',
     "Self-intersection"),
    ('intersects={"type": "Circle"}', "unknown geometry type"),
    ('intersects={"type": "Point", "coordinates": [0, 95]}', "latitude 95"),
    ('bbox=0,0,1,1&intersects={"type": "Point", "coordinates": [0, 0]}', "not both"),
])
def test_bad_filters_are_400_with_a_clear_message(api, public, query, message):
    response = api.get(f"/api/v1/granules/?{query}")
    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_restricted_collection_filter_is_unknown_to_anonymous(api, restricted):
    response = api.get("/api/v1/granules/?collection=AIRS2RET_NRT.7.0")
    assert response.status_code == 400
    assert "unknown collection AIRS2RET_NRT.7.0" in response.json()["detail"]


def _cache(file, state):
    from django.utils import timezone

    from backend.archive.models import CacheEntry

    CacheEntry.objects.create(file=file, state=state, size=file.size, last_access=timezone.now())


def test_residency_field_and_filter(api, public):
    from backend.archive.models import CacheEntry

    cached = GranuleFactory(collection=public)
    for name, state in (("a.hdf", CacheEntry.State.CLEAN), ("a.met", CacheEntry.State.DIRTY),
                        ("a.jpg", CacheEntry.State.PINNED)):
        _cache(FileFactory(granule=cached, name=name), state)
    partly = GranuleFactory(collection=public)
    _cache(FileFactory(granule=partly, name="b.hdf"), CacheEntry.State.CLEAN)
    FileFactory(granule=partly, name="b.met")
    arriving = GranuleFactory(collection=public)
    _cache(FileFactory(granule=arriving, name="c.hdf"), CacheEntry.State.STAGING)
    on_tape = GranuleFactory(collection=public)
    FileFactory(granule=on_tape, name="d.hdf")

    def residency(query=""):
        body = api.get(f"/api/v1/granules/?{query}").json()
        return {g["id"]: g["residency"] for g in body["results"]}

    assert residency() == {cached.pk: "cache", partly.pk: "tape", arriving.pk: "tape",
                           on_tape.pk: "tape"}
    assert residency("residency=cache") == {cached.pk: "cache"}
    assert set(residency("residency=tape")) == {partly.pk, arriving.pk, on_tape.pk}
    assert api.get(f"/api/v1/granules/{cached.pk}/").json()["residency"] == "cache"
    response = api.get("/api/v1/granules/?residency=disk")
    assert response.status_code == 400
    assert "residency: Select a valid choice" in response.json()["detail"]


def test_facets_count_the_filtered_granules(api, public, restricted):
    aqua = CollectionFactory(short_name="AIRS2RET", version="7.0", processing_level="2",
                             platform="Aqua", instrument="AIRS")
    snow = CollectionFactory(short_name="MOD10C1", processing_level="3", platform="",
                             instrument="MODIS")
    GranuleFactory.create_batch(3, collection=public)
    GranuleFactory.create_batch(2, collection=aqua)
    GranuleFactory(collection=snow)
    GranuleFactory(collection=snow, west=100, east=110)
    GranuleFactory(collection=public, state=Granule.State.ARCHIVING)
    GranuleFactory.create_batch(4, collection=restricted)

    body = api.get("/api/v1/granules/facets/").json()
    assert body == {
        "collection": [{"value": "MOD021KM.061", "count": 3},
                       {"value": "AIRS2RET.7.0", "count": 2},
                       {"value": "MOD10C1.061", "count": 2}],
        "processing_level": [{"value": "2", "count": 5}, {"value": "3", "count": 2}],
        "platform": [{"value": "Terra", "count": 3}, {"value": "Aqua", "count": 2}],
        "instrument": [{"value": "MODIS", "count": 5}, {"value": "AIRS", "count": 2}],
    }
    level3 = api.get("/api/v1/granules/facets/?processing_level=3").json()
    assert level3["collection"] == [{"value": "MOD10C1.061", "count": 2}]
    assert level3["instrument"] == [{"value": "MODIS", "count": 2}]
    terra = api.get("/api/v1/granules/facets/?platform=terra&bbox=-5,-5,5,5").json()
    assert terra["collection"] == [{"value": "MOD021KM.061", "count": 3}]
    aqua_list = api.get("/api/v1/granules/?instrument=AIRS").json()["results"]
    assert {g["collection"] for g in aqua_list} == {"AIRS2RET.7.0"}
    narrow = api.get("/api/v1/granules/facets/?bbox=101,-5,102,5").json()
    assert narrow["collection"] == [{"value": "MOD10C1.061", "count": 1}]
    assert narrow["platform"] == []
    assert api.get("/api/v1/granules/facets/?bbox=1,2,3").status_code == 400


def test_facets_are_one_query_per_facet(api, public, django_assert_max_num_queries):
    GranuleFactory.create_batch(5, collection=public)
    with django_assert_max_num_queries(4):
        assert api.get("/api/v1/granules/facets/").status_code == 200
