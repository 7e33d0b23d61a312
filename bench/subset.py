"""`bench subset`: Granary's transform of an order item (distribution.services.transforms: a
child process with limits, the cut, the output's MD5) against a plain xarray script doing the
same in this process, on a ~1 GB NetCDF-4 granule made here: a box + 3 of 10 variables + 12 of
24 time steps, and the whole file converted to Zarr. Then `--items` small subset items (demo
GHRSST granules, archived here) in one order, all driven to a final state: none stuck.

Goals (issue #32): box + variables <= 1.2x the script's time; conversion >= 0.8 of its
throughput; every item final.
"""
import os
import shutil
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy

from distribution import subset as subsets

NAME = "subset"
HELP = ("Subset and Zarr conversion of a 1 GB NetCDF-4 against a plain xarray script, and "
        "an order of many subset items driven to the end")
VARIABLES = [f"field_{k}" for k in range(10)]
BOX = [-30.0, 10.0, 30.0, 50.0]
WINDOW = (datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 2, tzinfo=UTC))


def add_arguments(parser):
    parser.add_argument("--lat", type=int, default=720, help="grid rows (720: ~1 GB)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each conversion, median kept")
    parser.add_argument("--subset-repeat", type=int, default=15,
                        help="runs of each subset (a fraction of a second), median kept")
    parser.add_argument("--items", type=int, default=100, help="subset items in one order")


def make_granule(path, nlat, nlon, ntime=24):
    """Ten float32 fields over time x lat x lon, chunked (1, 180, 360), uncompressed."""
    import netCDF4

    lat = numpy.linspace(-90 + 90 / nlat, 90 - 90 / nlat, nlat)
    lon = numpy.linspace(-180 + 180 / nlon, 180 - 180 / nlon, nlon)
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        for name, size in (("time", ntime), ("lat", nlat), ("lon", nlon)):
            ds.createDimension(name, size)
        t = ds.createVariable("time", "f8", ("time",))
        t.units, t.standard_name = "hours since 2026-11-01 00:00:00", "time"
        t[:] = numpy.arange(ntime)
        for name, values in (("lat", lat), ("lon", lon)):
            v = ds.createVariable(name, "f4", (name,))
            v.units = "degrees_north" if name == "lat" else "degrees_east"
            v[:] = values
        wave = numpy.sin(numpy.radians(lat))[:, None] * numpy.cos(numpy.radians(lon))[None, :]
        for k, name in enumerate(VARIABLES):
            v = ds.createVariable(name, "f4", ("time", "lat", "lon"),
                                  chunksizes=(1, min(180, nlat), min(360, nlon)))
            v.units = "1"
            for step in range(ntime):
                v[step] = (wave * (k + 1) + step * 0.01).astype("f4")


def _plain_subset(path, out):
    import xarray

    with xarray.open_dataset(path) as ds:
        w, s, e, n = BOX
        ds[VARIABLES[:3]].sel(lat=slice(s, n), lon=slice(w, e)).isel(
            time=slice(0, 12)).to_netcdf(out)


def _plain_zarr(path, out):
    import xarray

    with xarray.open_dataset(path) as ds:
        ds.to_zarr(out, mode="w", zarr_format=2, consolidated=True)


def _granary(path, out, subset):
    from distribution.services import transforms

    transforms.cut_file(path, out, subset, WINDOW, "bench")


def _once(fn, source, out, extra):
    """(seconds, output bytes) of one run; the output removed after."""
    started = time.perf_counter()
    fn(source, out, *extra)
    seconds = time.perf_counter() - started
    size = _size(out)
    if Path(out).is_dir():
        shutil.rmtree(out)
    else:
        os.unlink(out)
    return seconds, size


def _size(path):
    path = Path(path)
    if path.is_dir():
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return path.stat().st_size


def run(options):
    root = Path(os.environ["GRANARY_DATA_ROOT"]) / "subset-bench"
    root.mkdir(parents=True, exist_ok=True)
    source = root / "granule.nc"
    nlat = options["lat"]
    started = time.perf_counter()
    make_granule(source, nlat, nlat * 2)
    made_s = time.perf_counter() - started
    size = source.stat().st_size
    cut = subsets.parse({"variables": VARIABLES[:3], "bbox": BOX,
                         "start": "2026-11-01T00:00:00Z", "end": "2026-11-01T11:00:00Z"})
    whole = subsets.parse({"format": "zarr-zip"})
    jobs = {"granary_subset": (_granary, root / "g.nc", (cut,)),
            "plain_subset": (_plain_subset, root / "p.nc", ()),
            "granary_zarr": (_granary, root / "g.zarr.zip", (whole,)),
            "plain_zarr": (_plain_zarr, root / "p.zarr", ())}
    outputs = {key: _once(fn, source, out, extra)[1] for key, (fn, out, extra) in jobs.items()}
    runs = {key: [] for key in jobs}       # after one untimed run each: both sides warm
    for key in ("subset", "zarr"):
        for _ in range(options["subset_repeat" if key == "subset" else "repeat"]):
            for side in ("granary", "plain"):
                fn, out, extra = jobs[f"{side}_{key}"]
                runs[f"{side}_{key}"].append(_once(fn, source, out, extra)[0])
    median = {k: statistics.median(v) for k, v in runs.items()}
    ratio_subset = median["granary_subset"] / median["plain_subset"]
    throughput = {k: size / median[k] / 2**20 for k in ("granary_zarr", "plain_zarr")}
    ratio_zarr = throughput["granary_zarr"] / throughput["plain_zarr"]
    items = _many_items(options["items"]) if options["items"] else {}
    table = [
        ("granule", f"{size / 2**20:.0f} MiB, 10 variables x 24 steps x {nlat}x{nlat * 2} "
                    f"(made in {made_s:.1f} s)"),
        ("box+3 vars+12 steps: granary", f"{median['granary_subset']:.3f} s, child+checksum "
                                         f"({outputs['granary_subset'] / 2**20:.1f} MiB out)"),
        ("box+3 vars+12 steps: xarray", f"{median['plain_subset']:.3f} s"),
        ("  ratio (goal <= 1.2)", f"{ratio_subset:.2f}"),
        ("to Zarr: granary (zip+checksum)", f"{median['granary_zarr']:.2f} s, "
                                       f"{throughput['granary_zarr']:.0f} MiB/s"),
        ("to Zarr: xarray (folder)", f"{median['plain_zarr']:.2f} s, "
                                     f"{throughput['plain_zarr']:.0f} MiB/s"),
        ("  throughput ratio (goal >= 0.8)", f"{ratio_zarr:.2f}"),
        ("load average (1, 5, 15 min)", " ".join(f"{x:.1f}" for x in os.getloadavg())),
    ]
    if items:
        table.append(("order of subset items", f"{items['items']} items: {items['states']}, "
                                               f"{items['stuck']} stuck, {items['seconds']:.1f} s"))
    return {"table": table, "bytes": size, "runs": runs, "median_s": median,
            "ratio_subset": ratio_subset, "ratio_zarr_throughput": ratio_zarr, "items": items,
            "load": os.getloadavg()}


def _many_items(count):
    """`count` demo GHRSST granules archived, ordered cut to a box, every task run here; then
    each item's state: final or stuck."""
    from bench.subset_order import order_many

    return order_many(count)
