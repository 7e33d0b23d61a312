"""The storage manager: drives pull work through the scheduler, from admission to ARCHIVED;
recalls committed by batch (issue #28), a few statements per batch instead of a transaction per
file, each file counted only once its bytes matched the catalog."""
import hashlib

import pytest
from django.db import connection
from django.db.models import Sum
from django.test.utils import CaptureQueriesContext

from backend.archive import operations, services, tape
from backend.archive.models import (
    ArchiveRequest,
    CacheEntry,
    Drive,
    FileCopy,
    Volume,
    VolumeGroup,
)
from backend.archive.services import (
    arrivals,
    background,
    drives,
    manager,
    paths,
    queueing,
    reading,
)
from backend.archive.services.cache import cache_usage
from backend.archive.services.recall import open_verified
from backend.archive.signals import files_recalled
from backend.catalog import checksums
from backend.catalog.models import File, Granule
from backend.errors import Conflict
from backend.metrics.models import TransferRecord, TransferRollup
from tests.archive_fixtures import (
    archive_granules,
    archived_collection,
    movers_without_waits,
    small_layout,
    staged_granule,
)
from tests.tape_fixtures import BOTH

pytestmark = pytest.mark.django_db


@pytest.fixture
def archive(data_root, settings, tape_kind):
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    return collection, data_root


@BOTH
def test_granules_reach_archived_with_one_mount_per_group(archive):
    collection, root = archive
    granules = [staged_granule(collection, root / "staging", sizes=(20000, 3000))
                for _ in range(5)]
    for granule, sources in granules:
        assert services.archive_granule(granule, sources).admitted
    services.run_until_idle()
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 5
    assert FileCopy.objects.filter(state="verified").count() == 20
    # write aggregation: all ten files of a group went to one volume in one mount
    used = Volume.objects.filter(mount_count__gt=0)
    assert sorted(v.mount_count for v in used) == [1, 1]
    assert {v.group.name for v in used} == {"primary", "backup"}
    assert not ArchiveRequest.objects.exclude(state="done").exists()
    # the drives dismount once their write queue is empty
    assert not Drive.objects.filter(mounted_volume__isnull=False).exists()


def test_a_decision_reads_every_recall_and_the_writes_its_silo_can_take(
        archive, settings, monkeypatch):
    """snapshot: a drive's decision does not read the migrations bound to another silo (half
    the queue when each silo holds a copy); a policy passes over them anyway, so it decides as
    it would on the whole queue."""
    from backend.archive import scheduler

    collection, root = archive
    granule, sources = staged_granule(collection, root / "staging", sizes=(1000,))
    assert services.archive_granule(granule, sources).admitted
    f = File.objects.get(granule=granule)
    by_silo = {r.volume_group.silo_id: r.pk for r in ArchiveRequest.objects.filter(
        kind=ArchiveRequest.Kind.MIGRATE)}
    loose = ArchiveRequest.objects.create(   # a group in no silo: any drive may write it
        kind=ArchiveRequest.Kind.MIGRATE, priority=ArchiveRequest.Priority.MIGRATION, file=f,
        copy_number=3, volume_group=VolumeGroup.objects.create(name="loose"),
        bytes_total=f.size)
    recall = ArchiveRequest.objects.create(
        kind=ArchiveRequest.Kind.RECALL, priority=ArchiveRequest.Priority.USER, file=f,
        bytes_total=f.size)
    assert len(by_silo) == 2
    whole = manager._queued_for
    policy = scheduler.POLICIES[settings.GRANARY_SCHEDULER]
    for drive in Drive.objects.select_related("model"):
        snap = manager.snapshot(drive.pk)
        assert {r.id for r in snap.requests} == {by_silo[drive.silo_id], loose.pk, recall.pk}
        config = manager.scheduler_config(drive.model)
        with monkeypatch.context() as m:
            m.setattr(manager, "_queued_for", lambda _: whole(None))
            everything = manager.snapshot(drive.pk, now=snap.now)
        assert len(everything.requests) == 4
        assert policy(snap, config) == policy(everything, config)


def _reference_requests(drive):
    """The scheduler's requests built as the snapshot built them before it read plain tuples:
    model instances, the group and its silo through their relations, the arrival time by
    datetime.timestamp() in Python."""
    from backend.archive import scheduler as s

    klass = {0: "operator", 1: "user", 2: "migration", 3: "audit"}
    out = []
    for r in (manager._queued_for(drive).select_related("volume_group__silo")
              .order_by("priority", "created_at", "pk")):
        if r.kind == ArchiveRequest.Kind.MIGRATE:
            group = r.volume_group
            out.append(s.Request(r.pk, s.WRITE, klass[r.priority], r.created_at.timestamp(),
                                 group=group.name if group else None,
                                 size=r.bytes_total - r.bytes_done,
                                 silo=group.silo.name if group and group.silo else None))
            continue
        copies = FileCopy.objects.filter(file_id=r.file_id, state=FileCopy.State.VERIFIED,
                                         volume__isnull=False).order_by("copy_number",
                                                                        "file_offset")
        if r.kind == ArchiveRequest.Kind.AUDIT:
            out.append(s.Request(r.pk, s.READ, "audit", r.created_at.timestamp(), copies=tuple(
                s.Copy(c.volume.label, c.data_offset, c.length) for c in copies
                if c.copy_number == r.copy_number and c.volume_id == r.volume_id),
                size=r.bytes_total))
        else:
            out.append(s.Request(r.pk, s.READ, klass[r.priority], r.created_at.timestamp(),
                                 copies=tuple(s.Copy(c.volume.label, c.data_offset, c.length)
                                              for c in copies if c.file_offset <= r.bytes_done
                                              < c.file_offset + c.length),
                                 size=r.bytes_total, share=r.share))
    return out


def test_a_snapshot_of_plain_rows_gives_the_requests_and_decisions_of_model_objects(
        archive, settings):
    """snapshot reads the queue as tuples, the arrival time as epoch seconds from the database
    and the groups by id: the requests (to the float of each arrival time, odd microseconds
    and ties included) and so the decisions are those built from model objects."""
    import dataclasses
    from datetime import UTC, datetime, timedelta

    from backend.archive import scheduler

    collection, root = archive
    archive_granules(collection, root / "staging", [3000, 5000])
    files = list(File.objects.order_by("pk"))
    for _ in range(3):
        granule, sources = staged_granule(collection, root / "staging", sizes=(1000, 7000))
        assert services.archive_granule(granule, sources).admitted
    copy = FileCopy.objects.filter(file=files[0], state=FileCopy.State.VERIFIED).first()
    loose = VolumeGroup.objects.create(name="loose")
    Req = ArchiveRequest
    extra = [
        Req(kind=Req.Kind.MIGRATE, priority=Req.Priority.MIGRATION, file=files[1],
            copy_number=3, volume_group=loose, bytes_total=5000, bytes_done=1200),
        Req(kind=Req.Kind.MIGRATE, priority=Req.Priority.OPERATOR, file=files[1],
            copy_number=4, volume_group=loose, bytes_total=5000),
        Req(kind=Req.Kind.RECALL, priority=Req.Priority.USER, file=files[0], bytes_total=3000,
            share="order"),
        Req(kind=Req.Kind.RECALL, priority=Req.Priority.OPERATOR, file=files[1],
            bytes_total=5000, bytes_done=10),
        Req(kind=Req.Kind.AUDIT, priority=Req.Priority.BACKGROUND, file=files[0],
            copy_number=copy.copy_number, volume=copy.volume, bytes_total=3000),
    ]
    Req.objects.bulk_create(extra)
    # odd microseconds, and half the queue at one instant so ties are broken by id
    base = datetime(2026, 11, 30, 3, 4, 5, 123457, tzinfo=UTC)
    for i, pk in enumerate(Req.objects.filter(state=Req.State.QUEUED).order_by("-pk")
                           .values_list("pk", flat=True)):
        at = base if i % 2 else base + timedelta(seconds=i * 7.000013, microseconds=i * 333)
        Req.objects.filter(pk=pk).update(created_at=at)
    assert Req.objects.filter(state=Req.State.QUEUED).count() == 17
    policy = scheduler.POLICIES[settings.GRANARY_SCHEDULER]
    for drive in Drive.objects.select_related("model"):
        snap = manager.snapshot(drive.pk)
        want = _reference_requests(drive)
        assert len(want) == 11   # its silo's 6 migrations, the 2 loose ones, the 3 reads
        assert list(snap.requests) == want
        assert [r.submitted for r in snap.requests] == [r.submitted for r in want]
        config = manager.scheduler_config(drive.model)
        decision = policy(snap, config)
        assert decision.serve
        assert decision == policy(dataclasses.replace(snap, requests=want), config)


def test_repair_looks_at_bad_copies_and_at_copies_on_unreadable_volumes_only(archive):
    """background.damaged_copies, read at every tick: BAD segments and verified ones on a
    suspect volume are what the repair writes again; the good copies beside them are not."""
    collection, root = archive
    for _ in range(3):
        granule, sources = staged_granule(collection, root / "staging", sizes=(1000,))
        assert services.archive_granule(granule, sources).admitted
    services.run_until_idle()
    copies = list(FileCopy.objects.filter(state=FileCopy.State.VERIFIED).order_by("pk"))
    assert len(copies) == 6 and not background.damaged_copies().exists()
    FileCopy.objects.filter(pk=copies[0].pk).update(state=FileCopy.State.BAD)
    suspect = next(c.volume_id for c in copies if c.volume_id != copies[0].volume_id)
    Volume.objects.filter(pk=suspect).update(state=Volume.State.SUSPECT)
    want = {copies[0].pk} | {c.pk for c in copies if c.volume_id == suspect}
    assert {c.pk for c in background.damaged_copies()} == want
    assert len(want) < len(copies)


@BOTH
def test_recall_from_tape_only(archive):
    collection, root = archive
    granule, sources = staged_granule(collection, root / "staging", sizes=(7 << 20,))
    services.archive_granule(granule, sources)
    services.run_until_idle()
    f = granule.files.get()
    CacheEntry.objects.filter(file=f).delete()
    services.cache_path(f).unlink()
    sources[f.pk].unlink()

    [wait] = services.make_available([f])
    assert not wait.ready and wait.eta_s > 0
    services.run_until_idle()
    assert services.make_available([f])[0].ready
    with open_verified(f) as handle:
        assert checksums.of_bytes("MD5", handle.read()) == f.checksum
    assert ArchiveRequest.objects.get(kind="recall").state == "done"


def test_a_recall_that_lands_between_the_checks_is_not_queued_again(archive, monkeypatch):
    """Found by the chaos run: an order's refresh read the cache (not there), a recall then
    committed its DONE and the cache entry together, and the refresh found no active recall and
    queued the same recall again (read committed: each statement sees the latest commits)."""
    from backend.archive.services import recall

    collection, root = archive
    granule, sources = staged_granule(collection, root / "staging", sizes=(4000,))
    services.archive_granule(granule, sources)
    services.run_until_idle()
    f = granule.files.get()
    real, calls = recall._touch_cached, []

    def before_the_recall_committed(file_ids):   # the first look predates the recall's commit
        calls.append(list(file_ids))
        return set() if len(calls) == 1 else real(file_ids)

    monkeypatch.setattr(recall, "_touch_cached", before_the_recall_committed)
    [answer] = services.make_available([f])
    assert answer.ready and len(calls) == 2
    assert not ArchiveRequest.objects.filter(kind="recall").exists()


def test_many_recalls_on_one_volume_share_a_mount_in_position_order(archive):
    collection, root = archive
    granules = [staged_granule(collection, root / "staging", sizes=(100000,))[0:2]
                for _ in range(6)]
    for granule, sources in granules:
        services.archive_granule(granule, sources)
    services.run_until_idle()
    files = [g.files.get() for g, _ in granules]
    CacheEntry.objects.all().delete()
    mounts_before = sum(Volume.objects.values_list("mount_count", flat=True))
    services.make_available(list(reversed(files)))
    services.run_until_idle()
    assert sum(Volume.objects.values_list("mount_count", flat=True)) == mounts_before + 1
    recalls = ArchiveRequest.objects.filter(kind="recall").order_by("finished_at", "pk")
    assert all(r.state == "done" for r in recalls)
    positions = [FileCopy.objects.filter(file=r.file, volume__mount_count__gt=1)
                 .values_list("position", flat=True).first() for r in recalls]
    assert positions == sorted(positions)


def test_offline_drive_gets_no_work(archive):
    collection, root = archive
    Drive.objects.filter(silo__name="silo1").update(state=Drive.State.OFFLINE)
    granule, sources = staged_granule(collection, root / "staging", sizes=(10,))
    services.archive_granule(granule, sources)
    services.run_until_idle()
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVING
    assert ArchiveRequest.objects.get(copy_number=1).state == "queued"
    Drive.objects.filter(silo__name="silo1").update(state=Drive.State.IDLE)
    services.run_until_idle()
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVED


def _archive_some(collection, root, n=3, size=300000):
    granules = [staged_granule(collection, root / "staging", sizes=(size,)) for _ in range(n)]
    for granule, sources in granules:
        services.archive_granule(granule, sources)
    services.run_until_idle()
    return [g for g, _ in granules]


@BOTH
def test_repack_moves_live_copies_then_recycles_the_volume(archive):
    collection, root = archive
    granules = _archive_some(collection, root)
    old = Volume.objects.get(label="A00001")
    assert old.file_count == 3
    CacheEntry.objects.all().delete()   # the repack must recall what it moves

    repack = operations.start_repack(old)
    old.refresh_from_db()
    assert old.state == Volume.State.READ_ONLY
    background.advance_background()       # queues recalls; nothing released yet
    assert FileCopy.objects.filter(volume=old, state="verified").count() == 3

    services.run_until_idle()
    old.refresh_from_db()
    repack.refresh_from_db()
    assert repack.state == "done" and repack.bytes_done == repack.bytes_total
    assert old.state == Volume.State.SCRATCH and old.group is None and old.live_bytes == 0
    assert [m.name for m in paths.medium_of(old).scan()] == [tape.LABEL_NAME]
    for granule in granules:
        f = granule.files.get()
        [copy1] = FileCopy.objects.filter(file=f, copy_number=1, state="verified")
        assert copy1.volume.label != "A00001" and copy1.volume.group.name == "primary"
        assert paths.medium_of(copy1.volume).read(copy1.data_offset, copy1.length,
                                                  "MD5") == f.checksum
    assert not FileCopy.objects.filter(volume=old).exclude(state="released").exists()


def test_a_repack_survives_the_beat_and_completes(archive):
    """Regression: stale-work recovery took the repack (running, held by no drive by design)
    for a dead mover's work and requeued it on every beat, until it failed after MAX_ATTEMPTS
    and its emptied volume was never recycled."""
    collection, root = archive
    _archive_some(collection, root)
    old = Volume.objects.get(label="A00001")
    CacheEntry.objects.all().delete()
    repack = operations.start_repack(old)
    for _ in range(queueing.MAX_ATTEMPTS + 1):  # beats while the recalls wait for a drive
        manager.recover_stale_work()
        background.advance_background()
    repack.refresh_from_db()
    assert (repack.state, repack.attempts) == ("running", 0)

    services.run_until_idle()
    manager.recover_stale_work()
    background.advance_background()
    repack.refresh_from_db()
    old.refresh_from_db()
    assert repack.state == "done" and old.state == Volume.State.SCRATCH


def test_repack_refuses_a_scratch_volume(archive):
    with pytest.raises(Conflict, match="only filling, full, read-only or suspect"):
        operations.start_repack(Volume.objects.get(label="A00004"))


def test_audit_finds_a_corrupt_copy_and_repairs_it_from_the_good_one(archive):
    collection, root = archive
    [granule] = _archive_some(collection, root, n=1)
    f = granule.files.get()
    copy1 = FileCopy.objects.get(file=f, copy_number=1)
    with open(paths.volume_path(copy1.volume), "r+b") as volume_file:
        volume_file.seek(copy1.data_offset + 100)
        byte = volume_file.read(1)
        volume_file.seek(copy1.data_offset + 100)
        volume_file.write(bytes([byte[0] ^ 0xFF]))
    CacheEntry.objects.all().delete()
    services.cache_path(f).unlink()

    assert operations.start_audit(volume=copy1.volume) == 1
    services.run_until_idle()

    audit = ArchiveRequest.objects.get(kind="audit")
    assert audit.state == "done" and "bad copy on A00001; repair queued" in audit.error
    copy1.refresh_from_db()
    assert copy1.state == "released"
    [repaired] = FileCopy.objects.filter(file=f, copy_number=1, state="verified")
    assert repaired.pk != copy1.pk
    assert tape.read(paths.volume_path(repaired.volume), repaired.data_offset,
                     repaired.length, "MD5") == f.checksum
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVED


@BOTH
def test_audit_of_good_copies_marks_them_checked(archive):
    collection, root = archive
    _archive_some(collection, root, n=2)
    assert operations.start_audit(sample=10) == 4
    services.run_until_idle()
    assert ArchiveRequest.objects.filter(kind="audit", state="done", error="").count() == 4
    assert FileCopy.objects.filter(state="verified").count() == 4


def test_recall_waits_for_cache_room_however_long_and_never_fails(archive, settings):
    collection, root = archive
    [granule] = _archive_some(collection, root, n=1, size=3 << 20)
    f = granule.files.get()
    CacheEntry.objects.all().delete()
    services.cache_path(f).unlink()
    settings.GRANARY_CACHE_BYTES = 1 << 20           # the file cannot fit
    services.make_available([f])
    drive = Drive.objects.get(name="silo1-d1")
    volume = FileCopy.objects.get(file=f, copy_number=1).volume
    drives.mount(drive, volume)
    for _ in range(queueing.MAX_ATTEMPTS + 2):
        won = queueing.claim(list(ArchiveRequest.objects.filter(kind="recall")), drive)
        assert reading.read_copies(drive, volume, won) == []
    recall = ArchiveRequest.objects.get(kind="recall")
    assert recall.state == "queued" and recall.attempts == 0
    assert recall.error == "waiting for cache space"
    settings.GRANARY_CACHE_BYTES = 1 << 30
    services.run_until_idle()
    recall.refresh_from_db()
    assert recall.state == "done"


def test_a_file_pinned_while_dirty_ends_pinned_and_the_others_clean(archive):
    collection, root = archive
    granules = [staged_granule(collection, root / "staging", sizes=(2000,)) for _ in range(3)]
    for granule, sources in granules:
        assert services.archive_granule(granule, sources).admitted
    (kept,) = granules[0][1]
    CacheEntry.objects.filter(file_id=kept).update(pinned=True)
    assert set(CacheEntry.objects.values_list("state", flat=True)) == {CacheEntry.State.DIRTY}
    services.run_until_idle()
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 3
    states = dict(CacheEntry.objects.values_list("file_id", "state"))
    assert states.pop(kept) == CacheEntry.State.PINNED
    assert sorted(states.values()) == [CacheEntry.State.CLEAN] * 2


def test_a_write_batch_adds_to_the_shared_roll_ups_last(archive):
    """Every mover adds to the same roll-up rows, each held locked until its transaction
    commits: a batch adds to them only after its granules are marked ARCHIVED and their
    events written, so the other drive does not wait out the rest of the batch."""
    collection, root = archive
    granules = [staged_granule(collection, root / "staging", sizes=(2000,)) for _ in range(3)]
    for granule, sources in granules:
        assert services.archive_granule(granule, sources).admitted
    with CaptureQueriesContext(connection) as queries:
        services.run_until_idle()
    statements = [q["sql"] for q in queries.captured_queries]
    (archived,) = [i for i, sql in enumerate(statements)
                   if sql.startswith('UPDATE "catalog_granule" SET "state"')]
    # the batch that wrote the last copies: from its copies' insert to its ARCHIVED update
    copies = max(i for i, sql in enumerate(statements[:archived])
                 if sql.startswith(("INSERT INTO \"archive_filecopy\"",
                                    "COPY \"archive_filecopy\"")))
    rollups = [i for i, sql in enumerate(statements) if "metrics_transferrollup" in sql]
    assert not [i for i in rollups if copies < i < archived]
    assert [i for i in rollups if i > archived]
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 3
    day = TransferRollup.objects.filter(period="day", direction="migrate")
    assert day.aggregate(n=Sum("bytes"))["n"] == 2 * 3 * 2000


def _evict(files):
    CacheEntry.objects.filter(file__in=files).delete()
    for f in files:
        services.cache_path(f).unlink()


def _recall_queries(files):
    _evict(files)
    with CaptureQueriesContext(connection) as queries:
        services.make_available(files)
        services.run_until_idle()
    return len(queries)


def _files(originals):
    return list(File.objects.filter(pk__in=list(originals)).order_by("pk"))


def test_a_recall_costs_statements_per_batch_not_per_file(archive):
    collection, root = archive
    staging = root / "staging"
    files = _files(archive_granules(collection, staging, [3000 + n for n in range(16)]))
    few = _recall_queries(files[:4])
    many = _recall_queries(files[4:])
    # three times the files, and not one statement more per file (it was about fifteen)
    assert many - few <= 4, (few, many)
    assert ArchiveRequest.objects.filter(kind="recall", state="done").count() == 16


def test_recalls_commit_in_batches_each_file_verified_and_counted_once(
        archive, monkeypatch, django_capture_on_commit_callbacks):
    collection, root = archive
    staging = root / "staging"
    originals = archive_granules(collection, staging, [1000 * (n + 1) for n in range(5)])
    files = _files(originals)
    _evict(files)
    sent = []

    def heard(sender, file_ids, **kwargs):
        sent.append(sorted(file_ids))

    files_recalled.connect(heard, dispatch_uid="test.files_recalled")
    monkeypatch.setattr(arrivals, "COMMIT_FILES", 2)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            services.make_available(files)
            services.run_until_idle()
    finally:
        files_recalled.disconnect(dispatch_uid="test.files_recalled")
    assert sorted(len(ids) for ids in sent) == [1, 2, 2]
    assert sorted(i for ids in sent for i in ids) == [f.pk for f in files]
    for f in files:
        entry = CacheEntry.objects.get(file=f)
        assert (entry.state, entry.size, entry.verified_at is not None) == ("clean", f.size, True)
        assert hashlib.md5(services.cache_path(f).read_bytes()).hexdigest() == originals[f.pk]
    recalls = ArchiveRequest.objects.filter(kind="recall")
    assert sorted(recalls.values_list("state", "bytes_done")) == sorted(
        ("done", 1000 * (n + 1)) for n in range(5))
    recalled = TransferRecord.objects.filter(direction="recall")
    assert recalled.aggregate(n=Sum("transfers"), total=Sum("bytes")) == {"n": 5, "total": 15000}


def test_a_batch_of_recalls_records_a_transfer_per_file_in_the_roll_ups(archive):
    """Sixty recalls commit together (their transfers written in one go, COPY on PostgreSQL):
    a record per collection and commit counting its files, which add up to the sixty files'
    sizes, and the day's roll-up holds sixty transfers and their sum."""
    collection, root = archive
    sizes = [700 + 13 * n for n in range(60)]
    files = _files(archive_granules(collection, root / "staging", sizes))
    for f in files:
        services.cache_path(f).unlink()
    CacheEntry.objects.filter(file__in=files).delete()
    services.make_available(files)
    services.run_until_idle()
    recalled = TransferRecord.objects.filter(direction="recall")
    assert recalled.aggregate(n=Sum("transfers"), total=Sum("bytes")) == {
        "n": 60, "total": sum(sizes)}
    assert recalled.count() < 60
    assert set(recalled.values_list("collection_id", flat=True)) == {collection.pk}
    assert all(r.started_at <= r.ended_at for r in recalled)
    day = TransferRollup.objects.filter(period="day", direction="recall")
    assert (day.aggregate(n=Sum("bytes"))["n"], day.aggregate(n=Sum("transfers"))["n"]) == (
        sum(sizes), 60)


def test_a_stale_entry_is_replaced_by_the_recall_and_the_cache_totals_agree(archive):
    """An entry left staging (bytes that never arrived) does not count as cached: the recall
    replaces it with a clean one, and the cache's totals (kept by triggers on PostgreSQL) follow
    the upsert."""
    collection, root = archive
    staging = root / "staging"
    files = _files(archive_granules(collection, staging, [4000, 5000]))
    stale = files[0]
    _evict(files)
    CacheEntry.objects.create(file=stale, state=CacheEntry.State.STAGING, size=1,
                              last_access="2026-01-01T00:00:00Z")
    services.make_available(files)
    services.run_until_idle()
    entries = {e.file_id: (e.state, e.size) for e in CacheEntry.objects.all()}
    assert entries == {files[0].pk: ("clean", 4000), files[1].pk: ("clean", 5000)}
    usage = cache_usage()
    assert (usage.used, usage.clean, usage.staging) == (9000, 9000, 0)


def test_a_landed_recall_is_committed_before_a_long_read_keeps_it_waiting(
        archive, monkeypatch, django_capture_on_commit_callbacks):
    collection, root = archive
    small, large = _files(archive_granules(collection, root / "staging", [1000, 30000]))
    _evict([small, large])
    sent = []
    files_recalled.connect(lambda sender, file_ids, **kw: sent.append(file_ids),
                           dispatch_uid="test.files_recalled", weak=False)
    monkeypatch.setattr(arrivals, "COMMIT_BYTES", 20000)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            services.make_available([large, small])
            services.run_until_idle()
    finally:
        files_recalled.disconnect(dispatch_uid="test.files_recalled")
    assert sent == [[small.pk], [large.pk]]     # in tape order, the small one not held back
