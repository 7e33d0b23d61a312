"""Cutting a granule's NetCDF-4 / HDF5 file to an order's Subset and writing it in the chosen
format, with xarray over h5netcdf (and zarr). Pure Python, no Django; run in a forked child with
a time and memory limit (backend.isolation) by services.transforms.

The file is opened lazily and undecoded (packed integers, their scale and fill as attributes):
only the chunks that overlap the area and times kept are read, and the values written are the
delivered ones, bit for bit. Coordinates are read whole and decoded to choose what to keep:
1-D latitude/longitude (a grid) select index ranges (two along longitude for an area across
180, written west to east); 2-D ones (a swath) select the rows and columns that hold a pixel
inside the area, and pixels of the crop whose centre lies outside it are set to the fill value.
A shape is tested on the pixel centres with shapely. No pixel inside: an EmptyResult, which
is an outcome, not a failure.
"""
import zipfile
from collections.abc import MutableMapping
from dataclasses import dataclass
from datetime import UTC

import numpy

LAT_NAMES = {"lat", "latitude", "nav_lat"}
LON_NAMES = {"lon", "longitude", "nav_lon"}
ENCODING_KEEP = ("zlib", "complevel", "shuffle", "fletcher32", "chunksizes")


class EmptyResult(Exception):  # noqa: N818 - an outcome, not an error
    """Nothing of the granule lies in the area or time range asked for; the text says which."""


class TransformError(ValueError):
    """The file cannot be cut as asked (not NetCDF-4/HDF5, a variable it lacks ...)."""


@dataclass
class Result:
    variables: list
    sizes: dict
    empty: bool = False
    reason: str = ""
    size: int | None = None
    checksum: str = ""


def run(source, target, subset, window, history, digest=None):
    """Cut `source` to `subset` into `target`; `window` is the granule's (start, end) from the
    catalog, used when the file has no time coordinate. Returns a Result (empty=True with the
    reason when nothing is inside: no file is written then), with the output's size and
    checksum (by the hasher `digest`) when its writer took them on the way."""
    import xarray

    with _open(xarray, source) as ds:
        try:
            cut = _cut(ds, subset, window)
        except EmptyResult as exc:
            return Result([], {}, empty=True, reason=str(exc))
        cut.attrs["history"] = _history(ds.attrs.get("history"), history)
        if subset.area is not None:
            _geospatial(cut, subset.area)
        written = _write(cut, target, subset.format, digest)
        result = Result(sorted(map(str, cut.data_vars)),
                        {str(k): int(v) for k, v in cut.sizes.items()})
        if written is not None:
            result.size, result.checksum = written
        return result


def _open(xarray, source):
    """The file undecoded and lazy: by the netCDF-C library (its metadata is read fastest), or
    by h5netcdf where netCDF-C refuses an HDF5 file without netCDF dimensions (a swath)."""
    options = {"mask_and_scale": False, "decode_times": False, "decode_timedelta": False,
               "cache": False, "create_default_indexes": False}
    try:
        return xarray.open_dataset(source, engine="netcdf4", **options)
    except (OSError, ValueError, TypeError, KeyError):
        pass
    try:
        return xarray.open_dataset(source, engine="h5netcdf", phony_dims="sort", **options)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise TransformError(f"is not a NetCDF-4 or HDF5 file xarray can read ({exc})") from None


def _geospatial(ds, area):
    """The ACDD extent attributes of the cut (the delivered ones named the whole granule); an
    area across 180 keeps west > east, as ACDD writes it."""
    for axis, test in (("lat", _is_lat), ("lon", _is_lon)):
        try:
            values = _decoded(_coordinate(ds, test, axis))
        except TransformError:
            continue
        if not numpy.isfinite(values).any():
            continue
        low, high = float(numpy.nanmin(values)), float(numpy.nanmax(values))
        if axis == "lon" and area.crosses_antimeridian:
            low, high = area.west, area.east
        ds.attrs[f"geospatial_{axis}_min"], ds.attrs[f"geospatial_{axis}_max"] = low, high


def _history(before, line):
    before = before if isinstance(before, str) else ""
    return f"{before}\n{line}" if before else line


def _cut(ds, subset, window):
    ds = _variables(ds, subset.variables)
    ds = _times(ds, subset, window)
    if subset.area is not None:
        ds = _area(ds, subset)
    return ds


def _variables(ds, names):
    if not names:
        return ds
    missing = [n for n in names if n not in ds.variables]
    if missing:
        raise TransformError(f"has no variable {', '.join(missing)}")
    data = [n for n in names if n in ds.data_vars]
    if not data:
        return ds[[]].assign_coords({n: ds[n] for n in names})
    return ds[data]


def _is_lat(var):
    return (var.attrs.get("standard_name") == "latitude" or str(var.name).lower() in LAT_NAMES
            or str(var.attrs.get("units", "")).lower() in ("degrees_north", "degree_north"))


def _is_lon(var):
    return (var.attrs.get("standard_name") == "longitude" or str(var.name).lower() in LON_NAMES
            or str(var.attrs.get("units", "")).lower() in ("degrees_east", "degree_east"))


def _decoded(var):
    """A coordinate's values as floats: scale, offset and fill applied."""
    values = numpy.asarray(var.values, dtype="f8")
    fill = var.attrs.get("_FillValue", var.encoding.get("_FillValue"))
    if fill is not None:
        values = numpy.where(values == fill, numpy.nan, values)
    return values * float(var.attrs.get("scale_factor", 1)) + float(var.attrs.get("add_offset", 0))


def _coordinate(ds, test, what):
    found = [ds[n] for n in ds.variables if test(ds[n]) and ds[n].ndim in (1, 2)]
    if not found:
        raise TransformError(f"has no {what} coordinate to cut an area by")
    return found[0]


def _time_coordinate(ds):
    for name in ds.variables:
        var = ds[name]
        units = str(var.attrs.get("units", ""))
        if var.ndim == 1 and " since " in units and (
                var.attrs.get("standard_name") == "time" or var.attrs.get("axis") == "T"
                or name == "time" or name == var.dims[0]):
            return var
    return None


def _times(ds, subset, window):
    if not (subset.start or subset.end):
        return ds
    lo = numpy.datetime64((subset.start or window[0]).astimezone(UTC).replace(tzinfo=None), "ns")
    hi = numpy.datetime64((subset.end or window[1]).astimezone(UTC).replace(tzinfo=None), "ns")
    var = _time_coordinate(ds)
    if var is None:     # no time axis: the granule is in the range as a whole or not at all
        first, last = (numpy.datetime64(w.astimezone(UTC).replace(tzinfo=None), "ns")
                       for w in window)
        if last < lo or first > hi:
            raise EmptyResult("the granule's time lies outside the time range")
        return ds
    import xarray

    times = xarray.coding.times.decode_cf_datetime(
        var.values, var.attrs["units"], var.attrs.get("calendar", "standard"))
    keep = numpy.nonzero((times >= lo) & (times <= hi))[0]
    if not keep.size:
        raise EmptyResult("no time step of the granule lies in the time range")
    return ds.isel({var.dims[0]: keep})


def _area(ds, subset):
    lat, lon = _coordinate(ds, _is_lat, "latitude"), _coordinate(ds, _is_lon, "longitude")
    if lat.ndim == 1 and lon.ndim == 1 and lat.dims != lon.dims:
        return _grid(ds, subset, lat, lon)
    if lat.dims == lon.dims:
        return _swath(ds, subset, lat, lon)
    raise TransformError("has latitude and longitude coordinates of different shapes")


def _wrapped(lon):
    return (lon + 180.0) % 360.0 - 180.0


def _in_lon(lon, box):
    lon = _wrapped(lon)
    inside = numpy.zeros(lon.shape, dtype=bool)
    for lo, hi in box.longitude_spans():
        inside |= (lon >= lo) & (lon <= hi)
    return inside


def _runs(indices):
    """Consecutive index runs as slices, in the order given."""
    runs, begin = [], 0
    for k in range(1, len(indices) + 1):
        if k == len(indices) or indices[k] != indices[k - 1] + 1:
            runs.append(slice(int(indices[begin]), int(indices[k - 1]) + 1))
            begin = k
    return runs


def _grid(ds, subset, lat, lon):
    import xarray

    box = subset.area
    lats, lons = _decoded(lat), _decoded(lon)
    rows = numpy.nonzero((lats >= box.south) & (lats <= box.north))[0]
    cols = numpy.nonzero(_in_lon(lons, box))[0]
    if not rows.size or not cols.size:
        raise EmptyResult("the area lies outside the granule's grid")
    # west to east from the box's west edge: an area across 180 comes out in one piece
    cols = cols[numpy.argsort((_wrapped(lons[cols]) - box.west) % 360.0, kind="stable")]
    part = ds.isel({lat.dims[0]: slice(int(rows.min()), int(rows.max()) + 1)})
    pieces = [part.isel({lon.dims[0]: run}) for run in _runs(cols)]
    cut = pieces[0] if len(pieces) == 1 else xarray.concat(
        pieces, dim=lon.dims[0], data_vars="all", coords="minimal", compat="override",
        join="outer")
    if subset.shape is None:
        return cut
    inside = _in_shape(subset.shape, *numpy.meshgrid(_decoded(cut[lon.name]),
                                                     _decoded(cut[lat.name])))
    if not inside.any():
        raise EmptyResult("no grid cell centre of the granule lies inside the shape")
    return _masked(cut, xarray.DataArray(inside, dims=(lat.dims[0], lon.dims[0])))


def _in_shape(shape, lon, lat):
    import shapely

    return shapely.intersects_xy(shape.geometry, _wrapped(lon), lat)


def _swath(ds, subset, lat, lon):
    import xarray

    lats, lons = _decoded(lat), _decoded(lon)
    box = subset.area
    inside = (lats >= box.south) & (lats <= box.north) & _in_lon(lons, box)
    if subset.shape is not None and inside.any():
        inside &= _in_shape(subset.shape, lons, lats)
    if not inside.any():
        raise EmptyResult("no pixel centre of the swath lies inside the area")
    keep = {}
    for axis, dim in enumerate(lat.dims):
        hit = numpy.nonzero(inside.any(axis=1 - axis) if lat.ndim == 2 else inside)[0]
        keep[dim] = slice(int(hit.min()), int(hit.max()) + 1)
    cut = ds.isel(keep)
    crop = inside[tuple(keep[d] for d in lat.dims)]
    return _masked(cut, xarray.DataArray(crop, dims=lat.dims))


def _masked(ds, inside):
    """Data variables on the area's dimensions set to their fill value outside it (their
    delivered type kept)."""
    out = ds.copy()
    for name, var in ds.data_vars.items():
        if not set(inside.dims) <= set(var.dims):
            continue
        fill = var.attrs.get("_FillValue", var.encoding.get("_FillValue"))
        if fill is None:
            fill = numpy.nan if var.dtype.kind == "f" else _default_fill(var.dtype)
            var.encoding["_FillValue"] = fill
        masked = var.where(inside, numpy.asarray(fill, dtype=var.dtype)).astype(var.dtype)
        masked.attrs, masked.encoding = var.attrs, var.encoding
        out[name] = masked.transpose(*var.dims)
    return out


def _default_fill(dtype):
    import netCDF4

    return numpy.asarray(netCDF4.default_fillvals[f"{dtype.kind}{dtype.itemsize}"], dtype)


def _encoding(var, fmt):
    """The output encoding of a variable: the delivered one, or zlib 4 + shuffle for the
    compressed format. Chunks as xarray would write them: the delivered ones while the shape is
    the delivered one; a cut uncompressed variable contiguous (one write, as a plain script
    gets it); a cut compressed one in its delivered chunks clipped to the cut."""
    kept = {k: var.encoding[k] for k in ENCODING_KEEP if k in var.encoding}
    if fmt == "netcdf4-compressed" and var.ndim and 0 not in var.shape:
        kept.update(zlib=True, complevel=4, shuffle=True)
    chunks = kept.pop("chunksizes", None)
    cut = tuple(var.encoding.get("original_shape", var.shape)) != tuple(var.shape)
    if (chunks is not None and len(chunks) == var.ndim and 0 not in var.shape
            and (kept.get("zlib") or not cut)):
        kept["chunksizes"] = tuple(min(c, n) for c, n in zip(chunks, var.shape, strict=True))
    if "_FillValue" in var.encoding and "_FillValue" not in var.attrs:
        kept["_FillValue"] = var.encoding["_FillValue"]
    return kept


def _write(ds, target, fmt, digest):
    """Write the cut; (size, checksum) when the writer took them on the way, else None."""
    if fmt == "zarr-zip":
        return _write_zarr(ds, target, digest)
    encoding = {name: _encoding(ds[name], fmt) for name in ds.variables}
    ds.to_netcdf(target, engine="netcdf4", format="NETCDF4", encoding=encoding)
    return None


def _write_zarr(ds, target, digest):
    """A Zarr store (format 2, consolidated) written straight into one zip as zarr makes its
    chunks (stored as they are: they are compressed already), the checksum taken on the way to
    disk: no folder, no second copy, no second read. The metadata files, which xarray writes
    more than once, wait in memory and go in last, once each."""
    import zarr

    for name in ds.variables:
        fill = ds[name].encoding.get("_FillValue")
        ds[name].encoding = {} if fill is None or "_FillValue" in ds[name].attrs else {
            "_FillValue": fill}
    with open(target, "wb") as raw:
        sink = _Sink(raw, digest)
        with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_STORED,
                             allowZip64=True) as archive:
            store = _ZipChunks(archive)
            ds.to_zarr(zarr.storage.MemoryStore(store), mode="w", zarr_format=2,
                       consolidated=True)
            store.write_metadata()
    return sink.size, digest.hexdigest() if digest is not None else ""


class _Sink:
    """A file written front to back, its bytes counted and hashed as they pass. It has no seek:
    zipfile then writes each member's sizes after its data instead of going back for them."""

    def __init__(self, raw, digest):
        self.raw, self.digest, self.size = raw, digest, 0

    def write(self, data):
        if self.digest is not None:
            self.digest.update(data)
        self.size += len(memoryview(data).cast("B"))
        return self.raw.write(data)

    def tell(self):
        return self.size

    def flush(self):
        self.raw.flush()


ZIP_TIME = (1980, 1, 1, 0, 0, 0)    # the same input gives the same zip (and checksum)


class _ZipChunks(MutableMapping):
    """The mapping under a zarr MemoryStore: a chunk goes into the zip when set; metadata keys
    (.zarray, .zattrs, .zgroup, .zmetadata) stay here until write_metadata. A chunk is written
    once: zarr writing a new store whole neither reads one back nor rewrites it."""

    def __init__(self, archive):
        self.archive, self.metadata, self.chunks = archive, {}, set()

    @staticmethod
    def _is_metadata(key):
        return key.rsplit("/", 1)[-1].startswith(".")

    def __setitem__(self, key, value):
        if self._is_metadata(key):
            self.metadata[key] = value
            return
        if key in self.chunks:
            raise TransformError(f"zarr wrote chunk {key} twice")
        self.chunks.add(key)
        data = memoryview(value.as_numpy_array()).cast("B")
        self.archive.writestr(_member(key), data)

    def __getitem__(self, key):
        return self.metadata[key]

    def __delitem__(self, key):
        if key in self.chunks:
            raise TransformError(f"zarr removed chunk {key} once written")
        del self.metadata[key]

    def __contains__(self, key):
        return key in self.metadata or key in self.chunks

    def __iter__(self):
        yield from self.metadata
        yield from self.chunks

    def __len__(self):
        return len(self.metadata) + len(self.chunks)

    def write_metadata(self):
        for key in sorted(self.metadata):
            self.archive.writestr(_member(key), self.metadata[key].to_bytes())


def _member(key):
    info = zipfile.ZipInfo(key, ZIP_TIME)
    info.external_attr = 0o644 << 16
    return info
