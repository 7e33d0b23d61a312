"""Metadata from delivered files: sidecar JSON, ECS .met, HDF5 and NetCDF global attributes."""
import json
from datetime import UTC, datetime

import h5py
import netCDF4
import pytest

from ingest import metadata
from tests.ingest.builders import MET

ACDD = {"time_coverage_start": "2024-03-01T10:00:00Z", "time_coverage_end": "2024-03-01T10:05:00Z",
        "geospatial_lon_min": -120.0, "geospatial_lon_max": -100.5,
        "geospatial_lat_min": 30.0, "geospatial_lat_max": 45.0, "platform": "Aqua",
        "orbit": 12345}


def test_met_file(tmp_path):
    path = tmp_path / "G.hdf.met"
    path.write_text(MET.format(granule_id="G.hdf"))
    found = metadata.extract([("G.hdf.met", "metadata", path)])
    assert found.start == datetime(2024, 1, 1, 0, 5, tzinfo=UTC)
    assert found.end == datetime(2024, 1, 1, 0, 10, tzinfo=UTC)
    assert found.bbox == [-20.5, 20.0, 10.25, 40.0]
    assert found.attributes == {"DAYNIGHTFLAG": "Day", "LocalGranuleID": "G.hdf"}
    assert found.sources == ["G.hdf.met"]


def test_sidecar_json_granary_and_umm_g_shapes(tmp_path):
    own = tmp_path / "a.json"
    own.write_text(json.dumps({"temporal": {"start": "2024-01-01T00:00:00Z",
                                            "end": "2024-01-01T01:00:00Z"},
                               "bbox": [1, 2, 3, 4], "attributes": {"cloud_cover": 12}}))
    found = metadata.extract([("a.json", "metadata", own)])
    assert (found.start.hour, found.end.hour, found.bbox) == (0, 1, [1.0, 2.0, 3.0, 4.0])
    assert found.attributes == {"cloud_cover": 12}

    umm = tmp_path / "b.json"
    umm.write_text(json.dumps({
        "TemporalExtent": {"RangeDateTime": {"BeginningDateTime": "2024-02-01T00:00:00.000Z",
                                             "EndingDateTime": "2024-02-01T00:05:00.000Z"}},
        "SpatialExtent": {"HorizontalSpatialDomain": {"Geometry": {"BoundingRectangles": [
            {"WestBoundingCoordinate": 170, "SouthBoundingCoordinate": -5,
             "EastBoundingCoordinate": -170, "NorthBoundingCoordinate": 5}]}}},
        "AdditionalAttributes": [{"Name": "DAYNIGHT", "Values": ["Night"]}],
    }))
    found = metadata.extract([("b.json", "metadata", umm)])
    assert found.start == datetime(2024, 2, 1, tzinfo=UTC)
    assert found.bbox == [170.0, -5.0, -170.0, 5.0]
    assert found.attributes == {"DAYNIGHT": "Night"}


def test_hdf5_global_attributes(tmp_path):
    path = tmp_path / "granule.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("radiance", data=[1.0, 2.0, 3.0])
        for key, value in ACDD.items():
            f.attrs[key] = value
    found = metadata.extract([("granule.h5", "data", path)])
    assert found.start == datetime(2024, 3, 1, 10, tzinfo=UTC)
    assert found.bbox == [-120.0, 30.0, -100.5, 45.0]
    assert found.attributes == {"platform": "Aqua", "orbit": 12345,
                                "variables": [{"name": "radiance", "shape": [3]}]}


@pytest.mark.parametrize("fmt", ["NETCDF3_CLASSIC", "NETCDF4"])
def test_netcdf_global_attributes(tmp_path, fmt):
    path = tmp_path / "granule.nc"
    with netCDF4.Dataset(path, "w", format=fmt) as ds:
        ds.createDimension("x", 3)
        ds.createVariable("sst", "f4", ("x",))[:] = [280.0, 281.0, 282.0]
        ds.setncatts(ACDD)
    found = metadata.extract([("granule.nc", "data", path)])
    assert found.end == datetime(2024, 3, 1, 10, 5, tzinfo=UTC)
    assert found.bbox == [-120.0, 30.0, -100.5, 45.0]
    assert found.attributes["platform"] == "Aqua"


def test_sidecar_wins_over_data_file(tmp_path):
    data = tmp_path / "g.h5"
    with h5py.File(data, "w") as f:
        f.attrs.update(ACDD)
    side = tmp_path / "g.json"
    side.write_text(json.dumps({"temporal": {"start": "2020-01-01T00:00:00Z",
                                             "end": "2020-01-01T00:00:01Z"}}))
    found = metadata.extract([("g.h5", "data", data), ("g.json", "metadata", side)])
    assert found.start.year == 2020
    assert found.bbox == [-120.0, 30.0, -100.5, 45.0]  # filled from the HDF5 file
    assert found.sources == ["g.json", "g.h5"]


def test_files_without_metadata_give_nothing(tmp_path):
    path = tmp_path / "plain.dat"
    path.write_bytes(b"\x00" * 600)
    found = metadata.extract([("plain.dat", "data", path)])
    assert found.start is None and found.bbox is None and found.sources == []


@pytest.mark.parametrize(("name", "text", "words"), [
    ("bad.json", "{not json", "the sidecar is not JSON"),
    ("bad.json", '{"temporal": {"start": "yesterday"}}', "is not an ISO 8601"),
    ("bad.json", '{"bbox": [1, 2, 3]}', "bbox must be [west, south, east, north]"),
    ("bad.met", "GROUP = A\n  OBJECT = B\nEND_GROUP = A\n", "the .met file is not ODL"),
])
def test_broken_metadata_says_which_file_and_why(tmp_path, name, text, words):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(metadata.MetadataError) as caught:
        metadata.extract([(name, "metadata", path)])
    assert str(caught.value).startswith(f"{name}: ") and words in str(caught.value)
