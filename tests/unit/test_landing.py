"""A recall's bytes landing in its cache file (backend.archive.services.landing): inline for a
small file, by a thread of its own for a large one; either way the file holds the bytes at
their offsets, `after` sees them in order, and a failed write is raised to the caller."""
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
