"""The demo's data is real: seeded through the real ingest path, a granule of each collection
ordered and downloaded by its signed link opens with netCDF4 or h5py and holds exactly the
variables (with their units) its catalog metadata lists, over the times and box the catalog
has; each browse image is a picture of the data with a colour scale."""
import io

import h5py
import netCDF4
import numpy
import pytest
from PIL import Image

from .conftest import body

pytestmark = pytest.mark.django_db

COLLECTIONS = ["GHRSST_OISST_L4.2.1", "MOD10C1.061", "MOD021KM.061"]


def netcdf_facts(data):
    """{variable: (units, shape)} and the global attributes, as netCDF4 reads them."""
    with netCDF4.Dataset("download.nc", memory=data) as ds:
        variables = {name: (v.getncattr("units") if "units" in v.ncattrs() else None,
                            list(v.shape)) for name, v in ds.variables.items()}
        return variables, {name: ds.getncattr(name) for name in ds.ncattrs()}


def hdf5_facts(data):
    """{dataset path: (units, shape)} and the global attributes, as h5py reads them."""
    variables = {}
    with h5py.File(io.BytesIO(data), "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                units = obj.attrs.get("units")
                variables[name] = (units.decode() if isinstance(units, bytes) else units,
                                   list(obj.shape))
        f.visititems(visit)
        return variables, dict(f.attrs)


@pytest.mark.parametrize("key", COLLECTIONS)
def test_a_demo_granule_ordered_and_downloaded_opens_with_what_the_catalog_lists(
        seeded, alice, inline, key):
    granules = alice.get(f"/api/v1/granules/?collection={key}").json()["results"]
    assert len(granules) == 2 and {g["state"] for g in granules} == {"archived"}
    detail = alice.get(f"/api/v1/granules/{granules[0]['id']}/").json()
    listed = {v["name"]: (v.get("units"), v["shape"])
              for v in detail["attributes"]["variables"]}

    order = inline(alice.post, "/api/v1/orders/", {"granules": [detail["id"]]},
                   format="json").json()
    links = alice.get(f"/api/v1/orders/{order['id']}/links/").json()["links"]
    [data_file] = [f for f in detail["files"] if f["role"] == "data"]
    [link] = [k for k in links if k["file_id"] == data_file["id"]]
    download = alice.__class__().get(link["url"].replace("http://testserver", ""))
    assert download.status_code == 200
    data = body(download)

    facts = netcdf_facts if data_file["name"].endswith(".nc") else hdf5_facts
    variables, attributes = facts(data)
    assert variables == listed
    assert all(units for units, _ in variables.values())       # every variable has units
    assert detail["temporal_start"].replace("+00:00", "Z") == attributes["time_coverage_start"]
    box = [attributes[f"geospatial_{side}"] for side in
           ("lon_min", "lat_min", "lon_max", "lat_max")]
    assert detail["bbox"] == pytest.approx(box, abs=1e-4)
    assert "not an observation" in attributes["comment"]

    picture = alice.__class__().get(detail["browse_url"])     # anyone may see it
    assert picture.status_code == 200 and picture["Content-Type"] == "image/png"
    png = body(picture)
    Image.open(io.BytesIO(png)).verify()
    pixels = numpy.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    assert pixels.shape[0] >= 150 and pixels.shape[1] >= 240
    assert len(numpy.unique(pixels.reshape(-1, 3), axis=0)) > 50   # a field, not a flat fill
    assert pixels.reshape(-1, 3).std(axis=0).min() > 10
