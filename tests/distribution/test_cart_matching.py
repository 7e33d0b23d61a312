"""Adding every granule a search finds to the cart: exactly what the list shows for the same
filters (checked by walking the list), within the order limits, all or nothing, and a clear
400 for bad input or too many."""
from datetime import UTC, datetime, timedelta

import pytest

from backend.catalog.models import Collection, Granule
from distribution.models import CartItem
from tests.factories import CollectionFactory, GranuleFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/cart/matching/"


@pytest.fixture
def catalog():
    modis = CollectionFactory(short_name="MOD021KM", version="061")
    snow = CollectionFactory(short_name="MOD10C1", version="061")
    secret = CollectionFactory(short_name="AIRS2RET_NRT", version="7.0",
                               access=Collection.Access.RESTRICTED)
    base = datetime(2024, 3, 1, tzinfo=UTC)
    for n in range(30):
        for collection in (modis, snow, secret):
            GranuleFactory(collection=collection, temporal_start=base + timedelta(hours=3 * n),
                           temporal_end=base + timedelta(hours=3 * n, minutes=5),
                           total_size=1000, attributes={"cloud_cover": n % 10})
    GranuleFactory(collection=modis, state=Granule.State.ARCHIVING, temporal_start=base,
                   temporal_end=base)
    return modis


def listed(api, query):
    """The ids the granule list shows for `query`, every page."""
    ids, url = set(), f"/api/v1/granules/?{query}&limit=500"
    while url:
        body = api.get(url).json()
        ids |= {g["id"] for g in body["results"]}
        url = body["next"]
    return ids


def cart_ids(user):
    return set(CartItem.objects.filter(user=user).values_list("granule_id", flat=True))


FILTERS = {"collection": "MOD021KM.061", "start": "2024-03-02", "end": "2024-03-03",
           "attr.cloud_cover.lt": "5"}


def test_adds_exactly_what_the_list_finds(user_api, catalog):
    query = "&".join(f"{k}={v}" for k, v in FILTERS.items())
    expected = listed(user_api, query)
    assert 0 < len(expected) < 30
    body = user_api.post(URL, {"filters": FILTERS}, format="json").json()
    assert (body["matched"], body["added"]) == (len(expected), len(expected))
    assert cart_ids(user_api.user) == expected
    assert {g["granule"] for g in body["cart"]["granules"]} == expected
    # again: nothing new, nothing twice
    again = user_api.post(URL, {"filters": FILTERS}, format="json").json()
    assert (again["matched"], again["added"]) == (len(expected), 0)
    assert CartItem.objects.filter(user=user_api.user).count() == len(expected)


def test_only_what_the_user_may_order(user_api, catalog):
    body = user_api.post(URL, {"filters": {}}, format="json").json()
    visible = listed(user_api, "state=archived")
    assert body["matched"] == 60 and cart_ids(user_api.user) == visible
    assert not Granule.objects.filter(pk__in=visible, collection__access="restricted").exists()


def test_over_the_granule_limit_adds_nothing_and_says_why(user_api, catalog, settings):
    settings.GRANARY_ORDER_MAX_GRANULES = 40
    GranuleFactory(collection=catalog)  # one already in the cart counts too
    user_api.post("/api/v1/cart/", {"granules": [Granule.objects.latest("pk").pk]},
                  format="json")
    before = cart_ids(user_api.user)
    answer = user_api.post(URL, {"filters": {"collection": "MOD021KM.061,MOD10C1.061"}},
                           format="json")
    assert answer.status_code == 400
    detail = answer.json()["detail"]
    assert "61 granules match this search" in detail
    assert "makes 61" in detail and "limit of 40 granules" in detail
    assert cart_ids(user_api.user) == before


def test_over_the_byte_limit_adds_nothing(user_api, catalog, settings):
    settings.GRANARY_ORDER_MAX_GB = 20_000 / 1e9
    answer = user_api.post(URL, {"filters": {"collection": "MOD021KM.061"}}, format="json")
    assert answer.status_code == 400
    assert "limit of 2e-05 GB" in answer.json()["detail"]
    assert cart_ids(user_api.user) == set()


@pytest.mark.parametrize("body, message", [
    ({"filters": {"colection": "MOD021KM.061"}}, "unknown filter colection"),
    ({"filters": {"start": "yesterday"}}, "not an ISO 8601 date"),
    ({"filters": {"collection": "AIRS2RET_NRT.7.0"}}, "unknown collection AIRS2RET_NRT.7.0"),
    ({"filters": {"bbox": "1,2,3"}}, "needs four numbers"),
    ({"filters": {"attr.cloud_cover.lt": "many"}}, "'many' is not a number"),
    ({"filters": {"granule_id": ["a", "b"]}}, "Not a valid string"),
    ({"filters": {"granule_id": {"a": 1}}}, "Not a valid string"),
    ({"filters": {"granule_id": "x" * 2001}}, "no more than 2000 characters"),
    ({"filters": {f"attr.a{n}": "1" for n in range(51)}}, "at most 50 filters"),
    ({"filters": "collection=MOD021KM.061"}, "Expected a dictionary"),
    ({"filters": None}, "may not be null"),
    ({}, "This field is required"),
    (["filters"], "Invalid data"),
])
def test_bad_input_is_a_clear_400_and_adds_nothing(user_api, catalog, body, message):
    answer = user_api.post(URL, body, format="json")
    assert answer.status_code == 400, answer.content
    assert message in str(answer.json()), answer.json()
    assert cart_ids(user_api.user) == set()


def test_anonymous_must_log_in(api, catalog):
    assert api.post(URL, {"filters": {}}, format="json").status_code == 401
