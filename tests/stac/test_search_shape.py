"""The shape of a search that keeps it fast at scale must not change what it finds: named
collections searched one by one and merged, and a window's start bounding temporal_start by
the longest granule of each collection."""
from datetime import timedelta

import pytest

from backend.catalog.models import Granule
from tests.factories import CollectionFactory, GranuleFactory

from .builders import at, make_granule

pytestmark = pytest.mark.django_db


def collect(api, first_url=None, body=None):
    """Every (collection, id) over all pages, GET links or POST bodies."""
    seen, url = [], first_url
    while True:
        if body is not None:
            page = api.post("/stac/search", body, format="json")
        else:
            page = api.get(url)
        assert page.status_code == 200, page.content
        page = page.json()
        seen += [(f["collection"], f["id"]) for f in page["features"]]
        following = next((x for x in page["links"] if x["rel"] == "next"), None)
        if following is None:
            return seen
        if following["method"] == "POST":
            body = {**body, **following["body"]}
        else:
            url = following["href"]


@pytest.fixture
def three_collections():
    """Three collections with granules interleaved in time, several sharing a start time
    across collections (so the tie-breaker decides between them)."""
    made = [CollectionFactory(short_name=name, version="1") for name in ("AAA", "BBB", "CCC")]
    for i in range(30):
        make_granule(made[i % 3], f"G{i:02d}", at(1 + i // 6, i % 2))
    return made


def expected(collections, descending=True, **filters):
    rows = Granule.objects.filter(collection__in=collections, **filters)
    keys = ["-temporal_start", "-pk"] if descending else ["temporal_start", "pk"]
    return [(g.collection.key, g.granule_id) for g in rows.order_by(*keys)]


@pytest.mark.parametrize("sortby", ["-datetime", "+datetime"])
def test_two_named_collections_page_in_one_order_with_ties(api, three_collections, sortby):
    first, second, _ = three_collections
    want = expected([first, second], descending=sortby.startswith("-"))
    got = collect(api, f"/stac/search?limit=4&collections=AAA.1,BBB.1&sortby={sortby}")
    assert got == want and len(want) == 20
    direction = "desc" if sortby.startswith("-") else "asc"
    body = {"collections": ["AAA.1", "BBB.1"], "limit": 3,
            "sortby": [{"field": "datetime", "direction": direction}]}
    assert collect(api, body=body) == want


def test_merged_collections_keep_the_window_and_box(api, three_collections):
    first, _, third = three_collections
    make_granule(third, "FAR", at(3), box=(100, 40, 120, 50))
    window = "2024-03-02T00:00:00Z/2024-03-04T00:00:00Z"
    got = collect(api, f"/stac/search?limit=2&collections=AAA.1,CCC.1&datetime={window}"
                       "&bbox=-20,-20,20,20")
    want = [pair for pair in expected([first, third], temporal_start__lte=at(4),
                                      temporal_end__gte=at(2)) if pair[1] != "FAR"]
    assert got == want and len(want) == 10


def test_a_long_granule_that_began_before_the_window_is_found(api):
    daily, monthly = (CollectionFactory(short_name=name, version="1")
                      for name in ("DAILY", "MONTHLY"))
    for day in range(1, 29):
        make_granule(daily, f"D{day:02d}", at(day))
    GranuleFactory(collection=monthly, granule_id="MARCH", temporal_start=at(1),
                   temporal_end=at(1) + timedelta(days=30))
    window = "2024-03-20T00:00:00Z/2024-03-21T00:00:00Z"
    days = [("DAILY.1", "D21"), ("DAILY.1", "D20")]
    for collections, want in (("MONTHLY.1", []), ("DAILY.1,MONTHLY.1", days), ("", days)):
        found = collect(api, f"/stac/search?datetime={window}&collections={collections}")
        assert found == [*want, ("MONTHLY.1", "MARCH")]
    instant = collect(api, "/stac/search?datetime=2024-03-29T12:00:00Z&collections=MONTHLY.1")
    assert instant == [("MONTHLY.1", "MARCH")]
    assert collect(api, "/stac/search?datetime=2024-03-31T00:00:01Z/..") == []


def test_collections_without_granules_or_unknown_give_an_empty_page(api):
    CollectionFactory(short_name="EMPTY", version="1")
    for collections in ("EMPTY.1", "EMPTY.1,NOPE.1", "NOPE.1"):
        body = api.get(f"/stac/search?collections={collections}").json()
        assert body["features"] == [] and body["numberReturned"] == 0
        assert not [x for x in body["links"] if x["rel"] == "next"]
