"""Cached bytes opened to be served (download, push): never bytes that fail the catalog checksum.

Hashing every download would halve its throughput (see distribution's open_download), so the
cache entry keeps the fingerprint (size:mtime_ns:inode) its file had when its bytes last
matched the catalog (`CacheEntry.checked`). A file that still has it is served as it is; any
other (a byte written in place moves the mtime, a replaced file has another inode) is hashed
again first, and a damaged one is never served.
"""
import logging
import os

from django.db import transaction

from backend.catalog import checksums

from ..models import CacheEntry
from .cache import touch_if_cached
from .completeness import complete_copies
from .paths import cache_path
from .policy import ArchiveError

log = logging.getLogger(__name__)


class CacheDamaged(ArchiveError):
    """The cached copy of a file no longer matches its catalog checksum."""


def fingerprint(st):
    """What `CacheEntry.checked` holds: the file's size, mtime and inode from a stat."""
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def open_for_serving(file):
    """The cached copy of `file`, opened for reading, its bytes those the catalog checksum
    names; ArchiveError when the cache lacks it, CacheDamaged when its bytes are not the
    catalog's (the copy is dropped when a verified tape copy can bring it back)."""
    path = cache_path(file)
    if not touch_if_cached(file):
        raise ArchiveError(f"{file.name} is not in the cache")
    checked = CacheEntry.objects.filter(file=file).values_list("checked", flat=True).first()
    try:
        handle = open(path, "rb")
    except FileNotFoundError as exc:
        raise ArchiveError(f"{file.name} is not in the cache") from exc
    try:
        seen = fingerprint(os.fstat(handle.fileno()))
        if seen != checked:
            _check(file, handle, seen)
    except BaseException:
        handle.close()
        raise
    return handle


def _hash(kind, fd):
    """(checksum, size) of the open file, read without moving its position."""
    digest, offset = checksums.hasher(kind), 0
    while block := os.pread(fd, checksums.CHUNK, offset):
        digest.update(block)
        offset += len(block)
    return digest.hexdigest(), offset


def _check(file, handle, seen):
    """Hash a cached file whose fingerprint changed: remember the fingerprint when its bytes
    are the catalog's, else set the damaged copy aside and refuse it."""
    fd = handle.fileno()
    digest, size = _hash(file.checksum_type, fd)
    if size == file.size and checksums.same(file.checksum_type, digest, file.checksum):
        if fingerprint(os.fstat(fd)) == seen:  # unchanged while it was read
            CacheEntry.objects.filter(file=file).update(checked=seen)
        return
    _set_aside(file, seen)


def _set_aside(file, seen):
    """Drop a damaged cached copy when a verified tape copy can bring it back (the next
    recall does); keep the cache's only copy for an operator. Raises CacheDamaged."""
    path = cache_path(file)
    with transaction.atomic():
        entry = CacheEntry.objects.select_for_update().filter(file=file).first()
        droppable = (entry is not None and entry.state != CacheEntry.State.DIRTY
                     and _still(path, seen) and bool(complete_copies([file])))
        if droppable:
            entry.delete()
    if droppable:
        if _still(path, seen):
            path.unlink(missing_ok=True)
        log.error("the cached copy of %s (file %s) fails its checksum; dropped, to be "
                  "recalled from tape", file.name, file.pk)
        raise CacheDamaged(f"The cached copy of {file.name} is damaged; it is recalled from "
                           "tape.")
    log.error("the cached copy of %s (file %s) fails its checksum and is its only copy; kept "
              "for an operator", file.name, file.pk)
    raise CacheDamaged(f"The cached copy of {file.name} is damaged and no tape copy is "
                       "verified yet; it is not served.")


def _still(path, seen):
    """The file at `path` is the one that was hashed (not one a recall put there since)."""
    try:
        return fingerprint(path.stat()) == seen
    except FileNotFoundError:
        return False
