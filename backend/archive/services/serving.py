"""Bytes opened to be served (download, push): never bytes that fail the catalog checksum.

A cached file goes bad in two ways. Written or replaced, it loses the fingerprint
(size:mtime_ns:inode, `CacheEntry.checked`) it had when its bytes last matched the catalog:
such a file is hashed again before anything is served. Rotten in place (a flipped bit on a
disk, or a byte written and the mtime set back), it keeps its fingerprint, and only reading it
shows the change. So:

- a whole file is read through CheckedReader, each BLOCK checked before it is handed out
  against the sum that block had in the last pass that matched the catalog checksum
  (`CacheEntry.blocks`, see block_sum). A check must cost less than sending: MD5 runs at
  0.2-0.7 GB/s a core here, SHA-256 at 0.5-1.1, CRC-32 at 0.6-2, XXH3 at 20+, and the disk
  at 1.1 (bench download, on 2 shared cores). A file without a block map yet is checked by its
  catalog checksum as it is read, its last block held back until the digest is known, and the map is
  recorded then;
- a range is served only from a file read in full within GRANARY_CACHE_SCRUB_S
  (`CacheEntry.verified_at`); an older one is hashed in full first. The scrub (scrub.py)
  keeps the cache within that bound.

A copy found damaged is dropped and recalled when a verified tape copy can bring it back; the
cache's only copy is kept for an operator. Either way CacheDamaged is raised.

A file not in the cache but with a readable object copy is served straight from the object
store (`open_object_for_serving`): an object store answers at once, so a direct download
needs no recall. Its bytes are hashed as they pass, and a whole file whose hash is not the
catalog's loses its last block (the client sees a short read, never a complete wrong file).
"""
import io
import logging
import os
from datetime import timedelta

import xxhash
from django.db import transaction
from django.utils import timezone

from backend.catalog import checksums

from ..media import MediumError
from ..models import CacheEntry
from .buckets import store_for
from .cache import touch_if_cached
from .completeness import complete_copies, object_copy_for
from .damage import mark_bad
from .paths import cache_path
from .policy import ArchiveError
from .queueing import Req
from .recall import make_available

log = logging.getLogger(__name__)

BLOCK = 4 << 20   # 2 KiB of map per GiB; hashlib and XXH3 at full speed


class CacheDamaged(ArchiveError):
    """The cached copy of a file no longer matches its catalog checksum."""


def fingerprint(st):
    """What `CacheEntry.checked` holds: the file's size, mtime and inode from a stat."""
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def block_sum(block):
    """A block's check: its 64-bit XXH3. Rot is random damage, not an attack, so a fast
    non-cryptographic hash serves; XXH3 runs at 20+ GB/s a core here (BLAKE3 at 2-3, the disk
    at 1.1), so checking costs little beside sending. A random change goes unseen about once in
    2**64."""
    return xxhash.xxh3_64_digest(block)


def hash_blocks(kind, fd, drop=False):
    """(checksum of `kind`, size, block map) of an open file, read from its start without
    moving its position; `drop` gives each block's pages back to the kernel once read."""
    digest, sums, offset = checksums.hasher(kind), bytearray(), 0
    while block := os.pread(fd, BLOCK, offset):
        digest.update(block)
        sums += block_sum(block)
        if drop:
            os.posix_fadvise(fd, offset, len(block), os.POSIX_FADV_DONTNEED)
        offset += len(block)
    return digest.hexdigest(), offset, bytes(sums)


def hash_path(kind, path):
    """hash_blocks of the file at `path` (a recall checks what it read with it)."""
    with open(path, "rb") as handle:
        return hash_blocks(kind, handle.fileno())


class BlockMap:
    """The block map of bytes fed in file order from offset 0, as hash_blocks takes it from the
    file (a recall takes it on the way in, instead of reading the file it wrote once more)."""

    def __init__(self):
        self.sums, self.size, self._block = bytearray(), 0, xxhash.xxh3_64()

    def update(self, data):
        data = memoryview(data)
        while len(data):
            room = BLOCK - self.size % BLOCK
            self._block.update(data[:room])
            self.size += min(room, len(data))
            if self.size % BLOCK == 0:
                self.sums += self._block.digest()
                self._block.reset()
            data = data[room:]

    def digest(self):
        """The map of everything fed (the last block short)."""
        return bytes(self.sums + (self._block.digest() if self.size % BLOCK else b""))


class MappedDigest:
    """A hasher of `kind` (checksums.hasher's) that takes the block map of the same bytes on
    the way, as hash_blocks does from a file: the archive's read-back of a whole file."""

    def __init__(self, kind):
        self.digest, self.map = checksums.hasher(kind), BlockMap()

    def update(self, data):
        self.digest.update(data)
        self.map.update(data)

    def hexdigest(self):
        return self.digest.hexdigest()


def _open(file, touch=True):
    """(handle, fingerprint now, entry row (checked, verified_at, blocks)) of a cached file."""
    if touch and not touch_if_cached(file):
        raise ArchiveError(f"{file.name} is not in the cache")
    row = (CacheEntry.objects.filter(file=file).exclude(state=CacheEntry.State.STAGING)
           .values_list("checked", "verified_at", "blocks").first())
    if row is None:
        raise ArchiveError(f"{file.name} is not in the cache")
    try:
        handle = open(cache_path(file), "rb")
    except FileNotFoundError as exc:
        raise ArchiveError(f"{file.name} is not in the cache") from exc
    try:
        return handle, fingerprint(os.fstat(handle.fileno())), row
    except BaseException:
        handle.close()
        raise


def open_for_serving(file, verified_within=None):
    """The cached copy of `file`, opened for reading as it is (a range, sent by sendfile), its
    bytes those the catalog checksum names: hashed in full first when changed since they last
    matched, or, given `verified_within` (seconds), when not read in full within that long.
    ArchiveError when the cache lacks it, CacheDamaged when its bytes are not the catalog's
    (the copy is dropped and recalled when a verified tape copy can bring it back)."""
    handle, seen, (checked, verified_at, _) = _open(file)
    try:
        stale = verified_within is not None and (
            verified_at is None
            or verified_at < timezone.now() - timedelta(seconds=verified_within))
        if seen != checked or stale:
            _check(file, handle, seen)
    except BaseException:
        handle.close()
        raise
    return handle


def open_checked(file):
    """The whole cached copy of `file` as a CheckedReader: each block is checked as it is
    read, so the reader never gets a whole wrong file. Errors as open_for_serving."""
    handle, seen, (checked, _, blocks) = _open(file)
    try:
        if seen != checked:
            blocks = _check(file, handle, seen)
    except BaseException:
        handle.close()
        raise
    return CheckedReader(file, handle, seen, None if blocks is None else bytes(blocks))


def verify_cached(file):
    """Read a cached file in full and check it against the catalog, without marking it used
    and without keeping its pages (the scrub); a damaged copy is set aside and recalled in
    the background (CacheDamaged). ArchiveError when it is no longer cached."""
    handle, seen, _ = _open(file, touch=False)
    with handle:
        _check(file, handle, seen, priority=Req.Priority.BACKGROUND, drop=True)


def _check(file, handle, seen, priority=Req.Priority.USER, drop=False):
    """Hash a cached file in full: record when it matched, its fingerprint and block map
    (returned) when its bytes are the catalog's, else set the damaged copy aside."""
    fd = handle.fileno()
    digest, size, blocks = hash_blocks(file.checksum_type, fd, drop)
    if size == file.size and checksums.same(file.checksum_type, digest, file.checksum):
        if fingerprint(os.fstat(fd)) == seen:  # unchanged while it was read
            CacheEntry.objects.filter(file=file).update(
                checked=seen, verified_at=timezone.now(), blocks=blocks)
        return blocks
    _set_aside(file, seen, priority)


class CheckedReader:
    """A whole cached file read in BLOCKs, each checked before read() hands any of it out:
    against the file's block map, or, without one, by the catalog checksum, the last block
    held back until the digest is known (the map is recorded then). A block that fails sets
    the copy aside and raises CacheDamaged: the reader gets a short file, never a whole wrong
    one. A whole read that passed refreshes the file's `verified_at`."""

    def __init__(self, file, handle, seen, blocks):
        self.file, self.handle, self.seen = file, handle, seen
        whole = blocks is not None and len(blocks) == 8 * -(-file.size // BLOCK)
        self.blocks = blocks if whole else None
        self.digest = None if whole else checksums.hasher(file.checksum_type)
        self.sums = bytearray()
        self.offset, self.held, self.at = 0, b"", 0
        self.buffer = None

    def fileno(self):
        return self.handle.fileno()

    def read(self, size=-1):
        if self.at == len(self.held):
            self.held, self.at = self._next_block(), 0
        n = len(self.held) - self.at
        if size is not None and 0 <= size < n:
            n = size
        if self.at == 0 and n == len(self.held):
            self.at = n
            return self.held            # the whole block, not a copy
        self.at += n
        return self.held[self.at - n:self.at]

    def close(self):
        self.handle.close()

    def read_next(self, reuse=False):
        """(offset, block, good) of the next block, read and checked: b"" at the end. No
        database work, so a sender may run it in another thread, one call at a time, and
        hand each result to settle() in its own. With `reuse` the block is a view of one
        buffer the next call overwrites (a sender that sends from the file needs only its
        length): no new 4 MiB of memory, and its page faults, per block."""
        size, offset = self.file.size, self.offset
        if offset >= size:
            return offset, b"", True
        wanted = min(BLOCK, size - offset)
        fd = self.handle.fileno()
        if reuse:
            self.buffer = self.buffer or memoryview(bytearray(BLOCK))
            block = self.buffer[:os.preadv(fd, [self.buffer[:wanted]], offset)]
        else:
            block = os.pread(fd, wanted, offset)
        end = offset + len(block)
        if end < size:      # the disk reads the block after while this one is checked and sent
            os.posix_fadvise(fd, end, BLOCK, os.POSIX_FADV_WILLNEED)
        if self.blocks is not None:
            at = 8 * (offset // BLOCK)
            good = len(block) == wanted and self.blocks[at:at + 8] == block_sum(block)
        else:
            self.digest.update(block)
            self.sums += block_sum(block)
            good = len(block) == wanted and (end < size or checksums.same(
                self.file.checksum_type, self.digest.hexdigest(), self.file.checksum))
        self.offset = end
        return offset, block, good

    def settle(self, offset, block, good):
        """A block read_next checked, before it is handed out: a failed one sets the copy
        aside (CacheDamaged); the last one that passed records the pass."""
        size = self.file.size
        if not good:
            log.error("the cached copy of %s (file %s) fails its check at byte %d of %d while "
                      "it is served; cut short", self.file.name, self.file.pk, offset, size)
            _set_aside(self.file, self.seen, Req.Priority.USER)
        if block and offset + len(block) == size:
            self._passed()

    def _next_block(self):
        offset, block, good = self.read_next()
        self.settle(offset, block, good)
        return block

    def _passed(self):
        """Every byte read matched: the file is verified now, and has a block map."""
        if fingerprint(os.fstat(self.handle.fileno())) != self.seen:
            return
        fields = {"verified_at": timezone.now()}
        if self.blocks is None:
            fields["blocks"] = bytes(self.sums)
        CacheEntry.objects.filter(file=self.file, checked=self.seen).update(**fields)


def _set_aside(file, seen, priority):
    """Drop a damaged cached copy when a verified tape copy can bring it back, and queue its
    recall at `priority`; keep the cache's only copy for an operator. Raises CacheDamaged."""
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
        make_available([file], priority=priority)
        log.error("the cached copy of %s (file %s) fails its checksum; dropped, a recall from "
                  "tape is queued", file.name, file.pk)
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
