"""A whole-file copy on tape keeps the block map of the bytes its write's read-back matched to
the catalog checksum, and a recall checks what it reads against that map instead of hashing it
with the catalog's type again (issue #28: SHA-256 was most of a large recall's CPU). Damage
on the medium is found either way, and nothing damaged reaches the cache. On both tapes."""
import hashlib
import logging

import pytest
import xxhash

from backend.archive import services
from backend.archive.models import ArchiveRequest, CacheEntry, FileCopy
from backend.catalog import checksums
from backend.catalog.models import File
from tests.archive_fixtures import (
    archived_collection,
    movers_without_waits,
    small_layout,
    staged_granule,
)
from tests.tape_fixtures import BOTH, flip_byte

pytestmark = pytest.mark.django_db

BLOCK = 4 << 20
SIZE = 2 * BLOCK + 777    # three blocks, the last one short


@pytest.fixture
def archived(data_root, settings, tape_kind):
    """One granule of one SIZE file archived with two tape copies: (file, its bytes)."""
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    granule, sources = staged_granule(collection, data_root / "staging", sizes=(SIZE,))
    ((file_id, path),) = sources.items()
    data = path.read_bytes()
    assert services.archive_granule(granule, sources).admitted
    services.run_until_idle()
    return File.objects.get(pk=file_id), data


def _map(data):
    """The block map worked out here: XXH3-64 of each 4 MiB block, from the xxhash library."""
    return b"".join(xxhash.xxh3_64_digest(data[i:i + BLOCK]) for i in range(0, len(data), BLOCK))


def _copies(f):
    return list(FileCopy.objects.filter(file=f).select_related("volume").order_by("copy_number"))


def _evict(f):
    CacheEntry.objects.filter(file=f).delete()
    services.cache_path(f).unlink()


def _recall(f, monkeypatch):
    """Recall `f` to the end; the checksum types hashed on the way."""
    kinds, real = [], checksums.hasher

    def spy(kind):
        kinds.append(kind if isinstance(kind, str) else "other")
        return real(kind)

    monkeypatch.setattr(checksums, "hasher", spy)
    services.make_available([f])
    services.run_until_idle()
    monkeypatch.setattr(checksums, "hasher", real)
    return kinds


@BOTH
def test_each_whole_file_copy_keeps_the_block_map_of_its_bytes(archived):
    f, data = archived
    copies = _copies(f)
    assert [(c.copy_number, c.state) for c in copies] == [(1, "verified"), (2, "verified")]
    assert len(_map(data)) == 3 * 8
    for c in copies:
        assert bytes(c.blocks) == _map(data)


@BOTH
def test_a_recall_checks_the_map_instead_of_hashing_and_lands_the_same_bytes(
        archived, monkeypatch):
    f, data = archived
    _evict(f)
    kinds = _recall(f, monkeypatch)
    assert hashlib.md5(services.cache_path(f).read_bytes()).digest() == hashlib.md5(data).digest()
    assert "MD5" not in kinds       # the catalog's type: not hashed again on the way in
    entry = CacheEntry.objects.get(file=f)
    assert (entry.state, bytes(entry.blocks)) == ("clean", _map(data))
    assert [c.state for c in _copies(f)] == ["verified", "verified"]


@BOTH
def test_a_byte_changed_on_one_copy_is_found_by_its_map_and_the_other_copy_serves(
        archived, monkeypatch, caplog):
    f, data = archived
    _evict(f)
    first, second = _copies(f)
    flip_byte(first.volume, first.data_offset + BLOCK + 5)
    with caplog.at_level(logging.ERROR):
        _recall(f, monkeypatch)
    assert hashlib.md5(services.cache_path(f).read_bytes()).digest() == hashlib.md5(data).digest()
    assert FileCopy.objects.get(pk=second.pk).state == "verified"
    # copy 1 was read first, found by its map, and written again from the recalled bytes
    assert "does not match the block map recorded when the copy was verified" in caplog.text
    assert FileCopy.objects.get(pk=first.pk).state in ("bad", "released")


@BOTH
def test_a_byte_changed_on_both_copies_leaves_nothing_in_the_cache(archived, monkeypatch, caplog):
    f, _ = archived
    _evict(f)
    for c in _copies(f):
        flip_byte(c.volume, c.data_offset + 3)
    with caplog.at_level(logging.ERROR):
        _recall(f, monkeypatch)
    assert [c.state for c in _copies(f)] == ["bad", "bad"]
    assert caplog.text.count("does not match the block map") == 2
    assert not CacheEntry.objects.filter(file=f).exists()
    assert not services.cache_path(f).exists()
    recall = ArchiveRequest.objects.get(kind="recall", file=f)
    assert (recall.state, recall.error.startswith("no readable copy")) == ("failed", True)


def test_a_copy_without_a_map_is_checked_by_its_checksum_as_before(data_root, settings,
                                                                    tape_kind, monkeypatch,
                                                                    caplog):
    """Copies recorded before maps were kept (or rebuilt from a volume's listing) have none."""
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    granule, sources = staged_granule(collection, data_root / "staging", sizes=(5000,))
    assert services.archive_granule(granule, sources).admitted
    services.run_until_idle()
    f = File.objects.get(granule=granule)
    FileCopy.objects.filter(file=f).update(blocks=None)
    _evict(f)
    for c in _copies(f):
        flip_byte(c.volume, c.data_offset + 10)
    with caplog.at_level(logging.ERROR):
        kinds = _recall(f, monkeypatch)
    assert "MD5" in kinds
    assert [c.state for c in _copies(f)] == ["bad", "bad"]
    assert caplog.text.count("checksum mismatch on read") == 2
    assert not services.cache_path(f).exists()
