"""The search benchmark's parts at a small size: its synthetic catalog, its queries, its HTTP
client and its brute-force check (what it measures, never how fast)."""
from datetime import timedelta

import pytest

from backend.catalog import stac_search
from backend.catalog.geo import parse_bbox
from bench import search, synthetic

YEAR = synthetic.EPOCH + timedelta(days=365)
KEYS = [f"{p.short_name}.1" for p in synthetic.PRODUCTS]


def test_synthetic_granules_are_exact_in_number_valid_and_repeatable():
    made = list(synthetic.granules(503, years=1, seed=3))
    assert len(made) == 503 and made == list(synthetic.granules(503, years=1, seed=3))
    assert len({g.granule_id for g in made}) == 503
    assert {g.product for g in made} == set(range(len(synthetic.PRODUCTS)))
    for g in made:
        parse_bbox(list(g.bbox))
        assert g.start < g.end and len(g.files) == 2
        assert all(size > 0 and len(md5) == 32 for _, _, size, md5 in g.files)
    assert any(g.bbox[0] > g.bbox[2] for g in made), "some footprints cross the antimeridian"


@pytest.mark.django_db(transaction=True)
def test_the_fast_load_stores_what_the_synthetic_objects_say():
    """On PostgreSQL the loader makes ids, names, attributes and MD5s in SQL from numpy
    columns; they must be the objects' (SQLite stores the objects themselves)."""
    from backend.catalog.models import Collection, File, Granule
    from bench.loading import load_granules, load_synthetic

    collections = [Collection.objects.create(short_name=p.short_name, version="1", title="t")
                   for p in synthetic.PRODUCTS]
    load_synthetic(collections, 57, 0.2, 4)
    made = list(synthetic.granules(57, years=0.2, seed=4))
    stored = list(Granule.objects.order_by("pk"))
    assert [(g.collection_id, g.granule_id, g.temporal_start, g.temporal_end, tuple(g.bbox),
             g.attributes, g.total_size, g.state) for g in stored] == [
        (collections[m.product].pk, m.granule_id, m.start, m.end, m.bbox, m.attributes,
         sum(f[2] for f in m.files), "archived") for m in made]
    files = File.objects.order_by("pk").values_list("granule_id", "name", "role", "size",
                                                    "checksum")
    assert list(files) == [(g.pk, *f) for g, m in zip(stored, made, strict=True)
                           for f in m.files]
    # the counts' trigger is off during the load; the loader counts afterwards, and the
    # trigger is on again for what follows (a loaded granule withdrawn moves one count)
    from backend.catalog import counts
    assert counts.by_state()["archived"] == 57
    Granule.objects.filter(pk=stored[0].pk).update(state=Granule.State.WITHDRAWN)
    assert (counts.by_state()["archived"], counts.by_state()["withdrawn"]) == (56, 1)
    more = [Collection.objects.create(short_name=p.short_name, version="2", title="t")
            for p in synthetic.PRODUCTS]
    load_granules(more, synthetic.granules(5, years=0.2, seed=9))
    assert counts.by_state()["archived"] == Granule.objects.filter(state="archived").count() == 61


def test_queries_are_valid_stac_searches_of_every_kind():
    queries = search.make_queries(300, KEYS, synthetic.EPOCH, YEAR, seed=2)
    for query in queries:
        for parsed in (stac_search.search_from_query(query.params()),
                       stac_search.search_from_body(query.body())):
            assert parsed.limit == search.LIMIT and parsed.collections == query.collections
    assert [q.method for q in queries[:4]] == ["GET", "POST", "GET", "POST"]
    assert any(q.bbox[0] > q.bbox[2] for q in queries)
    assert any(len(q.collections) == 2 for q in queries)
    assert any(q.datetime.startswith("..") for q in queries)
    assert any(q.datetime.endswith("..") for q in queries)
    assert any("/" not in q.datetime for q in queries)


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert [search.percentile(values, q) for q in (50, 95, 100)] == [50, 95, 100]
    assert search.percentile([7], 95) == 7


@pytest.mark.django_db(transaction=True)
def test_measure_and_the_brute_force_check_through_a_live_server(live_server, monkeypatch):
    monkeypatch.setattr(search, "LIMIT", 5)     # pages small enough that most have a second
    collections, _ = search.load(400, 1.0, 5)
    catalog = search.Catalog.read()
    assert len(catalog.pk) == 400 and catalog.crossing > 0
    queries = search.make_queries(12, KEYS, synthetic.EPOCH, YEAR, seed=5)
    times, returned = search.measure(live_server.url, queries, warmup=2, every_next=1)
    assert len(times["search"]) == len(times["baseline"]) == len(returned) == 10
    assert len(times["GET"]) == len(times["POST"]) == 5
    assert len(times["next"]) == sum(1 for r in returned if r == search.LIMIT)
    # the benchmark's small windows mostly find nothing among 400 granules: add searches
    # that fill pages, across the antimeridian too
    wide = [search.Query(method, (key,), box, f"{YEAR - timedelta(days=200):%Y-%m-%dT%H:%M:%SZ}/..")
            for key in KEYS for method, box in (("GET", (-180, -80, 180, 80)),
                                                ("POST", (150, -70, -150, 70)))]
    agreed, compared, agreed_next = search.check(live_server.url, queries + wide, catalog,
                                                 collections)
    assert agreed == len(queries + wide) and compared == agreed_next >= len(KEYS)
