"""Finding granules by id: exactly or with `*` and `?`, case-insensitively, in the dedicated
`granule_id` filter and in the free text; `%`, `_` and `\\` typed are literal. The expected
answers come from fnmatch (shell wildcards) over the ids, not from the SQL."""
import fnmatch

import pytest
from django.db import connection

from backend.catalog import patterns
from backend.catalog.models import Granule
from tests.factories import CollectionFactory, GranuleFactory

pytestmark = pytest.mark.django_db

IDS = [
    "MOD021KM.A2024001.0000.061.2024001120000",
    "MOD021KM.A2024001.0005.061.2024001120500",
    "mod021km.a2024002.0000.061.2024002120000",
    "MOD021KM.A2024101.0000.061.2024101120000",
    "A_B%C", "AXBYC", "AxB%C", "A_BZC", "back\\slash", "backXslash", "50%", "500", "5_0",
]
PATTERNS = [
    "MOD021KM.A2024001.0000.061.2024001120000", "mod021km.a2024001.0000.061.2024001120000",
    "MOD021KM.A2024001*", "mod021km.a2024001*", "MOD021KM.A202400?.0000*", "*.0000.*",
    "*120000", "*A2024*1*", "A_B%C", "a_b%c", "A_B*", "A?B%C", "A?B?C", "50%", "5_0", "5?0",
    "back\\slash", "back?slash", "*%*", "*_*", "**", "?", "MOD021KM", "nothing*",
]


def fnmatch_ids(pattern):
    """The ids shell-wildcard matching selects, case-insensitive (brackets kept literal)."""
    wanted = pattern.upper().replace("[", "[[]")
    return {i for i in IDS if fnmatch.fnmatchcase(i.upper(), wanted)}


@pytest.fixture
def granules():
    collection = CollectionFactory(short_name="MOD021KM", version="061",
                                   title="MODIS Terra radiances")
    return [GranuleFactory(collection=collection, granule_id=i) for i in IDS]


def test_like_pattern_escapes_likes_own_characters():
    assert patterns.like_pattern("a%b_c\\d") == "a\\%b\\_c\\\\d"
    assert patterns.like_pattern("A**B?") == "A%B_"


@pytest.mark.parametrize("pattern", PATTERNS)
def test_granule_id_filter_agrees_with_fnmatch(api, granules, pattern):
    response = api.get("/api/v1/granules/", {"granule_id": pattern, "limit": 100})
    assert response.status_code == 200, response.content
    assert {g["granule_id"] for g in response.json()["results"]} == fnmatch_ids(pattern)


COLLECTION_TEXT = ("MOD021KM", "MODIS Terra radiances", "Terra", "MODIS")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_free_text_finds_granules_by_id(api, granules, pattern):
    response = api.get("/api/v1/granules/", {"q": pattern, "limit": 100})
    found = {g["granule_id"] for g in response.json()["results"]}
    expected = fnmatch_ids(pattern)
    # a plain word found in the collection's text selects its every granule
    if not patterns.has_wildcards(pattern) and any(
            pattern.lower() in text.lower() for text in COLLECTION_TEXT):
        expected = set(IDS)
    assert found == expected


def test_free_text_words_all_hold(api, granules):
    other = CollectionFactory(short_name="MOD10C1", title="Snow cover")
    snowy = GranuleFactory(collection=other, granule_id="MOD10C1.A2024001.061")

    def found(q):
        return {g["granule_id"] for g in api.get("/api/v1/granules/", {"q": q}).json()["results"]}
    assert found("snow") == {snowy.granule_id}
    assert found("snow MOD021KM.A2024001*") == set()
    assert found("radiances mod021km.a2024001*") == fnmatch_ids("MOD021KM.A2024001*")
    assert found("*.A2024001*") == fnmatch_ids("*.A2024001*") | {snowy.granule_id}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the index is PostgreSQL's")
def test_a_prefix_pattern_is_an_index_range_on_postgresql(granules):
    queryset = Granule.objects.filter(granule_id__ilike=patterns.like_pattern("mod021km.a2024*"))
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = queryset.explain()
    assert "granule_id_upper" in plan, plan
    assert "~>=~" in plan, plan      # a range on the index, not a filter over all of it
