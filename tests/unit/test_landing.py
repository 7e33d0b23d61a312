"""A recall's bytes landing in its cache file (backend.archive.services.landing): inline for a
small file, by a thread of its own for a large one; either way the file holds the bytes at
their offsets, `after` sees them in order, and a failed write is raised to the caller."""
import errno
import fcntl
import hashlib
import os

import pytest

from backend.archive.services import landing


@pytest.mark.parametrize("size", [1000, landing.THREAD_FROM + 12345])
def test_pieces_land_at_their_offsets_and_are_seen_in_order(tmp_path, size):
    data = os.urandom(size)
    seen = []
    path = tmp_path / "recall"
    with open(path, "wb") as out:
        land = landing.Landing(out.fileno(), size, lambda at, piece: seen.append(
            (at, bytes(piece))))
        half = size // 2
        first, second = land.sink(0), land.sink(half)
        for at in range(0, half, 1 << 20):
            first(data[at:min(at + (1 << 20), half)])
        for at in range(half, size, 1 << 20):
            second(memoryview(data)[at:at + (1 << 20)])
        land.close()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == hashlib.sha256(data).hexdigest()
    assert b"".join(piece for _, piece in seen) == data
    offsets = [at for at, _ in seen]
    assert offsets == sorted(offsets) and offsets[0] == 0


def test_a_failed_write_is_raised_to_the_caller(tmp_path):
    path = tmp_path / "recall"
    path.write_bytes(b"")
    fd = os.open(path, os.O_RDONLY)      # writes to it fail (EBADF)
    try:
        land = landing.Landing(fd, landing.THREAD_FROM, None)
        take = land.sink(0)
        with pytest.raises(OSError):
            for _ in range(landing.DEPTH + 4):
                take(b"x" * 4096)
            land.close()
        land.abandon()
    finally:
        os.close(fd)


def _direct_io_here(folder):
    """Whether the filesystem of `folder` takes O_DIRECT (ext4 does, tmpfs refuses it)."""
    probe = folder / "probe"
    probe.write_bytes(b"")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_DIRECT))
    except OSError:
        return False
    return True


def _open_fds():
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("size", [landing.THREAD_FROM, 2 * landing.DIRECT_CHUNK + 5000])
def test_a_large_file_in_order_goes_by_direct_io_where_the_disk_takes_it(tmp_path, size):
    """Whole chunks, an aligned remainder and a tail shorter than a block all land where they
    belong, seen in order; the direct descriptor is closed at the end."""
    data = os.urandom(size)
    seen, path = [], tmp_path / "recall"
    fds = _open_fds()
    with open(path, "wb") as out:
        land = landing.Landing(out.fileno(), size, lambda at, piece: seen.append(len(piece)),
                               path=path)
        assert (land.direct is not None) == _direct_io_here(tmp_path)
        take = land.sink(0)
        for at in range(0, size, 1 << 20):
            take(data[at:at + (1 << 20)])
        land.close()
        os.fsync(out.fileno())
    assert hashlib.md5(path.read_bytes()).hexdigest() == hashlib.md5(data).hexdigest()
    assert sum(seen) == size and _open_fds() == fds


def test_pieces_out_of_order_leave_direct_io_with_what_was_gathered(tmp_path):
    """A piece that does not follow the last (a resumed or multi-segment recall) sends what
    was gathered, and everything after, through the page cache: nothing is lost or moved."""
    size = landing.DIRECT_CHUNK + 3 * (1 << 20) + 777
    data = os.urandom(size)
    path = tmp_path / "recall"
    cut = landing.DIRECT_CHUNK + (1 << 20) + 512         # gathered past a full chunk
    with open(path, "wb") as out:
        land = landing.Landing(out.fileno(), size, None, path=path)
        first, later = land.sink(0), land.sink(cut + (1 << 20))
        for at in range(0, cut, 1 << 20):
            first(data[at:min(at + (1 << 20), cut)])
        later(data[cut + (1 << 20):])                   # out of order
        land.sink(cut)(data[cut:cut + (1 << 20)])       # the gap, last
        land.close()
    assert path.read_bytes() == data


def test_an_abandoned_direct_landing_closes_its_descriptor(tmp_path):
    path = tmp_path / "recall"
    fds = _open_fds()
    with open(path, "wb") as out:
        land = landing.Landing(out.fileno(), landing.THREAD_FROM, None, path=path)
        land.sink(0)(os.urandom(1 << 20))
        land.abandon()
    assert _open_fds() == fds


@pytest.mark.parametrize("refuse_from", [0, landing.DIRECT_CHUNK])
def test_the_kernel_refusing_direct_writes_sends_every_byte_through_the_page_cache(
        tmp_path, monkeypatch, refuse_from):
    """EINVAL from pwrite itself on the direct descriptor, as a disk with a coarser alignment
    answers: at the first full chunk, or only at the aligned remainder of the end."""
    if not _direct_io_here(tmp_path):
        pytest.skip("this file system has no direct I/O to refuse")
    size = landing.DIRECT_CHUNK + 3 * 4096 + 5
    data = os.urandom(size)
    path = tmp_path / "recall"
    real, refused = os.pwrite, []

    def pwrite(fd, view, offset):
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT and offset >= refuse_from:
            refused.append(offset)
            raise OSError(errno.EINVAL, "Invalid argument")
        return real(fd, view, offset)

    monkeypatch.setattr(os, "pwrite", pwrite)
    fds = _open_fds()
    with open(path, "wb") as out:
        land = landing.Landing(out.fileno(), size, None, path=path)
        take = land.sink(0)
        for at in range(0, size, 1 << 20):
            take(data[at:at + (1 << 20)])
        land.close()
    assert refused == [refuse_from]
    assert path.read_bytes() == data and _open_fds() == fds
