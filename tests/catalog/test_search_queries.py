"""The search page's one request (include=facets,timeline) reads what it must and nothing per
row or per check (issue #33). Counted, not timed: the number is what the request has to read.

A signed-in portal request: 1 query for the session with its user and roles
(accounts.sessions). Anyone but an operator: 1 read of the ids of the collections the caller
sees, kept for the request (catalog.services.visible_collection_ids), which each statement then
names instead of compiling the visibility subquery again, with their keys, so the collections
a search names are found there (an operator's are looked up, one read per key), and with
the fields the facets show. The facets: 1 GROUP BY collection, and for an operator 1 read of
those collections' fields. The timeline: 1 for its span,
1 GROUP BY bucket. The page: 1 for its granules (their collections joined) and 1 for their
files. A shape adds the candidates' read (id and collection, shared by facets, timeline and
page) and 1 exact test per chunk of candidates."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from backend.accounts import roles
from tests.catalog.test_search_summary import world  # noqa: F401 - the fixture
from tests.factories import UserFactory

SESSION, TIMELINE, PAGE = 1, 2, 2
FACET_COUNT = 1                         # a shape's facets are counted from its candidates
CANDIDATES, EXACT_TEST = 1, 1           # 60 granules: one chunk
VISIBLE = {roles.USER: 1, roles.OPERATOR: 0, None: 1}
# the collections' facet fields: read with the visible ones, or on their own by an operator
FACET_COLLECTIONS = {roles.USER: 0, roles.OPERATOR: 1, None: 0}
BY_KEY = {roles.USER: 0, roles.OPERATOR: 1, None: 0}   # a read per collection named


def signed_in(role):
    user = UserFactory(role=role)
    client = APIClient()
    assert client.login(username=user.username, password="pw-for-tests")
    return client


def counted(client, params):
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/v1/granules/", {**params, "include": "facets,timeline"})
    assert response.status_code == 200, response.content
    return len(queries.captured_queries), response.json()


@pytest.mark.parametrize("role", [roles.USER, roles.OPERATOR])
@pytest.mark.parametrize("limit", [10, 50])
def test_a_search_page_reads_what_it_must(world, role, limit):  # noqa: F811
    n, body = counted(signed_in(role), {"limit": limit})
    assert len(body["results"]) == limit
    assert n == (SESSION + VISIBLE[role] + FACET_COUNT + FACET_COLLECTIONS[role] + TIMELINE
                 + PAGE)


@pytest.mark.parametrize("limit", [10, 50])
def test_a_shape_search_adds_its_candidates_and_their_test(world, limit):  # noqa: F811
    n, body = counted(signed_in(roles.USER), {"limit": limit, "bbox": "150,-40,-160,40"})
    assert body["results"] and body["facets"]["counts_exact"] is True
    assert n == (SESSION + VISIBLE[roles.USER] + CANDIDATES + EXACT_TEST
                 + FACET_COLLECTIONS[roles.USER] + TIMELINE + PAGE)


def test_an_anonymous_search_reads_no_session(world):  # noqa: F811
    n, _ = counted(APIClient(), {"limit": 10})
    assert n == VISIBLE[None] + FACET_COUNT + FACET_COLLECTIONS[None] + TIMELINE + PAGE


@pytest.mark.parametrize("role", [roles.USER, roles.OPERATOR])
def test_a_search_for_named_collections_finds_them_among_those_read_once(world, role):  # noqa: F811
    """Its facets count all three collections, its page only the two named: the candidates
    are read once for each."""
    n, body = counted(signed_in(role), {"limit": 10, "bbox": "150,-40,-160,40",
                                        "collection": "SWATH.1,GRID.1"})
    assert {g["collection"] for g in body["results"]} == {"SWATH.1", "GRID.1"}
    assert len(body["facets"]["collection"]) == 3
    assert n == (SESSION + VISIBLE[role] + 2 * BY_KEY[role] + 2 * CANDIDATES + EXACT_TEST
                 + FACET_COLLECTIONS[role] + TIMELINE + PAGE)


@pytest.mark.parametrize("role", [roles.USER, roles.OPERATOR])
def test_a_granule_page_reads_its_visibility_in_its_own_statement(world, role):  # noqa: F811
    """One granule is one statement: the caller's collections go into it as a subquery (a user)
    rather than read apart; then its files (and what the storage prefetches for them)."""
    from backend.catalog.models import Granule

    granule, client = Granule.objects.order_by("pk").first(), signed_in(role)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/api/v1/granules/{granule.pk}/")
    assert response.status_code == 200 and response.json()["granule_id"] == granule.granule_id
    statements = [q["sql"] for q in queries.captured_queries]
    granule_read = [s for s in statements if 'FROM "catalog_granule"' in s]
    assert len(granule_read) == 1
    visibility = [s for s in statements if "approved_users" in s]
    assert visibility == (granule_read if role == roles.USER else [])
    assert not [s for s in statements
                if 'FROM "catalog_collection"' in s and s not in granule_read]


def test_a_shape_search_pages_by_the_ids_its_summary_found_without_its_filters_again(world):  # noqa: F811
    """The summary's candidates were selected by the search's filters and its exact test: the
    page's statement names those ids (and the caller's collections), not the box, the dates
    and the attributes once more."""
    client = signed_in(roles.USER)
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/v1/granules/", {
            "limit": 10, "bbox": "150,-40,-160,40", "attr.day_night": "Day",
            "start": "2024-03-01", "end": "2024-03-20", "include": "facets,timeline"})
    assert response.status_code == 200 and response.json()["results"]
    [page] = [q["sql"] for q in queries.captured_queries if q["sql"].endswith("LIMIT 11")]
    assert '"north"' not in page.split("WHERE", 1)[1] and "day_night" not in page
