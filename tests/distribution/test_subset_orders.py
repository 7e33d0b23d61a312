"""Subsetting at order (issue #32): demo granules (real NetCDF-4 and HDF5 swaths, seeded through
ingest) ordered cut to a box, a shape, a time range and a variable, downloaded by their signed
links and checked against an independent computation: netCDF4/h5py reading the whole delivered
file, sliced by hand with numpy; a swath's pixels checked with shapely one centre at a time."""
import hashlib

import h5py
import netCDF4
import numpy
import pytest
import xarray
import zarr
from shapely.geometry import Point, Polygon

from backend.archive import services as archive
from backend.catalog.models import Granule
from distribution.models import Order, OrderItem

from .conftest import body

pytestmark = pytest.mark.django_db
GHRSST, SWATH = "GHRSST_OISST_L4.2.1", "MOD021KM.061"


def granules(key):
    short, version = key.split(".", 1)
    return list(Granule.objects.filter(collection__short_name=short, collection__version=version)
                .order_by("temporal_start"))


def data_path(granule):
    return archive.cache_path(granule.files.get(role="data"))


def order(client, inline, granule_list, subset):
    answer = inline(client.post, "/api/v1/orders/",
                    {"granules": [g.pk for g in granule_list], "subset": subset}, format="json")
    assert answer.status_code == 201, answer.content
    return client.get(f"/api/v1/orders/{answer.json()['id']}/links/").json()


def fetch(client, link, folder):
    response = client.__class__().get(link["url"].replace("http://testserver", ""))
    assert response.status_code == 200
    data = body(response)
    assert len(data) == link["size"]
    assert link["checksum_type"] == "SHA256"
    assert hashlib.sha256(data).hexdigest() == link["checksum"]     # as the link says
    path = folder / link["name"]
    path.write_bytes(data)
    return path


def raw(path, name):
    """A variable's stored values (packed, fill included), read whole by netCDF4."""
    with netCDF4.Dataset(path) as ds:
        var = ds[name]
        var.set_auto_maskandscale(False)
        return var[:], ds["lat"][:], ds["lon"][:]


def test_ghrsst_cut_to_a_box_and_one_variable_holds_exactly_the_numpy_slice(
        seeded, alice, inline, tmp_path):
    ordered = granules(GHRSST)
    links = order(alice, inline, ordered, {"variables": ["analysed_sst"],
                                           "bbox": [-10, 30, 20, 50]})
    assert links["state"] == "ready" and len(links["links"]) == 2 and not links["failed"]
    for granule, link in zip(ordered, sorted(links["links"], key=lambda k: k["granule"]),
                             strict=True):
        got = xarray.open_dataset(fetch(alice, link, tmp_path), mask_and_scale=False)
        sst, lat, lon = raw(data_path(granule), "analysed_sst")
        rows = (lat >= 30) & (lat <= 50)
        cols = (lon >= -10) & (lon <= 20)
        assert list(got.data_vars) == ["analysed_sst"]
        numpy.testing.assert_array_equal(got["lat"].values, lat[rows])
        numpy.testing.assert_array_equal(got["lon"].values, lon[cols])
        numpy.testing.assert_array_equal(got["analysed_sst"].values, sst[:, rows][:, :, cols])
        assert f"Granary order {links['order']}" in got.attrs["history"]
        assert (got.attrs["geospatial_lat_min"], got.attrs["geospatial_lat_max"]) == (
            lat[rows].min(), lat[rows].max())
        got.close()
    detail = alice.get(f"/api/v1/orders/{links['order']}/").json()
    assert all(i["provenance"]["subset"]["variables"] == ["analysed_sst"]
               for i in detail["items"])


def test_a_box_across_the_antimeridian_comes_out_west_to_east_as_zarr(
        seeded, alice, inline, tmp_path):
    granule = granules(GHRSST)[0]
    links = order(alice, inline, [granule], {"bbox": [170, -20, -170, 10], "format": "zarr-zip",
                                             "variables": ["sea_ice_fraction", "analysed_sst"]})
    [link] = links["links"]
    assert link["name"].endswith(".subset.zarr.zip")
    store = zarr.storage.ZipStore(fetch(alice, link, tmp_path), mode="r")
    got = xarray.open_zarr(store, mask_and_scale=False)
    sst, lat, lon = raw(data_path(granule), "analysed_sst")
    rows = (lat >= -20) & (lat <= 10)
    expected = numpy.concatenate([sst[:, rows][:, :, lon >= 170], sst[:, rows][:, :, lon <= -170]],
                                 axis=2)
    assert sorted(got.data_vars) == ["analysed_sst", "sea_ice_fraction"]
    numpy.testing.assert_array_equal(got["lon"].values,
                                     numpy.concatenate([lon[lon >= 170], lon[lon <= -170]]))
    numpy.testing.assert_array_equal(got["analysed_sst"].values, expected)
    store.close()


def test_a_swath_cut_by_a_polygon_keeps_only_pixels_whose_centre_is_inside(
        seeded, alice, inline, tmp_path):
    granule = granules(SWATH)[0]
    west, south, east, north = granule.bbox
    mid_lon, mid_lat = (west + east) / 2, (south + north) / 2
    ring = [[west + 1, mid_lat], [mid_lon, south + 1], [east - 1, mid_lat], [mid_lon, north - 1],
            [west + 1, mid_lat]]
    polygon = Polygon(ring)
    name = "Band31_Brightness_Temperature"
    links = order(alice, inline, [granule], {"variables": [name], "intersects": {
        "type": "Polygon", "coordinates": [ring]}})
    [link] = links["links"]
    with h5py.File(data_path(granule), "r") as f:
        lat, lon, band = f["Latitude"][:], f["Longitude"][:], f[name][:]
        fill = f[name].attrs["_FillValue"]
    inside = numpy.array([[polygon.covers(Point(x, y)) for x, y in zip(row_lon, row_lat,
                                                                       strict=True)]
                          for row_lon, row_lat in zip(lon, lat, strict=True)])
    got = xarray.open_dataset(fetch(alice, link, tmp_path), mask_and_scale=False)
    values, glat, glon = got[name].values, got["Latitude"].values, got["Longitude"].values
    kept = values != fill
    for x, y in zip(glon[kept], glat[kept], strict=True):
        assert polygon.covers(Point(float(x), float(y)))
    assert kept.sum() == inside.sum() > 0
    assert sorted(values[kept].tolist()) == sorted(band[inside].tolist())
    got.close()


def test_a_granule_outside_the_time_range_is_empty_and_the_order_goes_on(
        seeded, alice, inline):
    first, second = granules(GHRSST)
    links = order(alice, inline, [first, second], {
        "start": first.temporal_start.isoformat(), "end": first.temporal_end.isoformat(),
        "variables": ["analysed_sst"]})
    assert links["state"] == "ready"
    assert [k["granule"] for k in links["links"]] == [str(first)]
    [empty] = links["empty"]
    assert empty["granule"] == str(second) and "time" in empty["reason"]


def test_a_transform_that_runs_out_of_time_fails_its_item_with_the_reason(
        seeded, alice, inline, settings):
    settings.GRANARY_SUBSET_TIME_LIMIT_S = 0.001
    links = order(alice, inline, granules(GHRSST)[:1], {"bbox": [0, 0, 10, 10]})
    assert links["state"] == "failed"
    [failed] = links["failed"]
    assert failed["error"].startswith("transform: ") and "still being read" in failed["error"]


def test_a_transform_whose_worker_died_each_time_is_given_up_after_the_bounded_attempts(
        seeded, alice, inline, settings):
    from distribution.services import transforms

    settings.GRANARY_SUBSET_STALE_S = 0
    settings.GRANARY_SUBSET_TIME_LIMIT_S = 0.001    # nothing finishes here: we fake the deaths
    links = order(alice, inline, granules(GHRSST)[:1], {"bbox": [0, 0, 10, 10]})
    item = OrderItem.objects.get(order_id=links["order"])
    OrderItem.objects.filter(pk=item.pk).update(state="waiting", in_cache=True, error="",
                                                transform_attempts=3)
    Order.objects.filter(pk=item.order_id).update(state="staging")
    inline(transforms.transform_item, item.pk)
    item.refresh_from_db()
    assert item.state == "failed" and "3 attempts" in item.error
    # an operator's retry counts afresh: this time the transform has the time it needs
    from distribution.services import retry_items

    settings.GRANARY_SUBSET_TIME_LIMIT_S = 120
    assert inline(retry_items, [item.pk]) == (1, [])
    item.refresh_from_db()
    assert item.state == "ready" and item.transform_attempts == 1 and item.output_size > 0


HOSTILE = [
    ({"variables": ["nope"]}, "has no variable nope"),
    ({"bbox": [0, 0, 1, 1], "intersects": {"type": "Polygon", "coordinates": [
        [[0, 0], [1, 0], [1, 1], [0, 0]]]}}, "either bbox or intersects"),
    ({"format": "geotiff"}, "not a valid choice"),
    ({"start": "2026-11-03", "end": "2026-11-01"}, "is after end"),
    ({"start": "yesterday"}, "not an ISO 8601"),
    ({"start": "2030-01-01T00:00:00Z"}, "outside every granule"),
    ({"variables": "analysed_sst"}, "list"),
    ({"variables": [1, {"a": 2}]}, "string"),
    ({"bbox": [0, 0, 0, 0]}, "no area"),
    ({"bbox": [0, 95, 1, 96]}, "latitudes"),
    ({"bbox": ["a", 0, 1, 1]}, "number"),
    ({"intersects": {"type": "Point", "coordinates": [0, 0]}}, "polygon"),
    ({"variables": ["v"] * 201}, "200"),
    ("everything", "dictionary"),
]


def test_subsets_that_cannot_work_are_refused_with_a_400_before_ordering(seeded, alice):
    ghrsst = [g.pk for g in granules(GHRSST)]
    for subset, words in HOSTILE:
        for path in ("/api/v1/cart/subset/", "/api/v1/orders/"):
            answer = alice.post(path, {"granules": ghrsst, "subset": subset}, format="json")
            assert answer.status_code == 400, (subset, answer.content)
            assert words.lower() in answer.content.decode().lower(), (subset, answer.content)
    assert not Order.objects.exists()


def test_mixed_collections_name_the_one_without_the_variable(seeded, alice):
    picked = [granules(GHRSST)[0].pk, granules(SWATH)[0].pk]
    answer = alice.post("/api/v1/orders/", {"granules": picked,
                                            "subset": {"variables": ["analysed_sst"]}},
                        format="json")
    assert answer.status_code == 400 and "MOD021KM.061 has no variable" in answer.json()["detail"]


def test_the_cart_estimate_shrinks_with_the_area_and_variables(seeded, alice):
    ghrsst = [g.pk for g in granules(GHRSST)]
    whole = alice.post("/api/v1/cart/subset/", {"granules": ghrsst}, format="json").json()
    cut = alice.post("/api/v1/cart/subset/", {"granules": ghrsst, "subset": {
        "variables": ["analysed_sst"], "bbox": [-90, -45, 90, 45]}}, format="json").json()
    assert not whole["cuts"] and cut["cuts"]
    # one of three data variables, a quarter of the globe's box, and each output's header
    assert cut["estimate"] == pytest.approx(cut["bytes"] / 3 / 4 + 2 * (16 << 10), rel=0.01)
    assert {c["collection"]: c["subsettable"] for c in cut["collections"]} == {GHRSST: True}
    assert alice.__class__().post("/api/v1/cart/subset/", {}, format="json").status_code == 401
    empty = alice.post("/api/v1/cart/subset/", {}, format="json")
    assert empty.status_code == 400 and "cart is empty" in empty.json()["detail"]
    for bad in (["x"], [10**30], "7", [-1]):
        answer = alice.post("/api/v1/cart/subset/", {"granules": bad}, format="json")
        assert answer.status_code == 400, (bad, answer.content)


def test_a_subscription_with_a_subset_delivers_cut_files_to_its_standing_order(
        seeded, alice, inline, tmp_path):
    refused = alice.post("/api/v1/subscriptions/", {
        "name": "bay", "collections": [GHRSST], "mode": "notify",
        "subset": {"variables": ["analysed_sst"]}}, format="json")
    assert refused.status_code == 400 and "mode order or push" in refused.json()["detail"]
    made = alice.post("/api/v1/subscriptions/", {
        "name": "bay", "collections": [GHRSST], "mode": "order",
        "subset": {"variables": ["analysed_sst"], "bbox": [-10, 30, 20, 50]}}, format="json")
    assert made.status_code == 201, made.content
    assert made.json()["subset"]["bbox"] == [-10, 30, 20, 50]
    inline(alice.post, f"/api/v1/subscriptions/{made.json()['id']}/apply/",
           {"since": "2000-01-01T00:00:00Z"}, format="json")
    order = Order.objects.get(subscription_id=made.json()["id"])
    links = alice.get(f"/api/v1/orders/{order.pk}/links/").json()
    assert len(links["links"]) == 2 and links["subset"]["variables"] == ["analysed_sst"]
    got = xarray.open_dataset(fetch(alice, links["links"][0], tmp_path))
    assert list(got.data_vars) == ["analysed_sst"] and float(got.lat.max()) <= 50
    got.close()


def _garbage_granule(collection, data_root, inline):
    """A granule of `collection` whose data file is named .nc but holds random bytes (its
    catalog checksum is right: only the transform can tell)."""
    from backend.catalog.models import File
    from tests.archive_fixtures import staged_granule

    granule, sources = staged_granule(collection, data_root / "staging", sizes=(4000,))
    [(pk, path)] = sources.items()
    renamed = path.with_name(f"{granule.granule_id}.nc")
    path.rename(renamed)
    File.objects.filter(pk=pk).update(name=renamed.name)
    assert archive.archive_granule(granule, {pk: renamed}).admitted
    inline(archive.run_until_idle)
    granule.refresh_from_db()
    assert granule.state == "archived"
    return granule


def test_a_push_order_with_a_subset_copies_the_outputs_and_a_corrupt_file_fails_alone(
        seeded, alice, inline, data_root):
    good = granules(GHRSST)[0]
    bad = _garbage_granule(good.collection, data_root, inline)
    dest = alice.post("/api/v1/destinations/", {"name": "lab"}, format="json").json()
    answer = inline(alice.post, "/api/v1/orders/", {
        "granules": [good.pk, bad.pk], "delivery": "push", "destination": dest["id"],
        "subset": {"variables": ["analysed_sst"], "bbox": [-10, 30, 20, 50],
                   "format": "netcdf4-compressed"}}, format="json")
    assert answer.status_code == 201, answer.content
    order = Order.objects.get(pk=answer.json()["id"])
    assert order.state == "completed"
    failed = OrderItem.objects.get(order=order, granule=bad)
    assert failed.state == "failed" and "is not a NetCDF-4 or HDF5 file" in failed.error
    item = OrderItem.objects.get(order=order, granule=good)
    folder = data_root / "outbox" / alice.user.username / "lab" / f"order-{order.pk}"
    pushed = folder / good.granule_id / item.output_name
    assert pushed.stat().st_size == item.output_size
    assert item.output_checksum_type == "SHA256"
    assert hashlib.sha256(pushed.read_bytes()).hexdigest() == item.output_checksum
    assert (f"SHA256 {item.output_checksum}  {good.granule_id}/{item.output_name}"
            in (folder / "CHECKSUMS").read_text())
    with xarray.open_dataset(pushed, mask_and_scale=False) as got:
        sst, lat, lon = raw(data_path(good), "analysed_sst")
        rows, cols = (lat >= 30) & (lat <= 50), (lon >= -10) & (lon <= 20)
        numpy.testing.assert_array_equal(got["analysed_sst"].values, sst[:, rows][:, :, cols])
        assert got["analysed_sst"].encoding["zlib"] is True


def test_a_transform_that_needs_more_memory_than_allowed_fails_its_item_with_the_reason(
        seeded, alice, inline, settings):
    settings.GRANARY_SUBSET_MEMORY_MB = 0     # not a byte more than the worker holds
    # zarr's I/O thread cannot start then and the child may wait on it: the time limit ends it
    settings.GRANARY_SUBSET_TIME_LIMIT_S = 10
    links = order(alice, inline, granules(GHRSST)[:1], {"format": "zarr-zip"})
    assert links["state"] == "failed"
    [failed] = links["failed"]
    assert failed["error"].startswith("transform: ")
    assert any(why in failed["error"] for why in ("MiB", "without an answer", "still being read"))
