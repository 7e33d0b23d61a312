"""A batch of recalled files is made durable before it counts: a commit of many files syncs
their filesystem once (syncfs) instead of a fsync each, and when that sync fails nothing of the
batch is recorded as cached; the recall is done again and the cached bytes are the archived
ones (MD5 by hashlib over the staged bytes)."""
import errno
import hashlib
import os

import pytest

from backend.archive import services
from backend.archive.models import ArchiveRequest, CacheEntry
from backend.archive.services import arrivals
from backend.catalog.models import File
from tests.archive_fixtures import (
    archive_granules,
    archived_collection,
    movers_without_waits,
    small_layout,
)

pytestmark = pytest.mark.django_db
COUNT = arrivals.SYNCFS_FROM + 4


@pytest.fixture
def recalled_later(data_root, settings, tape_kind):
    """COUNT small files archived, then evicted from the cache: ({file id: MD5}, files)."""
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    originals = archive_granules(collection, data_root / "staging",
                                 [2000 + n for n in range(COUNT)])
    files = list(File.objects.filter(pk__in=originals))
    CacheEntry.objects.filter(file__in=files).delete()
    for f in files:
        services.cache_path(f).unlink()
    return originals, files


def _spy_syncs(monkeypatch, fail=False):
    calls = {"syncfs": 0, "fsync": 0}
    real_syncfs, real_fsync = arrivals._syncfs, os.fsync

    def syncfs(fd):
        calls["syncfs"] += 1
        if fail and calls["syncfs"] == 1:
            return _eio()
        return real_syncfs(fd)

    def fsync(fd):
        calls["fsync"] += 1
        return real_fsync(fd)

    monkeypatch.setattr(arrivals, "_syncfs", syncfs)
    monkeypatch.setattr(os, "fsync", fsync)
    return calls


def _eio():
    import ctypes

    ctypes.set_errno(errno.EIO)
    return -1


@pytest.mark.skipif(arrivals._syncfs is None, reason="syncfs(2) is Linux's")
def test_a_batch_of_recalls_is_synced_once_and_every_file_counts(recalled_later, monkeypatch):
    originals, files = recalled_later
    monkeypatch.setattr(arrivals, "COMMIT_S", 600)      # one commit for the batch
    calls = _spy_syncs(monkeypatch)
    services.make_available(files)
    services.run_until_idle()
    assert calls == {"syncfs": 1, "fsync": 0}
    for f in files:
        assert CacheEntry.objects.get(file=f).state == CacheEntry.State.CLEAN
        assert hashlib.md5(services.cache_path(f).read_bytes()).hexdigest() == originals[f.pk]


@pytest.mark.skipif(arrivals._syncfs is None, reason="syncfs(2) is Linux's")
def test_a_failed_sync_records_nothing_of_the_batch_and_the_recalls_are_done_again(
        recalled_later, monkeypatch):
    originals, files = recalled_later
    recorded, commit = [], arrivals.Arrivals.commit

    def watched(self):
        try:
            return commit(self)
        except OSError:
            recorded.append(CacheEntry.objects.filter(file__in=files).count())
            raise

    monkeypatch.setattr(arrivals, "COMMIT_S", 600)
    monkeypatch.setattr(arrivals.Arrivals, "commit", watched)
    calls = _spy_syncs(monkeypatch, fail=True)
    services.make_available(files)
    services.run_until_idle()
    services.run_until_idle()     # the mover that failed stopped its run: the retry's
    # the first commit's sync failed: nothing was recorded then; the second recorded them all
    assert calls["syncfs"] == 2 and recorded == [0]
    recalls = ArchiveRequest.objects.filter(kind="recall")
    assert set(recalls.values_list("state", "attempts")) == {("done", 1)}
    for f in files:
        assert CacheEntry.objects.get(file=f).state == CacheEntry.State.CLEAN
        assert hashlib.md5(services.cache_path(f).read_bytes()).hexdigest() == originals[f.pk]
