"""Hostile HDF5 and NetCDF deliveries: truncated, damaged, absurdly large, lying about their
extent, pointing outside themselves, or making the HDF5 library loop. Each fails its granule
with the reason (never a crash, a hang or a worker out of memory), and nothing is registered;
only metadata and coordinates are ever read."""
import io
import os
import random
import signal
import time
import tracemalloc

import h5py
import netCDF4
import numpy
import pytest

from backend.catalog.models import Granule
from ingest import datafiles, metadata
from ingest.models import IngestGranule
from tests.ingest.builders import granule, stage

URL = "/api/v1/ingest/requests/"
ACDD_TIME = {"time_coverage_start": "2024-03-01T00:00:00Z",
             "time_coverage_end": "2024-03-01T01:00:00Z"}


def netcdf_bytes(tmp_path, lat=(-60.0, 0.0, 60.0), attrs=ACDD_TIME, time_units=None):
    path = tmp_path / "built.nc"
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("lat", len(lat))
        ds.createDimension("lon", 4)
        v = ds.createVariable("lat", "f4", ("lat",))
        v.units = "degrees_north"
        v[:] = lat
        v = ds.createVariable("lon", "f4", ("lon",))
        v.units = "degrees_east"
        v[:] = [0.0, 10.0, 20.0, 30.0]
        sst = ds.createVariable("sst", "f4", ("lat", "lon"), zlib=True, fill_value=-999.0)
        sst.units = "K"
        sst[:] = numpy.full((len(lat), 4), 290.0)
        if time_units:
            ds.createDimension("time", 1)
            t = ds.createVariable("time", "f8", ("time",))
            t.units = time_units
            t[:] = [1.0]
        ds.setncatts(dict(attrs))
    return path.read_bytes()


def hdf5_bytes(tmp_path, build):
    path = tmp_path / "built.h5"
    with h5py.File(path, "w") as f:
        f.attrs.update(ACDD_TIME)
        f["lon"] = numpy.array([0.0, 1.0], dtype="f4")
        f["lon"].attrs["units"] = "degrees_east"
        build(f, tmp_path)
    return path.read_bytes()


def absurd_latitudes(f, _):
    lat = f.create_dataset("lat", shape=(2**40, 2**40), dtype="f4", chunks=(1, 1024))
    lat.attrs["units"] = "degrees_north"


def external_latitudes(f, tmp_path):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(numpy.arange(16, dtype="f4").tobytes())
    lat = f.create_dataset("lat", shape=(16,), dtype="f4", external=[(str(secret), 0, 64)])
    lat.attrs["units"] = "degrees_north"


def virtual_latitudes(f, tmp_path):
    layout = h5py.VirtualLayout(shape=(4,), dtype="f4")
    layout[:] = h5py.VirtualSource(str(tmp_path / "elsewhere.h5"), "lat", shape=(4,))
    f.create_virtual_dataset("lat", layout, fillvalue=0)
    f["lat"].attrs["units"] = "degrees_north"


def huge_chunks(f, _):
    lat = f.create_dataset("lat", shape=(10,), maxshape=(None,), dtype="f8", chunks=(2**26,))
    lat.attrs["units"] = "degrees_north"


def looping_heap(tmp_path):
    """A bad length in the global heap that holds the variable-length strings: HDF5 loops."""
    path = tmp_path / "built.h5"
    with h5py.File(path, "w") as f:
        f.attrs.update({"platform": "Terra", "instrument": "MODIS", "title": "a swath"})
    data = bytearray(path.read_bytes())
    data[data.index(b"\x05" + b"\x00" * 7 + b"Terra")] = 0x70
    return bytes(data)


def truncated(tmp_path, keep):
    whole = netcdf_bytes(tmp_path)
    return whole[:keep if keep > 0 else len(whole) + keep]


HOSTILE = {
    "truncated half way": (lambda p: truncated(p, -3000), "is not a readable HDF5 file"),
    "truncated after the signature": (lambda p: truncated(p, 600), "is not a readable HDF5"),
    "latitude 200 in the coordinates": (
        lambda p: netcdf_bytes(p, lat=(0.0, 100.0, 200.0)), "its latitudes reach 200, outside"),
    "latitude 200 in the attributes": (
        lambda p: netcdf_bytes(p, attrs={**ACDD_TIME, "geospatial_lat_min": 0,
                                         "geospatial_lat_max": 200, "geospatial_lon_min": 0,
                                         "geospatial_lon_max": 30}),
        "bounding box: latitudes must lie within -90..90"),
    "a declared box the coordinates contradict": (
        lambda p: netcdf_bytes(p, attrs={**ACDD_TIME, "geospatial_lat_min": 0,
                                         "geospatial_lat_max": 10, "geospatial_lon_min": 0,
                                         "geospatial_lon_max": 30}),
        "declares latitudes 0..10 but its coordinates span -60..60"),
    "a declared time the coordinate contradicts": (
        lambda p: netcdf_bytes(p, time_units="days since 1990-01-01"),
        "declares 2024-03-01T00:00:00+00:00..2024-03-01T01:00:00+00:00 but its time "
        "coordinate spans 1990-01-02"),
    "time in units nobody knows": (
        lambda p: netcdf_bytes(p, attrs={}, time_units="fortnights since the flood"),
        "the times of time (1..1 'fortnights since the flood'"),
    "absurd dimensions": (lambda p: hdf5_bytes(p, absurd_latitudes),
                          f"the coordinate lat has {2**80:,} values; at most"),
    "values in an external file": (lambda p: hdf5_bytes(p, external_latitudes),
                                   "keeps its values in external files, which are not read"),
    "values in other files (virtual)": (lambda p: hdf5_bytes(p, virtual_latitudes),
                                        "is a virtual dataset"),
    "a chunk of 512 MiB": (lambda p: hdf5_bytes(p, huge_chunks),
                           "is stored in chunks of 512 MiB; at most 64 MiB are read"),
    "a heap that makes HDF5 loop": (looping_heap, "was still being read after 2 s"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_data_file_fails_its_granule_with_the_reason(case, client, provider,
                                                               collection, drain, tmp_path,
                                                               monkeypatch):
    monkeypatch.setattr(datafiles, "TIME_LIMIT_S", 2)
    build, words = HOSTILE[case]
    spec = granule(collection, "G1", [stage(provider, "in/G1.h5", data=build(tmp_path))],
                   temporal=False, bbox=None)
    assert client.post(URL, {"granules": [spec]}, format="json").status_code == 202
    drain()
    failed = IngestGranule.objects.get()
    assert failed.state == "failed" and failed.disposition == "METADATA PREPROCESSING ERROR"
    assert failed.reason.startswith("G1.h5") and words in failed.reason, failed.reason
    assert not Granule.objects.exists()


def hangs(path):
    while True:
        time.sleep(1)


def dies(path):
    os.kill(os.getpid(), signal.SIGKILL)     # as a crash in C would end it


def bloats(path):
    return numpy.ones(512 << 20, dtype="u1").sum()


@pytest.mark.parametrize(("reader", "words"), [
    (hangs, "was still being read after 1 s"),
    (dies, f"made its reader stop without an answer (signal {signal.SIGKILL.value})"),
    (bloats, "needs more than 128 MiB to read"),
])
def test_a_reader_that_hangs_crashes_or_bloats_costs_only_its_child(tmp_path, reader, words):
    with pytest.raises(datafiles.FileError) as caught:
        datafiles.read_isolated(reader, tmp_path, time_limit=1, memory_limit=128 << 20)
    assert words in str(caught.value)


def test_a_data_variable_is_never_read(tmp_path):
    """A variable of 2^80 declared values and one of 32 MiB written: listed, not read."""
    path = tmp_path / "big.h5"
    with h5py.File(path, "w") as f:
        f.attrs.update(ACDD_TIME)
        for name, values, units in (("lat", [-1.0, 1.0], "degrees_north"),
                                    ("lon", [-1.0, 1.0], "degrees_east")):
            f[name] = numpy.array(values)
            f[name].attrs["units"] = units
        f.create_dataset("declared", shape=(2**40, 2**40), dtype="f4", chunks=(1, 4096))
        f["written"] = numpy.random.default_rng(1).random(4 << 20)          # 32 MiB
        f["written"].attrs["units"] = "1"
    tracemalloc.start()
    try:
        contents = datafiles.read_hdf5(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20
    assert {v["name"]: v["shape"] for v in contents.variables} == {
        "declared": [2**40, 2**40], "written": [4 << 20], "lat": [2], "lon": [2]}
    found = metadata.extract([("big.h5", "data", path)])
    assert found.bbox == [-1.0, -1.0, 1.0, 1.0]


def test_oversized_attributes_and_too_many_objects_are_left_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(datafiles, "MAX_OBJECTS", 20)
    path = tmp_path / "many.h5"
    with h5py.File(path, "w", libver="latest") as f:   # dense storage takes a large attribute
        f.attrs.update(ACDD_TIME)
        f.attrs["history"] = numpy.frombuffer(b"x" * (1 << 20), dtype="S1")    # 1 MiB
        for i in range(100):
            f[f"v{i:03d}"] = numpy.arange(3)
    found = metadata.extract([("many.h5", "data", path)])
    assert "history" not in found.attributes
    assert found.start.year == 2024
    assert 0 < len(found.attributes["variables"]) <= 20


def test_damaged_copies_of_a_good_file_answer_or_fail_cleanly(tmp_path, monkeypatch):
    """Seeded truncations and byte flips: each answers or raises MetadataError, in bounded
    time; nothing else escapes."""
    monkeypatch.setattr(datafiles, "TIME_LIMIT_S", 5)
    whole = netcdf_bytes(tmp_path)
    rng = random.Random(21)
    outcomes = set()
    for n in range(60):
        data = bytearray(whole)
        if n % 3 == 0:
            data = data[:rng.randrange(8, len(data))]
        else:
            for _ in range(rng.randrange(1, 8)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        path = tmp_path / "damaged.nc"
        path.write_bytes(bytes(data))
        try:
            metadata.extract([("damaged.nc", "data", path)])
            outcomes.add("read")
        except metadata.MetadataError as exc:
            assert str(exc).startswith("damaged.nc: ")
            outcomes.add("failed")
    assert "failed" in outcomes


def test_a_netcdf_classic_file_cut_short(tmp_path):
    """The library reads zeros past the end of a classic file: the size is checked."""
    buffer = io.BytesIO()
    path = tmp_path / "classic.nc"
    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as ds:
        ds.createDimension("lat", 1000)
        v = ds.createVariable("lat", "f8", ("lat",))
        v.units = "degrees_north"
        v[:] = numpy.linspace(-80, 80, 1000)
        ds.time_coverage_start = "2024-01-01T00:00:00Z"
    buffer.write(path.read_bytes()[:2000])
    path.write_bytes(buffer.getvalue())
    with pytest.raises(metadata.MetadataError) as caught:
        metadata.extract([("classic.nc", "data", path)])
    assert str(caught.value) == ("classic.nc: is cut short: its variables need at least 8,000 "
                                 "bytes and the file has 2,000")
