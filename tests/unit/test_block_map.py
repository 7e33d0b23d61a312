"""A recall takes its file's block map on the way in (serving.BlockMap): it must be the map
hash_blocks takes from the file, whatever sizes the pieces come in."""
import os

import xxhash

from backend.archive.services.serving import BLOCK, BlockMap, hash_path


def _by_hand(data):
    """The map by its definition: XXH3-64 of each BLOCK from the start, the last one short."""
    return b"".join(xxhash.xxh3_64_digest(data[at:at + BLOCK])
                    for at in range(0, len(data), BLOCK))


def test_the_block_map_taken_on_the_way_is_the_files(tmp_path):
    for size in (0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 12345):
        data = os.urandom(size)
        path = tmp_path / f"f{size}"
        path.write_bytes(data)
        for piece in (4096, 1 << 20, 3 * BLOCK, 777_777):
            m = BlockMap()
            for at in range(0, size, piece):
                m.update(memoryview(data)[at:at + piece])
            assert m.size == size
            assert m.digest() == _by_hand(data) == hash_path("MD5", path)[2]
