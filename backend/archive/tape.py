"""Self-describing volumes: each emulated cartridge is one POSIX pax tar file.

`tar tvf` lists a volume and `tar xf` extracts it without Granary. Every member carries, in
its pax headers, what the catalog needs to find it again (granule, collection, file, checksum,
copy number, segment), so the copy catalog can be rebuilt from the volumes alone. The first
member is the volume label. Data goes to disk in blocks of BLOCK bytes (the seeds: small
blocks cost several times the throughput of large ones).

A volume grows by appending at its end of data, which the catalog records only once a write
is verified: a crash mid-write leaves bytes past the recorded end, and the next write on that
volume truncates them, as a tape drive overwrites from the last good file mark.

No Django here: the storage manager and the tests drive it with plain paths and dicts.
"""
import functools
import io
import os
import tarfile
import time
from dataclasses import dataclass, field

from backend.catalog import checksums

BLOCK = 1 << 20          # write unit: 1 MiB
TAR_BLOCK = 512
END_OF_ARCHIVE = b"\0" * (2 * TAR_BLOCK)
LABEL_NAME = "GRANARY-VOLUME-LABEL"
HEADER_PREFIX = "SCHILY.xattr.user.granary."  # GNU tar: listed quietly, extracted as xattrs


class VolumeError(OSError):
    """The volume cannot be read or written as asked (bad media, corrupt member)."""


class VolumeMissing(VolumeError):
    """The volume itself cannot be opened: nothing on it can be read."""


class VolumeFull(VolumeError):
    """The cartridge reported the end of its medium: the member being written was taken back,
    and the volume takes no more (the rest of the batch goes to the next volume)."""


class VolumeTruncated(VolumeError):
    """The volume ends before its recorded end of data: what lay past the end is gone, and
    appending would leave a hole of zeros that no tar reader lists past."""


@dataclass
class Member:
    """One member of a volume as found on it."""

    name: str
    position: int          # offset of the member's first header block
    data_offset: int
    size: int
    headers: dict = field(default_factory=dict)

    @property
    def is_label(self):
        return self.name == LABEL_NAME


@dataclass
class Written:
    """Where a write put a member, and the checksum of the bytes that went out."""

    position: int
    data_offset: int
    length: int
    checksum: str
    end_of_data: int


USTAR_NAME_MAX = 100
USTAR_SIZE_MAX = 8**11 - 1


@functools.lru_cache(maxsize=4096, typed=True)  # a batch repeats most values
def _pax_record(key, value):
    """One pax record, "LEN key=value\n", where LEN counts the whole record, its own digits too."""
    body = f" {key}={value}\n".encode()
    digits = len(str(len(body)))
    if len(str(len(body) + digits)) > digits:
        digits += 1
    return b"%d%b" % (len(body) + digits, body)


def _template():
    """The fields every ustar header block of a volume shares; the checksum field is spaces."""
    block = bytearray(TAR_BLOCK)
    block[100:108] = b"0000444\0"
    block[108:116] = block[116:124] = b"0000000\0"
    block[148:156] = b" " * 8
    block[257:265] = b"ustar\x0000"
    block[265:272] = block[297:304] = b"granary"
    block[329:337] = block[337:345] = b"0000000\0"
    return bytes(block)


_TEMPLATE = _template()
_TEMPLATE_SUM = sum(_TEMPLATE)


def _ustar(name, size, mtime, typeflag):
    """A 512-byte ustar header block (names and sizes that do not fit go in the pax records).
    The checksum is the template's plus the bytes that differ: a header is built per file."""
    block = bytearray(_TEMPLATE)
    size_field, mtime_field = b"%011o\0" % size, b"%011o\0" % mtime
    block[0:len(name)] = name
    block[124:136] = size_field
    block[136:148] = mtime_field
    block[156:157] = typeflag
    checksum = _TEMPLATE_SUM + sum(name) + sum(size_field) + sum(mtime_field) + typeflag[0]
    block[148:156] = b"%06o\0 " % checksum
    return bytes(block)


def _header(name, size, headers):
    """The pax extended header and ustar header of one member, written directly: the storage
    manager writes one per file, and tarfile's general-purpose builder cost more than the
    4 KB files of a small-granule ingest."""
    records = [_pax_record(f"{HEADER_PREFIX}{k}", v) for k, v in headers.items()]
    encoded = name.encode("utf-8")
    if len(encoded) > USTAR_NAME_MAX or not name.isascii():
        records.insert(0, _pax_record("path", name))
        encoded = encoded[:USTAR_NAME_MAX].decode("utf-8", "ignore").encode("ascii", "replace")
    if size > USTAR_SIZE_MAX:
        records.append(_pax_record("size", size))
    pax = b"".join(records)
    mtime = int(time.time())
    return b"".join((
        _ustar(b"././@PaxHeader", len(pax), mtime, b"x"), pax, b"\0" * _pad(len(pax)),
        _ustar(encoded, size if size <= USTAR_SIZE_MAX else 0, mtime, b"0"),
    ))


def member_header(name, size, headers):
    """The header blocks of one member, as the volumes write them (for other writers of the
    same format: the SCSI tape medium)."""
    return _header(name, size, headers)


def _pad(length):
    return (-length) % TAR_BLOCK


class VolumeWriter:
    """Appends members at a volume's end of data in large blocks; `close()` syncs to disk."""

    def __init__(self, path, end_of_data, block=BLOCK):
        self.path = path
        self._block = block
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        size = os.fstat(self._fd).st_size
        if size < end_of_data:
            os.close(self._fd)
            raise VolumeTruncated(f"{path} ends at {size}, before its end of data {end_of_data}")
        os.ftruncate(self._fd, end_of_data)  # drop anything a crashed write left behind
        self._offset = end_of_data
        self._buffer = bytearray()

    @property
    def end_of_data(self):
        return self._offset + len(self._buffer)

    def _emit(self, data):
        self._buffer += data
        if len(self._buffer) >= self._block:
            cut = len(self._buffer) - len(self._buffer) % self._block
            self._write(memoryview(self._buffer)[:cut])
            del self._buffer[:cut]

    def _write(self, data):
        written = 0
        while written < len(data):
            written += os.pwrite(self._fd, data[written:], self._offset + written)
        self._offset += len(data)

    def add(self, name, source, length, checksum_type, headers, progress=None):
        """Append `length` bytes read from `source` (a binary file object) as member `name`.

        With checksum_type None no checksum is computed on the way out (the caller verifies
        by reading back); Written.checksum is then empty.
        """
        position = self.end_of_data
        head = _header(name, length, headers)
        self._emit(head)
        data_offset = position + len(head)
        digest = checksums.hasher(checksum_type) if checksum_type else None
        remaining = length
        if digest is None and not progress:
            remaining -= self._copy_in_kernel(source, length)
        while remaining:
            chunk = source.read(min(self._block, remaining))
            if not chunk:
                raise VolumeError(f"source of {name} ended {remaining} bytes early")
            if digest:
                digest.update(chunk)
            self._emit(chunk)
            remaining -= len(chunk)
            if progress:
                progress(len(chunk))
        self._emit(b"\0" * _pad(length))
        return Written(position, data_offset, length, digest.hexdigest() if digest else "",
                       self.end_of_data)

    def _copy_in_kernel(self, source, length):
        """Copy from a file straight to the volume, block by block, without passing the bytes
        through Python (copy_file_range). Returns how much it copied: 0 when the source is not
        a file or the system cannot, and the caller copies the rest itself."""
        try:
            src = source.fileno()
            src_offset = source.tell()
        except (AttributeError, OSError, ValueError):
            return 0
        if not hasattr(os, "copy_file_range") or length < self._block:
            return 0
        self._write(bytes(self._buffer))
        self._buffer.clear()
        done = 0
        try:
            while done < length:
                n = os.copy_file_range(src, self._fd, min(self._block, length - done),
                                       src_offset + done, self._offset)
                if n == 0:
                    break
                done += n
                self._offset += n
        except OSError:
            pass  # e.g. a kernel or filesystem without it: the rest goes the ordinary way
        source.seek(src_offset + done)
        return done

    def sync(self):
        """Everything added so far written out and on disk (the volume stays open)."""
        self._write(bytes(self._buffer))
        self._buffer.clear()
        os.fdatasync(self._fd)

    def close(self, sync=True):
        """Flush, write the end-of-archive marker (past end of data) and fsync."""
        if self._fd is None:
            return
        try:
            end = self.end_of_data
            self._write(bytes(self._buffer) + END_OF_ARCHIVE)
            self._buffer.clear()
            self._offset = end
            if sync:
                os.fsync(self._fd)
        finally:
            os.close(self._fd)
            self._fd = None

    def abandon(self):
        """Close without syncing (a failed write); the catalog's end of data stays behind it."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class Pack:
    """Small files gathered in memory into one tar, in the volumes' own format: an object
    store keeps them as one object (a PUT per few hundred files, not per file), and each file
    is read back by a ranged GET of its member's data."""

    def __init__(self):
        self._buffer = bytearray()

    def __len__(self):
        return len(self._buffer)

    def add(self, name, data, headers):
        """Append `data` as member `name`; (position, data_offset) of the member."""
        position = len(self._buffer)
        self._buffer += _header(name, len(data), headers)
        data_offset = len(self._buffer)
        self._buffer += data
        self._buffer += b"\0" * _pad(len(data))
        return position, data_offset

    def body(self):
        """The pack's bytes, the end-of-archive marker last."""
        return bytes(self._buffer) + END_OF_ARCHIVE


def cut(path, end_of_data):
    """Drop everything past `end_of_data` (members that did not read back) and end the archive
    there, so a tar reader lists exactly what the catalog keeps."""
    fd = os.open(path, os.O_RDWR)
    try:
        os.ftruncate(fd, end_of_data)
        os.pwrite(fd, END_OF_ARCHIVE, end_of_data)
        os.fsync(fd)
    finally:
        os.close(fd)


def label(path, volume_label, headers):
    """Write a fresh volume holding only its label member; returns its end of data."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    writer = VolumeWriter(path, 0)
    body = f"{volume_label}\n".encode()
    writer.add(LABEL_NAME, io.BytesIO(body), len(body), "MD5",
               {"label": volume_label, **headers})
    end = writer.end_of_data
    writer.close()
    return end


# Reading a member back from disk goes in larger pieces than the write blocks: fewer calls.
READ_BACK_BLOCK = 8 << 20


def read(path, data_offset, length, checksum_type, sink=None, block=BLOCK, drop_cache=False):
    """Read a member's bytes back; return their checksum. `sink(chunk)` receives the data.

    With drop_cache the page cache is dropped first so the check reads the disk, not memory.
    """
    fd = _open_for_reading(path)
    try:
        if drop_cache:
            _from_disk(fd, data_offset, length)
            block = max(block, READ_BACK_BLOCK)
        return _read_fd(fd, path, data_offset, length, checksum_type, sink, block)
    finally:
        os.close(fd)


def read_many(path, members, drop_cache=False, window=READ_BACK_BLOCK):
    """Checksums of many members [(data_offset, length, checksum_type)] of one volume, in order.

    One pass in offset order: members up to `window` bytes come out of shared reads of up to a
    window each (a batch of 4 KB files costs a few reads, not an open and a read per file);
    larger ones are streamed. With drop_cache the whole span is dropped from the page cache
    first, so the check reads the disk.
    """
    out = [None] * len(members)
    if not members:
        return out
    order = sorted(range(len(members)), key=lambda i: members[i][0])
    first = members[order[0]][0]
    last = max(offset + length for offset, length, _ in members)
    fd = _open_for_reading(path)
    try:
        if drop_cache:
            _from_disk(fd, first, last - first)
        buffer, start = b"", 0
        for i in order:
            offset, length, kind = members[i]
            if length > window:
                out[i] = _read_fd(fd, path, offset, length, kind, None, window)
                continue
            if offset < start or offset + length > start + len(buffer):
                start = offset
                buffer = os.pread(fd, min(window, last - offset), offset)
                if len(buffer) < length:
                    raise VolumeError(f"{path} ends at {offset + len(buffer)}, "
                                      f"before {offset + length}")
            digest = checksums.hasher(kind)
            digest.update(memoryview(buffer)[offset - start:offset - start + length])
            out[i] = digest.hexdigest()
    finally:
        os.close(fd)
    return out


def _open_for_reading(path):
    try:
        return os.open(path, os.O_RDONLY)
    except FileNotFoundError as exc:
        raise VolumeMissing(f"volume file {path} is missing") from exc


def _from_disk(fd, offset, length):
    """Drop a range from the page cache and ask for a long read-ahead, not the default window:
    the next read of it comes from the disk."""
    if hasattr(os, "posix_fadvise"):
        os.posix_fadvise(fd, offset, length, os.POSIX_FADV_DONTNEED)
        os.posix_fadvise(fd, offset, length, os.POSIX_FADV_SEQUENTIAL)


def _read_fd(fd, path, data_offset, length, checksum_type, sink, block):
    digest = checksums.hasher(checksum_type)
    offset, end = data_offset, data_offset + length
    while offset < end:
        chunk = os.pread(fd, min(block, end - offset), offset)
        if not chunk:
            raise VolumeError(f"{path} ends at {offset}, before {end}")
        digest.update(chunk)
        if sink:
            sink(chunk)
        offset += len(chunk)
    return digest.hexdigest()


def scan(path):
    """Every member of a volume, in order, stopping cleanly at a torn tail."""
    members = scan_stream(path=path)
    size = os.path.getsize(path)
    return [m for m in members if m.data_offset + m.size <= size]


def scan_stream(fileobj=None, path=None):
    """The members of a volume read from a file or a stream (a tape read in order)."""
    members = []
    name = path or "the volume"
    try:
        with tarfile.open(path, fileobj=fileobj, mode="r:" if path else "r|",
                          encoding="utf-8") as archive:
            while True:
                try:
                    info = archive.next()
                except (tarfile.ReadError, EOFError):
                    break
                if info is None:
                    break
                headers = {
                    key[len(HEADER_PREFIX):]: value
                    for key, value in info.pax_headers.items() if key.startswith(HEADER_PREFIX)
                }
                members.append(Member(info.name, info.offset, info.offset_data, info.size, headers))
    except tarfile.ReadError as exc:
        raise VolumeError(f"{name} is not a readable volume: {exc}") from exc
    return members
