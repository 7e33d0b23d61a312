"""The demo generator: the same collection, seed and index give the same bytes (so a demo
granule can be made again), another index another granule, and the id it promises."""
import hashlib

import pytest

from demo import products


def digests(folder, granule):
    return {name: hashlib.md5((folder / name).read_bytes()).hexdigest()
            for name, _, _ in granule.files}


@pytest.mark.parametrize("short_name", sorted(products.PRODUCTS))
def test_a_demo_granule_is_the_same_bytes_each_time(tmp_path, short_name):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = products.make_granule(short_name, 3, tmp_path / "a")
    again = products.make_granule(short_name, 3, tmp_path / "b")
    other = products.make_granule(short_name, 4, tmp_path / "b")
    assert digests(tmp_path / "a", first) == digests(tmp_path / "b", again)
    assert first.attributes == again.attributes
    assert first.granule_id == products.granule_id(short_name, 3) != other.granule_id
    assert set(digests(tmp_path / "b", other).values()).isdisjoint(
        digests(tmp_path / "a", first).values())
    assert all(10_000 < path.stat().st_size < 400_000 for _, _, path in first.files
               if not path.name.endswith(".met"))
