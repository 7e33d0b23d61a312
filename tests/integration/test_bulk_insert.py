"""bulk.insert (COPY on PostgreSQL): the rows read back as written, ids are the real ones, and a
batch that breaks a constraint raises Django's IntegrityError with nothing of it written."""
from datetime import UTC, datetime, timedelta

import pytest
from django.db import IntegrityError, transaction
from django.db.models import F

from backend.catalog import bulk
from backend.catalog.models import File, Granule
from tests.factories import CollectionFactory

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 3, 1, tzinfo=UTC)


def _granules(collection, n, prefix="G"):
    return [Granule(collection=collection, granule_id=f"{prefix}{i:04d}", temporal_start=T0,
                    temporal_end=T0 + timedelta(minutes=5), west=-10.5, south=-5, east=10,
                    north=5.25, attributes={"orbit": i, "name": "ünïcode"}, total_size=i)
            for i in range(n)]


def test_rows_read_back_as_written_with_their_ids():
    collection = CollectionFactory()
    granules = bulk.insert(_granules(collection, 120), need_ids=True)
    files = bulk.insert([File(granule=g, name=f"{g.granule_id}.nc", size=7, checksum_type="MD5",
                              checksum="a" * 32) for g in granules], need_ids=True)
    assert len({g.pk for g in granules}) == 120 and all(f.pk for f in files)
    stored = {g.pk: g for g in Granule.objects.filter(collection=collection)}
    assert set(stored) == {g.pk for g in granules}
    for g in granules:
        row = stored[g.pk]
        assert (row.granule_id, row.total_size, row.attributes) == (
            g.granule_id, g.total_size, {"orbit": g.total_size, "name": "ünïcode"})
        assert row.bbox == [-10.5, -5, 10, 5.25] and row.temporal_start == T0
        assert row.created_at is not None and row.state == Granule.State.REGISTERED
    assert {f.granule_id: f.name for f in File.objects.filter(pk__in=[f.pk for f in files])} == {
        g.pk: f"{g.granule_id}.nc" for g in granules}
    later = Granule.objects.create(collection=collection, granule_id="after", temporal_start=T0,
                                   temporal_end=T0)
    assert later.pk > max(g.pk for g in granules)


def test_a_duplicate_in_the_batch_writes_nothing_and_says_why():
    collection = CollectionFactory()
    batch = _granules(collection, 60) + _granules(collection, 1)
    with pytest.raises(IntegrityError), transaction.atomic():
        bulk.insert(batch, need_ids=True)
    assert not Granule.objects.filter(collection=collection).exists()


def test_new_builds_what_the_model_would():
    collection = CollectionFactory()
    values = {"granule_id": "G1", "temporal_start": T0, "temporal_end": T0, "total_size": 3}
    made, built = Granule(collection=collection, **values), bulk.new(
        Granule, {"collection": collection}, **values)
    assert {k: v for k, v in vars(built).items() if k != "_state"} == {
        k: v for k, v in vars(made).items() if k != "_state"}
    assert built.collection is collection and built._state.adding
    assert built.attributes == {} and built.attributes is not bulk.new(Granule).attributes
    bulk.insert([built], need_ids=True)
    assert Granule.objects.get(pk=built.pk).collection_id == collection.pk


def test_update_returning_answers_the_rows_it_changed():
    collection = CollectionFactory()
    granules = bulk.insert(_granules(collection, 60), need_ids=True)
    Granule.objects.filter(pk__in=[g.pk for g in granules[:10]]).update(
        state=Granule.State.ARCHIVING)
    assign = {"state": Granule.State.ARCHIVED, "archived_at": T0,
              "total_size": ('"total_size" + 1',)}
    rows = bulk.update_returning(Granule, [g.pk for g in granules[5:]], assign,
                                 ["id", "total_size"], where="state = %s",
                                 params=[Granule.State.ARCHIVING])
    assert sorted(rows) == [(g.pk, g.total_size + 1) for g in granules[5:10]]
    assert set(Granule.objects.filter(state=Granule.State.ARCHIVED).values_list(
        "pk", flat=True)) == {g.pk for g in granules[5:10]}
    assert Granule.objects.get(pk=granules[5].pk).archived_at == T0


@pytest.mark.parametrize("n", [10, 80])      # below MIN_ROWS: Django's upsert; above: unnest
def test_upsert_inserts_the_new_and_updates_only_the_named_fields_of_the_rest(n):
    from backend.archive.models import CacheEntry

    collection = CollectionFactory()
    granules = bulk.insert(_granules(collection, n), need_ids=True)
    files = bulk.insert([File(granule=g, name="f.nc", size=7, checksum_type="MD5",
                              checksum="a" * 32) for g in granules], need_ids=True)
    old = T0 - timedelta(days=9)
    before = {e.file_id: e for e in CacheEntry.objects.bulk_create(
        [CacheEntry(file=f, state="dirty", size=1, pinned=True, last_access=old,
                    keep_until=old, blocks=b"old") for f in files[::3]])}
    CacheEntry.objects.filter(file_id__in=list(before)).update(created_at=old)
    entries = [bulk.new(CacheEntry, file_id=f.pk, state="clean", size=100 + i, last_access=T0,
                        keep_until=T0, checked=f"c{i}", verified_at=T0,
                        blocks=bytes([i % 256, 0, 255]) if i % 2 else None)
               for i, f in enumerate(files)]
    bulk.upsert(entries, unique_fields=["file"],
                update_fields=["state", "size", "last_access", "checked", "verified_at", "blocks"])
    stored = {e.file_id: e for e in CacheEntry.objects.filter(file__in=files)}
    assert len(stored) == n
    for i, f in enumerate(files):
        row = stored[f.pk]
        assert (row.state, row.size, row.last_access, row.checked, row.verified_at) == (
            "clean", 100 + i, T0, f"c{i}", T0)
        assert (bytes(row.blocks) if row.blocks is not None else None) == (
            bytes([i % 256, 0, 255]) if i % 2 else None)
        if f.pk in before:      # kept: the fields not named, the id, when it was made
            assert (row.pk, row.pinned, row.keep_until, row.created_at) == (
                before[f.pk].pk, True, old, old)
        else:
            assert (row.pinned, row.keep_until) == (False, T0) and row.created_at > old


@pytest.mark.parametrize("n", [3, 80])
def test_update_each_sets_each_rows_own_value_and_the_rest_alike(n):
    collection, other = CollectionFactory(), CollectionFactory()
    granules = bulk.insert(_granules(collection, n + 2), need_ids=True)
    targets = bulk.insert(_granules(other, n, prefix="T"), need_ids=True)
    chosen, untouched = granules[:n], granules[n:]
    # each chosen granule "replaces" a different target, picked in reverse so no order helps
    values = {g.pk: t.pk for g, t in zip(chosen, reversed(targets), strict=True)}
    changed = bulk.update_each(Granule, "replaces", values, state=Granule.State.ARCHIVED,
                               archived_at=T0, total_size=F("version"))
    assert changed == n
    stored = {g.pk: g for g in Granule.objects.filter(collection=collection)}
    for g, t in zip(chosen, reversed(targets), strict=True):
        row = stored[g.pk]
        assert (row.replaces_id, row.state, row.archived_at, row.total_size) == (
            t.pk, Granule.State.ARCHIVED, T0, 1)
    for g in untouched:
        row = stored[g.pk]
        assert (row.replaces_id, row.state, row.archived_at, row.total_size) == (
            None, Granule.State.REGISTERED, None, g.total_size)
    assert bulk.update_each(Granule, "replaces", {}, state=Granule.State.FAILED) == 0
