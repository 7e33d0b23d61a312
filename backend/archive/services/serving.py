"""Bytes opened to be served (download, push): never bytes that fail the catalog checksum.

Hashing every download would halve its throughput (see distribution's open_download), so the
cache entry keeps the fingerprint (size:mtime_ns:inode) its file had when its bytes last
matched the catalog (`CacheEntry.checked`). A file that still has it is served as it is; any
other (a byte written in place moves the mtime, a replaced file has another inode) is hashed
again first, and a damaged one is never served.

A file not in the cache but with a readable object copy is served straight from the object
store (`open_object_for_serving`): an object store answers at once, so a direct download
needs no recall. Its bytes are hashed as they pass, and a whole file whose hash is not the
catalog's loses its last block (the client sees a short read, never a complete wrong file).
"""
import io
import logging
import os

from django.db import transaction

from backend.catalog import checksums

from ..media import MediumError
from ..models import CacheEntry
from .buckets import store_for
from .cache import touch_if_cached
from .completeness import complete_copies, object_copy_for
from .damage import mark_bad
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


def open_object_for_serving(file, start, end):
    """Bytes start..end of `file` from its first readable object copy, as an ObjectReader;
    None when it has none (tape only), ArchiveError when the store cannot be read now."""
    copy = object_copy_for(file)
    if copy is None:
        return None
    store = store_for(copy.bucket)
    try:
        body = store.open_body(copy.key, copy.data_offset + start, end + 1 - start,
                               copy.version_id)
    except MediumError as exc:
        raise ArchiveError(f"{file.name} cannot be read from the object store now: "
                           f"{exc}") from exc
    return ObjectReader(file, copy, store, body, start, whole=start == 0 and end == file.size - 1)


class ObjectReader:
    """An object copy's bytes as a file object (read, close; no fileno, so a server streams
    it instead of sendfile). A whole-file read is hashed on the way: the block that would
    complete it is withheld, and the copy marked bad, unless the bytes are the catalog's."""

    def __init__(self, file, copy, store, body, start, whole):
        self.file, self.copy, self.store, self.body = file, copy, store, body
        self.position, self.read_bytes = start, 0
        self.digest = checksums.hasher(file.checksum_type) if whole else None

    def fileno(self):
        raise io.UnsupportedOperation("an object store stream has no file descriptor")

    def seek(self, offset, whence=os.SEEK_SET):
        if whence != os.SEEK_SET or offset != self.position:
            raise io.UnsupportedOperation("an object store stream reads forward only")
        return self.position

    def read(self, size=-1):
        try:
            block = self.body.read(size if size is not None and size >= 0 else None)
        except Exception as exc:   # noqa: BLE001 - a connection dropped mid-body
            raise ArchiveError(f"{self.file.name}: {self.store.error(exc, self.copy.key)}") \
                from exc
        self.read_bytes += len(block)
        self.position += len(block)
        if self.digest is not None:
            self.digest.update(block)
            if self.read_bytes >= self.file.size:
                self._check()
        return block

    def _check(self):
        if self.read_bytes == self.file.size and checksums.same(
                self.file.checksum_type, self.digest.hexdigest(), self.file.checksum):
            return
        reason = (f"object {self.copy.key} in {self.copy.bucket.name} does not match the "
                  f"catalog checksum of {self.file.name}")
        mark_bad([self.copy], reason)
        raise CacheDamaged(f"{reason}; the download was cut short")

    def close(self):
        self.body.close()
