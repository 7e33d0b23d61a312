"""A batch of recalled files counts only once their bytes are durable: the commit syncs them
before its transaction, and when a sync fails nothing of the batch is recorded as cached; the
recall is done again and the cached bytes are the archived ones (MD5 by hashlib over the
staged bytes)."""
import errno
import hashlib

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


def test_a_failed_sync_records_nothing_of_the_batch_and_the_recalls_are_done_again(
        data_root, settings, tape_kind, monkeypatch):
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    originals = archive_granules(collection, data_root / "staging",
                                 [2000 + n for n in range(12)])
    files = list(File.objects.filter(pk__in=originals))
    CacheEntry.objects.filter(file__in=files).delete()
    for f in files:
        services.cache_path(f).unlink()
    recorded, commit, fsync, syncs = [], arrivals.Arrivals.commit, arrivals._fsync, []

    def watched(self):
        try:
            return commit(self)
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
