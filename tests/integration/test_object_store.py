"""The object-store tier on a real S3 server (rclone serve s3, started by the test setup): copies
written and verified, granules ARCHIVED only when every target holds a verified copy, recalls,
damage behind Granary's back, and a store that is down, misconfigured or refusing us."""
import hashlib
import io
import os
import tarfile
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from backend.archive import services
from backend.archive.models import ArchiveRequest, Bucket, CacheEntry, FileCopy
from backend.archive.services import cache, manager, object_writes, objects, paths, queueing
from backend.catalog.models import Granule
from tests.archive_fixtures import (
    archived_collection,
    movers_without_waits,
    small_layout,
    staged_granule,
)
from tests.s3_fixtures import copy_bytes as s3_copy_bytes
from tests.s3_server import ACCESS_KEY, SECRET_KEY

pytestmark = pytest.mark.django_db

Req = ArchiveRequest


def store_settings(server, secret=SECRET_KEY, endpoint=None):
    return {"default": {"endpoint_url": endpoint or server.endpoint_url,
                        "access_key": ACCESS_KEY, "secret_key": secret,
                        "region": "us-east-1"}}


@pytest.fixture
def tier(data_root, settings, s3_bucket):
    """A two-silo tape layout and a bucket on the real S3 server as copy targets."""
    server, name = s3_bucket
    movers_without_waits(settings)
    settings.GRANARY_OBJECT_STORES = store_settings(server)
    settings.GRANARY_S3_PART_BYTES = 5 << 20   # the smallest part S3 allows: small multiparts
    primary, backup, _ = small_layout()
    bucket = Bucket.objects.create(name="objects", store="default", bucket=name)
    return server, bucket, primary, backup, data_root


def object_bytes(server, bucket, key):
    return server.client().get_object(Bucket=bucket.bucket, Key=key)["Body"].read()


def copy_bytes(server, copy):
    return s3_copy_bytes(server.client(), copy)


def every_object_copy_good(server, bucket, granule, data):
    """Each file of the granule has a verified copy in the bucket holding its bytes; the keys
    the bucket lists."""
    for f in granule.files.all():
        good = FileCopy.objects.get(file=f, bucket=bucket, state="verified")
        assert copy_bytes(server, good) == data[f.pk]
    return {o["Key"] for o in server.client().list_objects_v2(Bucket=bucket.bucket)["Contents"]}


def md5(data):
    return hashlib.md5(data).hexdigest()


def test_archived_only_when_object_and_tape_copies_are_verified(tier):
    server, bucket, _, backup, root = tier
    collection = archived_collection([bucket, backup])
    granule, sources = staged_granule(collection, root / "staging", sizes=(3000, 70_000))
    originals = {pk: path.read_bytes() for pk, path in sources.items()}
    assert services.archive_granule(granule, sources).migrations == 4
    assert {(r.copy_number, r.bucket_id is not None) for r in Req.objects.all()} == {
        (1, True), (2, False)}

    assert objects.run_object_movers() == 2
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVING   # the tape copy is still to write
    copies = FileCopy.objects.filter(copy_number=1).select_related("bucket", "file")
    assert {c.key for c in copies} == {copies[0].key}   # two small files: one pack
    pack = object_bytes(server, bucket, copies[0].key)
    for copy in copies:
        assert copy.medium == "object" and copy.volume_id is None
        assert copy.state == FileCopy.State.VERIFIED
        assert copy_bytes(server, copy) == originals[copy.file_id]
        assert copy.etag == md5(pack)   # a single-part object's ETag is the MD5 of its bytes
    with tarfile.open(fileobj=io.BytesIO(pack)) as tar:   # a pack is a tar any reader lists
        assert sorted(tar.getnames()) == sorted(paths.member_name(c.file) for c in copies)

    services.run_until_idle()
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVED
    assert FileCopy.objects.filter(state="verified", volume__isnull=False).count() == 2
    assert set(CacheEntry.objects.values_list("state", flat=True)) == {"clean"}


def test_the_operator_api_says_where_in_its_pack_a_small_file_lies(tier, operator_api):
    """A member of a pack is read with any S3 client from what the operator API shows: its key
    and its data offset, which tarfile finds in the pack's bytes too."""
    server, bucket, _, _, root = tier
    collection = archived_collection([bucket])
    granule, sources = staged_granule(collection, root / "staging", sizes=(3000, 5000))
    originals = {pk: path.read_bytes() for pk, path in sources.items()}
    services.archive_granule(granule, sources)
    services.run_until_idle()
    copies = list(FileCopy.objects.select_related("file"))
    pack = object_bytes(server, bucket, copies[0].key)
    with tarfile.open(fileobj=io.BytesIO(pack)) as tar:
        offsets = {m.name: m.offset_data for m in tar.getmembers()}
    for copy in copies:
        (shown,) = operator_api.get(f"/api/v1/archive/files/{copy.file_id}/").json()["copies"]
        start = shown["data_offset"]
        assert start == offsets[paths.member_name(copy.file)] > 0
        assert pack[start:start + shown["length"]] == originals[copy.file_id]


def test_a_large_file_goes_in_parts_and_reads_back_whole(tier):
    server, bucket, _, _, root = tier
    collection = archived_collection([bucket])
    granule, sources = staged_granule(collection, root / "staging", sizes=(12 << 20,))
    data = next(iter(sources.values())).read_bytes()
    services.archive_granule(granule, sources)
    services.run_until_idle()
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVED
    copy = FileCopy.objects.get()
    stored = object_bytes(server, bucket, copy.key)
    assert copy.data_offset == 0 and copy.key.startswith(f"{collection.key}/")   # not packed
    assert hashlib.sha256(stored).hexdigest() == hashlib.sha256(data).hexdigest()
    # S3's multipart ETag: MD5 of the parts' MD5s, then the number of parts (5 + 5 + 2 MiB)
    parts = [data[i:i + (5 << 20)] for i in range(0, len(data), 5 << 20)]
    expected = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest()
    assert copy.etag == f"{expected}-3"


def archive_object_only(tier, sizes=(4000,), with_tape=False):
    server, bucket, primary, _, root = tier
    collection = archived_collection([bucket, primary] if with_tape else [bucket])
    granule, sources = staged_granule(collection, root / "staging", sizes=sizes)
    data = {pk: path.read_bytes() for pk, path in sources.items()}
    services.archive_granule(granule, sources)
    services.run_until_idle()
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVED
    return granule, data


def purge_all(granule):
    for f in granule.files.all():
        cache.release(f)
        assert not CacheEntry.objects.filter(file=f).exists()


def test_a_recall_reads_the_object_store_and_checks_the_bytes(tier):
    granule, data = archive_object_only(tier)
    purge_all(granule)
    f = granule.files.get()
    answer = services.make_available([f])[0]
    assert not answer.ready and answer.eta_s is not None
    recall = Req.objects.get(kind="recall")
    assert recall.bucket_id == tier[1].pk
    services.run_until_idle()
    recall.refresh_from_db()
    assert recall.state == "done"
    assert paths.cache_path(f).read_bytes() == data[f.pk]


@pytest.mark.parametrize("damage", ["replaced", "deleted"])
def test_an_object_damaged_behind_our_back_is_never_served_and_is_rewritten(tier, damage):
    server, bucket = tier[0], tier[1]
    granule, data = archive_object_only(tier, with_tape=True)
    purge_all(granule)
    f = granule.files.get()
    copy = FileCopy.objects.get(file=f, bucket=bucket)
    if damage == "replaced":
        server.client().put_object(Bucket=bucket.bucket, Key=copy.key, Body=b"x" * f.size)
    else:
        server.client().delete_object(Bucket=bucket.bucket, Key=copy.key)

    services.make_available([f])
    objects.run_object_movers()
    copy.refresh_from_db()
    assert copy.state == FileCopy.State.BAD
    assert Req.objects.get(kind="recall").bucket_id is None   # sent to the tape copy
    services.run_until_idle()
    # served from the tape copy instead: the cache holds the catalog's bytes
    assert paths.cache_path(f).read_bytes() == data[f.pk]
    # and background repair wrote the object copy again from them
    good = FileCopy.objects.get(file=f, bucket=bucket, state="verified")
    assert copy_bytes(server, good) == data[f.pk]
    assert FileCopy.objects.get(pk=copy.pk).state == FileCopy.State.RELEASED


def test_with_no_other_copy_a_damaged_object_fails_the_recall_with_its_reason(tier):
    server, bucket = tier[0], tier[1]
    granule, _ = archive_object_only(tier)
    purge_all(granule)
    f = granule.files.get()
    copy = FileCopy.objects.get(file=f)
    server.client().put_object(Bucket=bucket.bucket, Key=copy.key, Body=b"y" * f.size)
    services.make_available([f])
    services.run_until_idle()
    recall = Req.objects.get(kind="recall")
    assert recall.state == "failed" and "no readable copy" in recall.error
    assert not paths.cache_path(f).exists()


@pytest.mark.parametrize("fault, reason", [
    ("unreachable", "unreachable"),
    ("credentials", "refused Granary's credentials"),
    ("no bucket", "does not exist"),
])
def test_a_store_that_fails_as_a_whole_holds_ingest_without_charging_it(
        tier, settings, fault, reason):
    server, bucket, _, _, root = tier
    if fault == "unreachable":
        settings.GRANARY_OBJECT_STORES = store_settings(server, endpoint="http://127.0.0.1:9")
        settings.GRANARY_S3_TIMEOUT_S = 1
    elif fault == "credentials":
        settings.GRANARY_OBJECT_STORES = store_settings(server, secret="not-the-secret")
    else:
        Bucket.objects.filter(pk=bucket.pk).update(bucket="no-such-bucket-here")
    collection = archived_collection([bucket])
    granule, sources = staged_granule(collection, root / "staging", sizes=(2000,))
    services.archive_granule(granule, sources)

    assert objects.run_object_movers() == 0
    request = Req.objects.get()
    assert request.state == "queued" and request.attempts == 0
    assert reason in request.error
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVING
    assert not FileCopy.objects.exists()

    settings.GRANARY_OBJECT_STORES = store_settings(server)
    Bucket.objects.filter(pk=bucket.pk).update(bucket=tier[1].bucket)
    services.run_until_idle()
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVED, list(Req.objects.values_list("state", "error"))


def test_a_cached_file_changed_before_its_copy_fails_with_the_reason(tier):
    _, bucket, _, _, root = tier
    collection = archived_collection([bucket])
    granule, sources = staged_granule(collection, root / "staging", sizes=(5000,))
    services.archive_granule(granule, sources)
    f = granule.files.get()
    path = paths.cache_path(f)
    path.unlink()   # a hard link to staging: write new bytes, not through it
    path.write_bytes(b"z" * f.size)
    objects.run_object_movers()
    request = Req.objects.get()
    assert request.state == "failed"
    assert "does not match its catalog checksum" in request.error
    assert not FileCopy.objects.exists()
    assert not list(tier[0].client().list_objects_v2(Bucket=bucket.bucket).get("Contents", []))


def test_work_of_a_dead_object_mover_is_taken_again_only_after_its_lease(tier):
    _, bucket, _, _, root = tier
    collection = archived_collection([bucket])
    granule, sources = staged_granule(collection, root / "staging", sizes=(100,))
    services.archive_granule(granule, sources)
    request = Req.objects.get()
    now = timezone.now()
    Req.objects.filter(pk=request.pk).update(state="running", lease_until=now + timedelta(
        seconds=30))
    manager.recover_stale_work()
    assert Req.objects.get().state == "running"   # its mover is alive
    Req.objects.filter(pk=request.pk).update(lease_until=now - timedelta(seconds=1))
    manager.recover_stale_work()
    assert Req.objects.get().state == "queued"
    services.run_until_idle()
    assert Req.objects.get().state == "done"
    assert FileCopy.objects.filter(state="verified").count() == 1


def kinds(found):
    return sorted(v.kind for v in found)


def test_reconciliation_lists_the_bucket_against_the_catalog_and_repairs(tier, settings):
    from backend.archive import invariants as inv
    from backend.archive.services import reconcile

    settings.GRANARY_S3_PACK_BELOW_BYTES = 0   # an object per file (packs: the test below)
    server, bucket = tier[0], tier[1]
    granule, data = archive_object_only(tier, sizes=(3000, 4000, 5000, 6000), with_tape=True)
    assert inv.check_all(read_bytes=True) == []
    by_size = {c.length: c for c in FileCopy.objects.filter(bucket=bucket)}
    s3 = server.client()
    s3.delete_object(Bucket=bucket.bucket, Key=by_size[3000].key)                  # missing
    s3.put_object(Bucket=bucket.bucket, Key=by_size[4000].key, Body=b"a" * 10)     # wrong size
    s3.put_object(Bucket=bucket.bucket, Key=by_size[5000].key, Body=b"b" * 5000)   # changed
    s3.put_object(Bucket=bucket.bucket, Key="stray/left-behind.dat", Body=b"c" * 7)  # extra

    run = reconcile.reconcile(full=True, repair=True)
    found = {d.kind: d for d in run.discrepancies.all()}
    assert sorted(found) == sorted([inv.OBJECT_MISSING, inv.OBJECT_SIZE, inv.COPY_BYTES,
                                    inv.OBJECT_ORPHAN])
    assert found[inv.OBJECT_MISSING].copy_id == by_size[3000].pk
    assert found[inv.OBJECT_SIZE].copy_id == by_size[4000].pk
    assert found[inv.COPY_BYTES].copy_id == by_size[5000].pk
    assert found[inv.OBJECT_ORPHAN].extra["key"] == "stray/left-behind.dat"
    assert all(d.outcome for d in found.values())

    # the three bad copies are rewritten from the tape copies, the stray object is gone
    services.run_until_idle()
    services.run_until_idle()
    assert inv.check_all(read_bytes=True) == []
    keys = every_object_copy_good(server, bucket, granule, data)
    assert "stray/left-behind.dat" not in keys and len(keys) == 4


def test_reconciliation_checks_each_member_of_a_pack(tier):
    """Small files share a pack: a flipped byte is the one member's fault, the others stay;
    a pack no copy names is an orphan unless a migration under way may have written it."""
    from backend.archive import invariants as inv
    from backend.archive.services import reconcile

    server, bucket = tier[0], tier[1]
    granule, data = archive_object_only(tier, sizes=(3000, 4000, 5000), with_tape=True)
    by_size = {c.length: c for c in FileCopy.objects.filter(bucket=bucket)}
    (key,) = {c.key for c in by_size.values()}
    s3 = server.client()
    pack = bytearray(object_bytes(server, bucket, key))
    with tarfile.open(fileobj=io.BytesIO(bytes(pack))) as tar:
        offsets = {m.size: m.offset_data for m in tar.getmembers()}
    pack[offsets[4000] + 10] ^= 0xFF
    s3.put_object(Bucket=bucket.bucket, Key=key, Body=bytes(pack))
    done = Req.objects.filter(kind="migrate", bucket=bucket).first()
    stray = f"packs/2026/01/02/r{done.pk}-0badc0de.tar"   # a dead mover's pack: its work is done
    s3.put_object(Bucket=bucket.bucket, Key=stray, Body=b"d" * 1024)

    run = reconcile.reconcile(full=True, repair=True)
    found = {d.kind: d for d in run.discrepancies.all()}
    assert sorted(found) == sorted([inv.COPY_BYTES, inv.OBJECT_ORPHAN])
    assert found[inv.COPY_BYTES].copy_id == by_size[4000].pk
    assert found[inv.OBJECT_ORPHAN].extra["key"] == stray

    services.run_until_idle()
    assert inv.check_all(read_bytes=True) == []
    keys = every_object_copy_good(server, bucket, granule, data)
    assert key in keys and stray not in keys   # the pack still holds two good members


def test_a_pack_replaced_behind_our_back_leaves_once_its_members_are_rewritten(
        tier, eager, django_capture_on_commit_callbacks):
    """The pack's bytes replaced on the server: each member is rewritten from tape, and the
    commit releasing the last member's old copy removes the pack; nothing is left in the
    bucket that no copy names (the stateful test's sequence of session 35)."""
    from backend.archive.services import reconcile

    server, bucket = tier[0], tier[1]
    granule, data = archive_object_only(tier, sizes=(3000, 4000), with_tape=True)
    (key,) = set(FileCopy.objects.filter(bucket=bucket).values_list("key", flat=True))
    server.client().put_object(Bucket=bucket.bucket, Key=key, Body=os.urandom(3000))

    reconcile.reconcile(full=True, repair=True)
    with django_capture_on_commit_callbacks(execute=True):
        services.run_until_idle()
    keys = every_object_copy_good(server, bucket, granule, data)
    named = set(FileCopy.objects.filter(bucket=bucket, state="verified")
                .values_list("key", flat=True))
    assert key not in keys and keys == named


def test_a_pack_named_after_work_under_way_is_not_an_orphan():
    from backend.archive.services.buckets import Pending

    pending = Pending({"c/g/f.nc"}, {7})
    assert "c/g/f.nc" in pending
    assert "packs/2026/11/28/r7-0a1b2c3d.tar" in pending
    assert "archive/packs/2026/11/28/r7-0a1b2c3d.tar" in pending   # under a bucket's prefix
    assert "packs/2026/11/28/r70-0a1b2c3d.tar" not in pending
    assert "packs/2026/11/28/r7-0a1b2c3d.tar.bak" not in pending
    assert "c/g/other.nc" not in pending


def test_deleting_a_granule_removes_its_objects(tier, django_capture_on_commit_callbacks,
                                                settings):
    from backend.archive.services import retirement
    from tests.factories import UserFactory

    settings.GRANARY_S3_PACK_BELOW_BYTES = 0   # an object per file
    server, bucket = tier[0], tier[1]
    granule, _ = archive_object_only(tier, sizes=(100, 200))
    assert len(server.client().list_objects_v2(Bucket=bucket.bucket)["Contents"]) == 2
    with django_capture_on_commit_callbacks(execute=True):
        released = retirement.delete(granule, by=UserFactory(), reason="superseded by v2")
    assert released == 300
    assert "Contents" not in server.client().list_objects_v2(Bucket=bucket.bucket)
    assert set(FileCopy.objects.values_list("state", flat=True)) == {"released"}


def test_a_pack_is_removed_when_its_last_member_is(tier, django_capture_on_commit_callbacks):
    from backend.archive.services import retirement
    from tests.factories import UserFactory

    server, bucket, _, _, root = tier
    collection = archived_collection([bucket])
    granules = []
    for size in (100, 200):
        granule, sources = staged_granule(collection, root / "staging", sizes=(size,))
        services.archive_granule(granule, sources)
        granules.append((granule, next(iter(sources.values())).read_bytes()))
    services.run_until_idle()
    (key,) = set(FileCopy.objects.values_list("key", flat=True))   # one pack holds both
    (first, _), (second, data) = granules
    with django_capture_on_commit_callbacks(execute=True):
        retirement.delete(first, by=UserFactory(), reason="superseded")
    listed = server.client().list_objects_v2(Bucket=bucket.bucket)["Contents"]
    assert [o["Key"] for o in listed] == [key]   # the other member still lives in it
    purge_all(second)
    f = second.files.get()
    services.make_available([f])
    services.run_until_idle()
    assert paths.cache_path(f).read_bytes() == data   # read by a ranged GET of its member
    with django_capture_on_commit_callbacks(execute=True):
        retirement.delete(second, by=UserFactory(), reason="superseded")
    assert "Contents" not in server.client().list_objects_v2(Bucket=bucket.bucket)


def test_the_invariants_hold_for_object_copies_and_see_a_copy_in_the_wrong_bucket(tier):
    from backend.archive import invariants as inv

    _, bucket, _, _, _ = tier
    archive_object_only(tier, sizes=(100,))
    assert inv.check_records() == []
    other = Bucket.objects.create(name="elsewhere", bucket="elsewhere-bucket")
    FileCopy.objects.update(bucket=other)
    assert kinds(inv.check_records()) == [inv.COPY_WRONG_GROUP]


def test_a_mover_gives_its_worker_slot_back_after_its_time_slice(tier, monkeypatch):
    """A worker's slots are shared with the drives' tasks: a mover with more work than its
    slice sends itself again behind them instead of looping until the queue is empty."""
    _, bucket, _, _, root = tier
    collection = archived_collection([bucket])
    for _ in range(5):
        granule, sources = staged_granule(collection, root / "staging", sizes=(300,))
        services.archive_granule(granule, sources)
    sent = []
    monkeypatch.setattr(objects, "BATCH", 2)
    monkeypatch.setattr(objects, "send", lambda name, *args, **kw: sent.append(name))
    assert objects.run_object_movers(max_seconds=1e-9) == 2
    assert sent == ["backend.archive.run_objects"]
    assert Req.objects.filter(state="queued").count() == 3
    assert objects.run_object_movers(max_seconds=0) == 3
    assert not Granule.objects.exclude(state=Granule.State.ARCHIVED).exists()


def test_a_mover_sends_the_next_batch_while_one_is_on_its_way(tier, monkeypatch, settings):
    """Large granules reach the cache one by one (an ingest chunk each): the mover waited for
    a batch's objects to be stored before it claimed what came after, so a file queued a moment
    later waited out the whole upload before it. Each upload here waits (10 s at most) until
    the other has started: both must be on their way at once."""
    import threading

    from backend.archive.media.objectstore import ObjectStore

    _, bucket, _, _, root = tier
    settings.GRANARY_S3_PACK_BELOW_BYTES = 0   # objects of their own, not a pack
    collection = archived_collection([bucket])
    for _ in range(2):
        granule, sources = staged_granule(collection, root / "staging", sizes=(3000,))
        services.archive_granule(granule, sources)
    both, met, real_write = threading.Event(), [], ObjectStore.write

    def write(store, key, *args, **kwargs):   # in a thread of the mover's pool
        met.append(key)
        if len(met) == 2:
            both.set()
        met.append(both.wait(10))
        return real_write(store, key, *args, **kwargs)

    monkeypatch.setattr(objects, "BATCH", 1)   # a batch per file, as they arrive
    monkeypatch.setattr(ObjectStore, "write", write)
    assert objects.run_object_movers(max_seconds=0) == 2
    assert [m for m in met if isinstance(m, bool)] == [True, True]
    assert not Granule.objects.exclude(state=Granule.State.ARCHIVED).exists()
    assert FileCopy.objects.filter(bucket=bucket, state="verified").count() == 2


def test_a_batch_is_sorted_by_kind_and_work_no_store_can_do_goes_back_with_its_reason(tier):
    """A repack queued against a bucket (no object store repacks) is put back charged with
    the reason each time a mover claims it, until it fails; the migrations claimed in the same
    batch are stored and recorded. A request with no file is not object work: left alone, it
    does not keep a mover claiming (it spun, never claimed, on PostgreSQL)."""
    _, bucket, _, _, root = tier
    collection = archived_collection([bucket])
    granules = []
    for _ in range(3):
        granule, sources = staged_granule(collection, root / "staging", sizes=(3000,))
        services.archive_granule(granule, sources)
        granules.append(granule)
    stray = Req.objects.create(kind=Req.Kind.REPACK, priority=Req.Priority.BACKGROUND,
                               bucket=bucket, file=granules[0].files.get())
    fileless = Req.objects.create(kind=Req.Kind.AUDIT, priority=Req.Priority.BACKGROUND,
                                  bucket=bucket)
    assert objects.run_object_movers(max_seconds=0) == 3
    stray.refresh_from_db()
    assert (stray.state, stray.attempts, stray.error) == (
        Req.State.FAILED, queueing.MAX_ATTEMPTS, "not object-store work")
    fileless.refresh_from_db()
    assert (fileless.state, fileless.attempts) == (Req.State.QUEUED, 0)
    assert set(Granule.objects.filter(pk__in=[g.pk for g in granules])
               .values_list("state", flat=True)) == {Granule.State.ARCHIVED}
    assert FileCopy.objects.filter(bucket=bucket, state="verified").count() == 3


def test_a_batch_holds_a_bounded_number_of_bytes(tier, monkeypatch):
    """A batch is recorded once all its objects are stored: its bytes are bounded so large
    files do not wait for a thousand others. Three files of 3,000 bytes under a bound of 6,000
    go as two batches (2 + 1); a single file larger than the bound still goes, alone."""
    _, bucket, _, _, root = tier
    collection = archived_collection([bucket])
    for size in (3000, 3000, 3000, 9000):
        granule, sources = staged_granule(collection, root / "staging", sizes=(size,))
        services.archive_granule(granule, sources)
    claimed, real_claim = [], objects.claim_leased

    def claim(ids, lease_until):
        batch = real_claim(ids, lease_until)
        claimed.append(sorted(r.file.size for r in batch))
        return batch

    monkeypatch.setattr(objects, "BATCH_BYTES", 6000)
    monkeypatch.setattr(objects, "claim_leased", claim)
    assert objects.run_object_movers(max_seconds=0) == 4
    assert claimed == [[3000, 3000], [3000], [9000]]
    assert not Granule.objects.exclude(state=Granule.State.ARCHIVED).exists()


def test_a_missing_bucket_holds_up_no_other_buckets_work(tier, monkeypatch):
    """Found by the chaos run: more than a batch of work for a bucket that does not exist
    was claimed first on every run, and another bucket's granules waited as long."""
    _, bucket, _, _, root = tier
    monkeypatch.setattr(objects, "BATCH", 8)
    missing = Bucket.objects.create(name="missing", bucket="no-such-bucket-here")
    late, fine = archived_collection([missing]), archived_collection([bucket])
    for _ in range(10):                       # queued first: the oldest work
        granule, sources = staged_granule(late, root / "staging", sizes=(100,))
        services.archive_granule(granule, sources)
    granule, sources = staged_granule(fine, root / "staging", sizes=(100,))
    services.archive_granule(granule, sources)
    objects.run_object_movers(max_seconds=0)
    assert Req.objects.get(file__granule=granule).state == Req.State.DONE
    waiting = Req.objects.filter(bucket=missing)
    assert {(r.state, r.attempts) for r in waiting} == {("queued", 0)}
    tried = [r.error for r in waiting if r.error]   # the batch that met the missing bucket
    assert tried and all("does not exist" in error for error in tried)


def test_a_cached_file_gone_before_its_send_is_recalled_not_a_crash(tier, monkeypatch):
    """Found by the chaos run: the file left the cache between the check and the send, and
    the mover crashed on it (FileNotFoundError), charging its whole batch."""
    _, bucket, primary, _, root = tier
    collection = archived_collection([primary, bucket])
    granule, sources = staged_granule(collection, root / "staging", sizes=(700,))
    services.archive_granule(granule, sources)
    services.run_until_idle()                 # the tape copy first: something to recall from
    f = granule.files.get()
    Req.objects.filter(file=f, bucket=bucket).update(state="queued")
    real, taken = object_writes.in_cache, []

    def in_cache_then_gone(requests):   # once: the recall that brings it back must not loop
        kept = real(requests)
        if not taken:
            taken.append(paths.cache_path(f))
            paths.cache_path(f).unlink()
        return kept

    monkeypatch.setattr(object_writes, "in_cache", in_cache_then_gone)
    objects.run_object_movers(max_seconds=0)
    migration = Req.objects.get(file=f, kind="migrate", bucket=bucket)
    assert taken and migration.attempts == 0   # not charged for the file that went away
    assert Req.objects.filter(file=f, kind="recall").exists()   # brought back instead
    monkeypatch.setattr(object_writes, "in_cache", real)
    services.run_until_idle()
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVED
    assert FileCopy.objects.filter(file=f, bucket=bucket, state="verified").exists()


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="SKIP LOCKED is PostgreSQL's; SQLite locks the whole database")
@pytest.mark.django_db(transaction=True)
def test_the_lease_keeper_renews_a_slow_batch_and_never_waits_on_the_mover(
        tier, monkeypatch, settings):
    """A batch that outlasts its lease keeps it (another mover must not take the work), and
    the keeper skips rows a transaction of the mover holds instead of waiting on them: a keeper
    blocked on the mover's lock hung the mover's stop() (its join) in a test's transaction."""
    from django.db import transaction

    settings.GRANARY_OBJECT_LEASE_S = 1   # the keeper renews every third of a second
    _, bucket, _, _, root = tier
    collection = archived_collection([bucket])
    granule, sources = staged_granule(collection, root / "staging", sizes=(300,))
    services.archive_granule(granule, sources)
    request = Req.objects.get(bucket=bucket)
    keepers, leases, rounds = [], [], []
    real_keeper, real_pack = objects.Keeper, object_writes._send_pack

    def keeper(*args, **kwargs):
        keepers.append(real_keeper(*args, **kwargs))
        return keepers[-1]

    def slow_pack(requests, bucket):   # in a thread of the mover's pool
        try:
            leases.append(Req.objects.get(pk=request.pk).lease_until)
            time.sleep(1.2)
            leases.append(Req.objects.get(pk=request.pk).lease_until)
            with transaction.atomic():   # the mover holds the row, as its recording does
                Req.objects.select_for_update().get(pk=request.pk)
                rounds.append(keepers[0].rounds)
                time.sleep(1.2)
                rounds.append(keepers[0].rounds)
        finally:
            connection.close()
        return real_pack(requests, bucket)

    monkeypatch.setattr(objects, "Keeper", keeper)
    monkeypatch.setattr(object_writes, "_send_pack", slow_pack)
    assert objects.run_object_movers(max_seconds=0) == 1
    assert leases[1] > leases[0]          # renewed while the batch worked
    assert rounds[1] > rounds[0]          # kept going while the row was held: not waiting
    assert Req.objects.get(pk=request.pk).state == "done"
