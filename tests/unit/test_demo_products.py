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


@pytest.mark.parametrize("index", [3, 23])
def test_a_demo_swath_s_met_has_a_g_ring_round_its_pixels(tmp_path, index):
    """The .met G-ring, as ingest reads it, outlines the swath: nearly every pixel centre of
    the HDF5 file (read with h5py) lies inside it, across the antimeridian too (index 23)."""
    import h5py
    import shapely

    from backend.catalog import shapes
    from ingest import metadata

    granule = products.make_granule("MOD021KM", index, tmp_path)
    files = {role: path for _, role, path in granule.files}
    footprint = metadata.extract([(files["metadata"].name, "metadata", files["metadata"])])
    assert footprint.footprint_edges == shapes.SPHERE         # G-ring points are on the sphere
    outline = shapes.parse_geojson(footprint.footprint,
                                   edges=footprint.footprint_edges).geometry.buffer(1e-6)
    with h5py.File(files["data"]) as f:
        lon, lat = f["Longitude"][:].ravel(), f["Latitude"][:].ravel()
    inside = shapely.contains_xy(outline, lon, lat)
    assert inside.mean() > 0.98
    assert (lon.max() - lon.min() > 180) == (outline.geom_type == "MultiPolygon")
