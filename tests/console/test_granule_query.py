"""The operator's granule filter against sets computed here by brute force over generated
granules (wildcards matched with fnmatch, ranges compared in Python)."""
import fnmatch
import random
from datetime import UTC, datetime, timedelta

import pytest

from backend.catalog.models import Granule
from backend.errors import DomainError
from console.granule_query import FILTER_FIELDS, granules_matching, state_counts
from ingest.models import IngestGranule, IngestRequest
from tests.factories import CollectionFactory, GranuleFactory, ProviderFactory

T0 = datetime(2025, 3, 1, tzinfo=UTC)
IDS = ["MOD_A1", "mod_a2", "MOD_B1", "MYD%X_1", "MYD_Y", "ABC", "A_C", "AxC", "Z?9", "LONGER_ID"]


@pytest.fixture
def world(db):
    rnd = random.Random(20)
    colls = [CollectionFactory(short_name=s, version="061") for s in ("AAA", "BBB", "CCC")]
    provs = [ProviderFactory(name=n) for n in ("PA", "PB")]
    requests = {p.pk: IngestRequest.objects.create(provider=p, way="bulk") for p in provs}
    rows = []
    for n in range(60):
        g = GranuleFactory(
            collection=rnd.choice(colls), granule_id=f"{rnd.choice(IDS)}_{n}",
            state=rnd.choice(Granule.State.values),
            temporal_start=T0 + timedelta(hours=rnd.randrange(0, 200)))
        g.temporal_end = g.temporal_start + timedelta(hours=rnd.randrange(0, 30))
        g.created_at = T0 + timedelta(days=rnd.randrange(0, 20), minutes=rnd.randrange(1440))
        g.archived_at = (None if rnd.random() < 0.3
                         else g.created_at + timedelta(hours=rnd.randrange(0, 48)))
        Granule.objects.filter(pk=g.pk).update(temporal_end=g.temporal_end,
                                               created_at=g.created_at, archived_at=g.archived_at)
        provider = rnd.choice([None, *provs])
        if provider is not None:
            IngestGranule.objects.create(request=requests[provider.pk], position=n,
                                         collection_key=g.collection.key,
                                         granule_id=g.granule_id, spec={}, catalog_granule=g)
        rows.append((g, provider.name if provider else None))
    return rows


def expect(world, pred):
    return {g.pk for g, provider in world if pred(g, provider)}


def got(params):
    return set(granules_matching(params).values_list("pk", flat=True))


@pytest.mark.parametrize("pattern", ["mod_a*", "*_1", "MYD%X*", "A?C_*", "Z??9*", "*", "abc_?",
                                     "*B1*", "longer_id_*", "none*"])
def test_granule_id_wildcards_match_fnmatch(world, pattern):
    want = expect(world, lambda g, _: fnmatch.fnmatchcase(g.granule_id.upper(), pattern.upper()))
    assert got({"granule_id": pattern}) == want


def test_each_filter_alone_and_together(world):
    d = lambda day: T0 + timedelta(days=day)  # noqa: E731
    cases = [
        ({"collection": "AAA.061"}, lambda g, p: g.collection.short_name == "AAA"),
        ({"collection": "AAA.061, CCC.061"},
         lambda g, p: g.collection.short_name in ("AAA", "CCC")),
        ({"provider": "PA"}, lambda g, p: p == "PA"),
        ({"provider": "PA,PB"}, lambda g, p: p is not None),
        ({"state": "archived,failed"}, lambda g, p: g.state in ("archived", "failed")),
        ({"created_from": "2025-03-05", "created_to": "2025-03-09"},
         lambda g, p: d(4) <= g.created_at < d(9)),
        ({"archived_from": "2025-03-10T00:00:00Z"},
         lambda g, p: g.archived_at is not None and g.archived_at >= d(9)),
        ({"start": "2025-03-03T00:00:00Z", "end": "2025-03-04T12:00:00Z"},
         lambda g, p: g.temporal_end >= d(2) and g.temporal_start <= d(3) + timedelta(hours=12)),
        ({"collection": "BBB.061", "provider": "PB", "state": "archived", "granule_id": "m*"},
         lambda g, p: g.collection.short_name == "BBB" and p == "PB" and g.state == "archived"
         and g.granule_id.upper().startswith("M")),
    ]
    for params, pred in cases:
        assert got(params) == expect(world, pred), params


def test_state_counts_ignore_the_state_asked_for(world):
    params = {"collection": "AAA.061", "state": "failed"}
    counts = state_counts(params)
    for state in Granule.State.values:
        assert counts[state] == len(expect(
            world, lambda g, p, s=state: g.collection.short_name == "AAA" and g.state == s))


def test_empty_values_select_everything(world):
    assert got({name: "" for name in FILTER_FIELDS}) == {g.pk for g, _ in world}


@pytest.mark.parametrize("params, field", [
    ({"collection": "NOPE.1"}, "collection"),
    ({"collection": "nodot"}, "collection"),
    ({"provider": "ghost"}, "provider"),
    ({"state": "lost"}, "state"),
    ({"created_from": "yesterday"}, "created_from"),
    ({"start": "2025-13-01"}, "start"),
    ({"start": "2025-03-02", "end": "2025-03-01"}, "end"),
    ({"granule_id": "x" * 300}, "granule_id"),
    ({"granule_id": "a\x00b"}, "granule_id"),
    ({"granule_id": 5}, "granule_id"),
    ({"colection": "AAA.061"}, "filters"),
])
def test_bad_params_are_refused_naming_the_field(world, params, field):
    with pytest.raises(DomainError) as caught:
        granules_matching(params)
    assert caught.value.status == 400
    assert caught.value.field == field


def test_several_bad_fields_are_all_named(world):
    with pytest.raises(DomainError) as caught:
        granules_matching({"state": "lost", "provider": "ghost"})
    assert {e["field"] for e in caught.value.errors} == {"state", "provider"}
