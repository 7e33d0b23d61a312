"""Metadata from what HDF5 and NetCDF files hold: times and box from their coordinates when
the global attributes do not say, the variables with their units, the agreement of the two.
Every file is built here with netCDF4 or h5py directly (not by the demo generator), and each
expected value is worked out from the arrays the test wrote."""
from datetime import UTC, datetime

import h5py
import netCDF4
import numpy
import pytest

from ingest import metadata


def grid_netcdf(path, fmt="NETCDF4", lat=None, lon=None, times=(6, 30), attrs=None):
    """A small gridded file: time (hours since 2024-03-01), lat, lon and a packed
    temperature with a fill value."""
    lat = numpy.linspace(-10, 20, 31) if lat is None else numpy.asarray(lat, dtype=float)
    lon = numpy.linspace(100, 130, 16) if lon is None else numpy.asarray(lon, dtype=float)
    with netCDF4.Dataset(path, "w", format=fmt) as ds:
        ds.createDimension("time", len(times))
        ds.createDimension("lat", lat.size)
        ds.createDimension("lon", lon.size)
        t = ds.createVariable("time", "f8", ("time",))
        t.units, t.standard_name = "hours since 2024-03-01 00:00:00", "time"
        t[:] = times
        for name, values, units in (("lat", lat, "degrees_north"), ("lon", lon, "degrees_east")):
            v = ds.createVariable(name, "f4", (name,))
            v.units = units
            v[:] = values
        temp = ds.createVariable("surface_temperature", "i2", ("time", "lat", "lon"),
                                 fill_value=-32768)
        temp.units, temp.long_name = "K", "skin temperature"
        temp.scale_factor, temp.add_offset = 0.01, 273.15
        temp[:] = numpy.full((len(times), lat.size, lon.size), 290.0)
        ds.title = "a test grid"
        ds.setncatts(attrs or {})
    return path


def extract(path):
    return metadata.extract([(path.name, "data", path)])


@pytest.mark.parametrize("fmt", ["NETCDF4", "NETCDF3_CLASSIC", "NETCDF3_64BIT_DATA"])
def test_times_box_and_variables_from_the_coordinates(tmp_path, fmt):
    found = extract(grid_netcdf(tmp_path / "g.nc", fmt=fmt))
    assert found.start == datetime(2024, 3, 1, 6, tzinfo=UTC)
    assert found.end == datetime(2024, 3, 2, 6, tzinfo=UTC)
    assert found.bbox == [100.0, -10.0, 130.0, 20.0]
    with netCDF4.Dataset(tmp_path / "g.nc") as ds:   # what the library says the file holds
        expected = [{"name": name, "shape": list(v.shape),
                     **{k: v.getncattr(k) for k in ("units", "long_name") if k in v.ncattrs()}}
                    for name, v in ds.variables.items()]
    assert sorted(found.attributes["variables"], key=lambda v: v["name"]) == sorted(
        expected, key=lambda v: v["name"])
    assert found.attributes["title"] == "a test grid"
    assert not any(key.startswith("_") for key in found.attributes)   # no _NCProperties


def test_the_global_attributes_win_when_the_coordinates_agree(tmp_path):
    path = grid_netcdf(tmp_path / "g.nc", attrs={
        "time_coverage_start": "2024-03-01T00:00:00Z", "time_coverage_end": "2024-03-03T00:00:00Z",
        "geospatial_lat_min": -10.5, "geospatial_lat_max": 20.5,
        "geospatial_lon_min": 99.5, "geospatial_lon_max": 130.5})
    found = extract(path)
    assert (found.start.day, found.end.day) == (1, 3)
    assert found.bbox == [99.5, -10.5, 130.5, 20.5]


def test_fill_values_and_packing_of_coordinates(tmp_path):
    path = tmp_path / "packed.nc"
    raw = numpy.array([-4500, -32768, 0, 1250, 6000], dtype="i2")   # one value is the fill
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("y", raw.size)
        ds.createDimension("x", 2)
        lat = ds.createVariable("lat", "i2", ("y",), fill_value=-32768)
        lat.set_auto_maskandscale(False)
        lat.units, lat.scale_factor = "degrees_north", 0.01
        lat[:] = raw
        lon = ds.createVariable("lon", "f8", ("x",))
        lon.units, lon.valid_max = "degrees_east", 180.0
        lon[:] = [-20.0, 1e20]                      # past valid_max: no longitude
        ds.time_coverage_start = "2024-01-01T00:00:00Z"
    found = extract(path)
    kept = raw[raw != -32768] * 0.01
    assert found.bbox == pytest.approx([-20.0, kept.min(), -20.0, kept.max()])


def test_a_swath_across_the_antimeridian_in_hdf5(tmp_path):
    rows, cols = numpy.meshgrid(numpy.arange(40), numpy.arange(30), indexing="ij")
    lat = (-5 + rows * 0.5 + cols * 0.1).astype("f4")
    lon = (170 + cols * 0.8 + rows * 0.05).astype("f4")          # 170 .. 195.15
    lon = numpy.where(lon > 180, lon - 360, lon)
    path = tmp_path / "swath.h5"
    with h5py.File(path, "w") as f:
        geo = f.create_group("Geolocation")
        geo["Latitude"] = lat
        geo["Latitude"].attrs["units"] = "degrees_north"
        geo["Longitude"] = lon
        geo["Longitude"].attrs["units"] = "degrees_east"
        f["Data/Radiance"] = numpy.ones((40, 30), dtype="f4")
        f["Data/Radiance"].attrs.update({"units": "W m-2 sr-1 um-1", "long_name": "radiance"})
        f.attrs["time_coverage_start"] = "2024-05-01T10:00:00Z"
        f.attrs["time_coverage_end"] = "2024-05-01T10:05:00Z"
    found = extract(path)
    east_half, west_half = lon[lon > 0], lon[lon < 0]               # brute force
    assert found.bbox == pytest.approx([float(east_half.min()), float(lat.min()),
                                        float(west_half.max()), float(lat.max())])
    assert found.bbox[0] > found.bbox[2]                           # west > east: crosses 180
    assert {v["name"]: v.get("units") for v in found.attributes["variables"]} == {
        "Geolocation/Latitude": "degrees_north", "Geolocation/Longitude": "degrees_east",
        "Data/Radiance": "W m-2 sr-1 um-1"}


def test_longitudes_from_0_to_360(tmp_path):
    found = extract(grid_netcdf(tmp_path / "east.nc", lon=numpy.arange(200.0, 251.0, 5)))
    assert found.bbox[0::2] == [-160.0, -110.0]
    found = extract(grid_netcdf(tmp_path / "global.nc", lon=numpy.arange(0.5, 360, 1.0)))
    assert found.bbox[0::2] == [-179.5, 179.5]


def test_time_bounds_give_the_coverage(tmp_path):
    path = tmp_path / "monthly.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", 1)
        ds.createDimension("nv", 2)
        t = ds.createVariable("time", "f8", ("time",))
        t.units, t.calendar, t.bounds = "days since 2000-01-01", "standard", "time_bnds"
        t[:] = [15.5]
        bounds = ds.createVariable("time_bnds", "f8", ("time", "nv"))
        bounds[:] = [[0.0, 31.0]]
        ds.setncatts({"geospatial_lat_min": 0, "geospatial_lat_max": 1,
                      "geospatial_lon_min": 0, "geospatial_lon_max": 1})
    found = extract(path)
    assert (found.start, found.end) == (datetime(2000, 1, 1, tzinfo=UTC),
                                        datetime(2000, 2, 1, tzinfo=UTC))


def test_a_file_without_coordinates_or_attributes_lists_its_variables_only(tmp_path):
    path = tmp_path / "bare.h5"
    with h5py.File(path, "w") as f:
        f["counts"] = numpy.arange(5)
    found = extract(path)
    assert found.start is None and found.bbox is None
    assert found.attributes == {"variables": [{"name": "counts", "shape": [5]}]}
