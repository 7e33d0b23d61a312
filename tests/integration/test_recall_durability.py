"""A batch of recalled files counts only once their bytes are durable: the commit syncs them
before its transaction, and when a sync fails nothing of the batch is recorded as cached; the
recall is done again and the cached bytes are the archived ones (MD5 by hashlib over the
staged bytes). On PostgreSQL a commit due while the mover reads on runs beside the reads, and
keeps the same promises."""
import errno
import hashlib
import os
import threading

import pytest
from django.db import connection

from backend.archive import services
from backend.archive.models import ArchiveRequest, CacheEntry
from backend.archive.services import arrivals, reading
from backend.archive.signals import files_recalled
from backend.catalog.models import File
from backend.metrics.models import TransferRecord
from tests.archive_fixtures import (
    archive_granules,
    archived_collection,
    movers_without_waits,
    small_layout,
)
from tests.tape_fixtures import BOTH

pytestmark = pytest.mark.django_db


def _archived_then_uncached(data_root, settings, base):
    """Twelve small files archived on two copies, then gone from the cache: ({id: MD5 of the
    staged bytes}, the files)."""
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    originals = archive_granules(collection, data_root / "staging",
                                 [base + n for n in range(12)])
    files = list(File.objects.filter(pk__in=originals))
    CacheEntry.objects.filter(file__in=files).delete()
    for f in files:
        services.cache_path(f).unlink()
    return originals, files


def test_a_failed_sync_records_nothing_of_the_batch_and_the_recalls_are_done_again(
        data_root, settings, tape_kind, monkeypatch):
    originals, files = _archived_then_uncached(data_root, settings, 2000)
    recorded, commit, fsync, syncs = [], arrivals.Arrivals.commit, arrivals._fsync, []

    def watched(self, **kwargs):
        try:
            return commit(self, **kwargs)
        except OSError:
            recorded.append(CacheEntry.objects.filter(file__in=files).count())
            raise

    def failing_once(path):
        syncs.append(path)
        if len(syncs) == 1:
            raise OSError(errno.EIO, "Input/output error")
        return fsync(path)

    monkeypatch.setattr(arrivals, "COMMIT_S", 600)      # one commit for the batch
    monkeypatch.setattr(arrivals.Arrivals, "commit", watched)
    monkeypatch.setattr(arrivals, "_fsync", failing_once)
    services.make_available(files)
    services.run_until_idle()
    services.run_until_idle()     # the mover that failed stopped its run: the retry's
    # the first commit's sync failed: nothing was recorded then; the second recorded them all
    assert recorded == [0] and len(syncs) > len(files)
    recalls = ArchiveRequest.objects.filter(kind="recall")
    assert set(recalls.values_list("state", "attempts")) == {("done", 1)}
    for f in files:
        assert CacheEntry.objects.get(file=f).state == CacheEntry.State.CLEAN
        assert hashlib.md5(services.cache_path(f).read_bytes()).hexdigest() == originals[f.pk]


def _archived_and_evicted(data_root, settings, sizes):
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    originals = archive_granules(collection, data_root / "staging", sizes)
    files = list(File.objects.filter(pk__in=originals).order_by("pk"))
    CacheEntry.objects.filter(file__in=files).delete()
    for f in files:
        services.cache_path(f).unlink()
    return files, originals


@pytest.fixture
def commits_beside(monkeypatch):
    """Where a commit may run beside the reads: outside a test's transaction, tasks not run in
    place, every landing due for its commit (as a large file's is)."""
    from celery import current_app

    monkeypatch.setattr(arrivals, "COMMIT_BYTES", 1)
    before, current_app.conf.task_always_eager = current_app.conf.task_always_eager, False
    yield
    current_app.conf.task_always_eager = before


on_postgresql = pytest.mark.skipif(connection.vendor != "postgresql",
                                   reason="commits beside the reads run on PostgreSQL only")


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_landed_recall_commits_while_the_next_file_is_read(data_root, settings, tape_kind,
                                                             monkeypatch, commits_beside):
    files, originals = _archived_and_evicted(data_root, settings, [3000, 3001, 3002])
    reads, second_read, seen = [], threading.Event(), []
    read_segment = reading._read_segment

    def watched_read(drive, volume, segment, out, check=True):
        reads.append(segment.file_id)
        if len(reads) == 2:
            second_read.set()
        return read_segment(drive, volume, segment, out, check=check)

    def on_recalled(sender, file_ids, **kwargs):
        # the first file's commit waits here until the second file is being read: in the
        # mover's own thread it would wait out the timeout instead
        seen.append((threading.current_thread().name, list(file_ids),
                     second_read.wait(10) if not seen else None))

    monkeypatch.setattr(reading, "_read_segment", watched_read)
    files_recalled.connect(on_recalled)
    try:
        services.make_available(files)
        services.run_until_idle()
    finally:
        files_recalled.disconnect(on_recalled)
    assert len(reads) == len(files)
    assert sorted(i for _, ids, _ in seen for i in ids) == [f.pk for f in files]
    thread, _, overlapped = seen[0]
    assert thread.startswith("recall-commit") and overlapped is True
    recalls = ArchiveRequest.objects.filter(kind="recall")
    assert sorted(recalls.values_list("file_id", "state", "bytes_done")) == [
        (f.pk, "done", f.size) for f in files]
    recalled = TransferRecord.objects.filter(direction="recall")
    assert sum(recalled.values_list("transfers", flat=True)) == len(files)
    for f in files:
        assert CacheEntry.objects.get(file=f).state == CacheEntry.State.CLEAN
        assert hashlib.md5(services.cache_path(f).read_bytes()).hexdigest() == originals[f.pk]


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_commit_beside_the_reads_that_fails_records_nothing_of_its_files(
        data_root, settings, tape_kind, monkeypatch, commits_beside):
    files, originals = _archived_and_evicted(data_root, settings, [3100, 3101, 3102])
    fsync, syncs, entries_after_failure = arrivals._fsync, [], []

    def failing_once(path):
        syncs.append(path)
        if len(syncs) == 1:
            raise OSError(errno.EIO, "Input/output error")
        return fsync(path)

    wait = arrivals.Arrivals._wait

    def watched_wait(self):
        try:
            return wait(self)
        except OSError:
            entries_after_failure.append(CacheEntry.objects.filter(file__in=files).count())
            raise

    monkeypatch.setattr(arrivals, "_fsync", failing_once)
    monkeypatch.setattr(arrivals.Arrivals, "_wait", watched_wait)
    services.make_available(files)
    services.run_until_idle()
    # the failed commit was the first file's, found by the mover at its next commit: nothing
    # of it was recorded, and its recall was not done then
    assert entries_after_failure == [0]
    services.run_until_idle()     # the mover that failed stopped its run: the retry's
    assert set(ArchiveRequest.objects.filter(kind="recall").values_list("state", flat=True)) \
        == {"done"}
    for f in files:
        assert CacheEntry.objects.get(file=f).state == CacheEntry.State.CLEAN
        assert hashlib.md5(services.cache_path(f).read_bytes()).hexdigest() == originals[f.pk]


@BOTH
def test_a_batch_makes_each_cache_folder_once_even_one_gone(data_root, settings, tape_kind,
                                                            monkeypatch):
    """A recall batch of small files makes sure of each cache folder once, not once a file;
    a folder gone from the cache is made again, and every file comes back with its bytes."""
    digests, files = _archived_then_uncached(data_root, settings, 3000)
    folders = {str(services.cache_path(f).parent) for f in files}
    for folder in folders:
        os.rmdir(folder)
    made, makedirs = [], reading.os.makedirs
    monkeypatch.setattr(reading.os, "makedirs", lambda path, **kwargs: (
        made.append(path) if path in folders else None) or makedirs(path, **kwargs))
    services.make_available(files)
    services.run_until_idle()
    assert {f.pk: hashlib.md5(services.cache_path(f).read_bytes()).hexdigest()
            for f in files} == digests
    assert set(made) == folders and len(made) < len(files) / 2
