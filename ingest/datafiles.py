"""What an HDF5 or NetCDF data file says about itself: global attributes, variables (name,
units, long name, shape) and the extent of its latitude, longitude and time coordinates. Pure
Python, no Django.

A delivered file is hostile until read: only metadata and coordinate arrays are read, never a
data variable; a coordinate is read in blocks and refused past a size, a chunk size or when its
values live outside the file (external storage, virtual datasets); values outside the Earth
(latitude 200) or coordinates the file's own attributes contradict are errors, not a box.
The libraries are C, and a damaged file can make them loop for ever, crash or allocate without
end (a bad length in an HDF5 global heap does the first), so read_isolated reads in a forked
child with a time and memory limit. NetCDF-4 files are HDF5 and read with h5py; NetCDF classic
with netCDF4.
"""
import math
import os
from dataclasses import dataclass, field
from datetime import UTC

from backend import isolation

MAX_COORDINATE_VALUES = 16 << 20   # values of one coordinate array read at most
BLOCK_VALUES = 1 << 20             # values read at once
MAX_CHUNK_BYTES = 64 << 20         # a chunk decompresses whole: bigger ones are not read
MAX_OBJECTS = 5000                 # objects of an HDF5 file visited at most
MAX_VARIABLES = 200                # variables listed at most
MAX_ATTRIBUTE_BYTES = 64 << 10     # an attribute larger than this is not read
MAX_GLOBAL_ATTRIBUTES = 200
MAX_TEXT = 256
TOLERANCE_DEG = 1.0                # coordinates may stick out of the declared box by this much
TOLERANCE_S = 86400                # ... and out of the declared time coverage by this much
TIME_LIMIT_S = 30                  # reading one file's metadata takes at most this long
MEMORY_LIMIT = 1 << 30             # ... and this much more memory

LAT_UNITS = {"degrees_north", "degree_north", "degrees_n", "degree_n", "degreesn", "degreen"}
LON_UNITS = {"degrees_east", "degree_east", "degrees_e", "degree_e", "degreese", "degreee"}
PHONY_DIMENSION = "This is a netCDF dimension but not a netCDF variable"


class FileError(ValueError):
    """The file is there but says something unreadable or impossible; the text says what."""


@dataclass
class Contents:
    """Global attributes, the variables listed, and the coordinates' extents (None: absent)."""
    attributes: dict = field(default_factory=dict)
    variables: list = field(default_factory=list)
    lat: tuple | None = None
    lon: tuple | None = None       # (west, east) in -180..180; west > east crosses 180
    time: tuple | None = None      # (first, last) aware datetimes


def read_isolated(reader, path, time_limit=None, memory_limit=None):
    """reader(path) in a forked child limited to `time_limit` seconds and `memory_limit` more
    bytes (backend/isolation.py); whatever goes wrong there is a FileError."""
    import h5py  # noqa: F401  (imported once here, not again in every child)
    import netCDF4  # noqa: F401

    try:
        return isolation.run(reader, path,
                             TIME_LIMIT_S if time_limit is None else time_limit,
                             MEMORY_LIMIT if memory_limit is None else memory_limit,
                             refusals=(FileError,))
    except isolation.ReadError as exc:
        raise FileError(str(exc)) from None


def read_hdf5(path):
    """Contents of an HDF5 (or NetCDF-4) file."""
    import h5py

    try:
        with h5py.File(path, "r", locking=False) as f:
            return _contents(_Hdf5(f))
    except FileError:
        raise
    except Exception as exc:   # h5py turns a damaged file into many kinds of error
        raise FileError(f"is not a readable HDF5 file: {exc}") from exc


def read_netcdf(path):
    """Contents of a NetCDF classic (CDF-1, -2, -5) file."""
    import netCDF4

    try:
        with netCDF4.Dataset(path, "r") as ds:
            ds.set_auto_maskandscale(False)
            _whole(ds, os.path.getsize(path))
            return _contents(_NetCdf(ds))
    except FileError:
        raise
    except Exception as exc:
        raise FileError(f"is not a readable NetCDF file: {exc}") from exc


def _whole(ds, size):
    """A classic file cut short reads as zeros past its end: refuse one smaller than its
    variables' values alone (a lower bound: the header comes on top)."""
    need = sum(math.prod(v.shape) * v.dtype.itemsize for v in ds.variables.values())
    if size < need:
        raise FileError(f"is cut short: its variables need at least {need:,} bytes and the "
                        f"file has {size:,}")


# ---------------------------------------------------------------------------------------------
# The two libraries behind one small interface: global attributes, variables, attribute of a
# variable, reading a block of a variable.


class _Hdf5:
    def __init__(self, f):
        self.f = f

    def global_attributes(self):
        return _bounded_attributes(self.f.attrs)

    def variables(self):
        import h5py

        found, seen = [], [0]

        def visit(name, obj):
            seen[0] += 1
            if seen[0] > MAX_OBJECTS or len(found) >= MAX_VARIABLES:
                return True
            if isinstance(obj, h5py.Dataset) and not self._phony(obj):
                found.append(_Variable(name, obj, self))
            return None

        self.f.visititems(visit)
        return found

    def _phony(self, dset):
        """A NetCDF-4 dimension without a coordinate variable: not a variable."""
        return str(self.attribute(dset, "NAME") or "").startswith(PHONY_DIMENSION)

    def attribute(self, dset, name):
        try:
            if name not in dset.attrs:
                return None
            if dset.attrs.get_id(name).get_storage_size() > MAX_ATTRIBUTE_BYTES:
                return None
            return plain(dset.attrs[name])
        except (OSError, KeyError, TypeError, ValueError):
            return None

    def check_readable(self, var):
        dset = var.handle
        if dset.is_virtual:
            raise FileError(f"the coordinate {var.name} is a virtual dataset: its values are "
                            "in other files, which are not read")
        if dset.id.get_create_plist().get_external_count():
            raise FileError(f"the coordinate {var.name} keeps its values in external files, "
                            "which are not read")
        if dset.chunks:
            chunk = math.prod(dset.chunks) * dset.dtype.itemsize
            if chunk > MAX_CHUNK_BYTES:
                raise FileError(f"the coordinate {var.name} is stored in chunks of "
                                f"{chunk / 2**20:.0f} MiB; at most "
                                f"{MAX_CHUNK_BYTES >> 20} MiB are read")

    def read(self, var, index):
        return var.handle[index]


class _NetCdf:
    def __init__(self, ds):
        self.ds = ds

    def global_attributes(self):
        names = list(self.ds.ncattrs())[:MAX_GLOBAL_ATTRIBUTES]
        return {name: plain(self.ds.getncattr(name)) for name in names}

    def variables(self):
        return [_Variable(name, var, self)
                for name, var in list(self.ds.variables.items())[:MAX_VARIABLES]]

    def attribute(self, var, name):
        try:
            return plain(var.getncattr(name)) if name in var.ncattrs() else None
        except (AttributeError, TypeError, ValueError):
            return None

    def check_readable(self, var):
        pass   # classic files hold their values themselves, uncompressed

    def read(self, var, index):
        return var.handle[index]


@dataclass
class _Variable:
    name: str
    handle: object
    source: object

    @property
    def shape(self):
        return tuple(int(n) for n in self.handle.shape)

    def attr(self, name):
        return self.source.attribute(self.handle, name)

    def text(self, name):
        value = self.attr(name)
        return value[:MAX_TEXT] if isinstance(value, str) else None


def _bounded_attributes(attrs):
    out = {}
    for name in list(attrs.keys())[:MAX_GLOBAL_ATTRIBUTES]:
        try:
            if attrs.get_id(name).get_storage_size() > MAX_ATTRIBUTE_BYTES:
                continue
            out[name] = plain(attrs[name])
        except (OSError, KeyError, TypeError, ValueError):
            continue   # a type numpy cannot hold (references, odd compounds): not metadata
    return out


def plain(value):
    """An attribute value as JSON-friendly text or number (numpy scalars and arrays too)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list):
        value = value[0] if len(value) == 1 else value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


# ---------------------------------------------------------------------------------------------
# Reading the file


def _contents(source):
    out = Contents(attributes=source.global_attributes())
    variables = source.variables()
    by_name = {v.name: v for v in variables}
    lats, lons, times = [], [], []
    for var in variables:
        entry = {"name": var.name, "shape": list(var.shape)}
        for key in ("units", "long_name"):
            text = var.text(key)
            if text:
                entry[key] = text
        out.variables.append(entry)
        kind = _coordinate_kind(var)
        if kind == "lat":
            lats.append(var)
        elif kind == "lon":
            lons.append(var)
        elif kind == "time":
            bounds = by_name.get(var.text("bounds") or "")
            times.append((var, bounds or var))
    out.lat = _union(_value_range(source, v) for v in lats)
    if out.lat and not (-90 - 1e-6 <= out.lat[0] and out.lat[1] <= 90 + 1e-6):
        raise FileError(f"its latitudes reach {_far(out.lat, 90):g}, outside -90..90")
    spans = [s for s in (_lon_spans(source, v) for v in lons) if s]
    if spans:
        out.lon = _lon_extent(spans)
    found = [(v, _value_range(source, b)) for v, b in times]
    out.time = _union(_datetimes(v, r) for v, r in found if r)
    return out


def _far(span, limit):
    return span[1] if abs(span[1]) > limit else span[0]


def _coordinate_kind(var):
    units = (var.text("units") or "").strip().lower()
    standard = (var.text("standard_name") or "").strip().lower()
    base = var.name.rsplit("/", 1)[-1].lower()
    if standard == "latitude" or units in LAT_UNITS or (base in ("lat", "latitude")
                                                        and units.startswith("degree")):
        return "lat"
    if standard == "longitude" or units in LON_UNITS or (base in ("lon", "longitude")
                                                         and units.startswith("degree")):
        return "lon"
    if (standard == "time" or base == "time") and " since " in units:
        return "time"
    return None


def _blocks(source, var):
    """The variable's values as float arrays in blocks of about BLOCK_VALUES, fill values,
    missing values and values outside the valid range dropped, scale and offset applied."""
    import numpy

    shape = var.shape
    count = math.prod(shape)
    if count > MAX_COORDINATE_VALUES:
        raise FileError(f"the coordinate {var.name} has {count:,} values; at most "
                        f"{MAX_COORDINATE_VALUES:,} are read")
    if count == 0:
        return
    source.check_readable(var)
    if getattr(getattr(var.handle, "dtype", None), "kind", "") not in tuple("iuf"):
        raise FileError(f"the coordinate {var.name} is not numeric")
    missing = [_number_or_none(var.attr(k)) for k in ("_FillValue", "missing_value")]
    low, high = _number_or_none(var.attr("valid_min")), _number_or_none(var.attr("valid_max"))
    valid_range = var.attr("valid_range")
    if isinstance(valid_range, list) and len(valid_range) == 2:
        low, high = (_number_or_none(v) for v in valid_range)
    scale = _number_or_none(var.attr("scale_factor"))
    offset = _number_or_none(var.attr("add_offset"))
    if not shape:
        indexes = [()]
    else:
        row = math.prod(shape[1:]) or 1
        step = max(1, BLOCK_VALUES // row)
        indexes = [slice(i, min(i + step, shape[0])) for i in range(0, shape[0], step)]
    for index in indexes:
        raw = numpy.asarray(source.read(var, index), dtype="float64").ravel()
        keep = numpy.isfinite(raw)
        for value in missing:
            if value is not None:
                keep &= raw != value
        if low is not None:
            keep &= raw >= low
        if high is not None:
            keep &= raw <= high
        values = raw[keep]
        if scale is not None:
            values = values * scale
        if offset is not None:
            values = values + offset
        yield values[numpy.isfinite(values)]


def _number_or_none(value):
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _value_range(source, var):
    low = high = None
    for values in _blocks(source, var):
        if values.size:
            lo, hi = float(values.min()), float(values.max())
            low = lo if low is None else min(low, lo)
            high = hi if high is None else max(high, hi)
    return None if low is None else (low, high)


def _union(spans):
    spans = [s for s in spans if s is not None]
    if not spans:
        return None
    return min(s[0] for s in spans), max(s[1] for s in spans)


def _lon_spans(source, var):
    """(min, max) of the longitudes seen in -180..180 and in 0..360: the narrower of the two
    tells whether the data crosses the antimeridian."""
    import numpy

    near = far = None
    for values in _blocks(source, var):
        if not values.size:
            continue
        if values.min() < -180 - 1e-6 or values.max() > 360 + 1e-6:
            bad = values.min() if values.min() < -180 else values.max()
            raise FileError(f"its longitudes reach {bad:g}, outside -180..360")
        a = numpy.mod(values + 180, 360) - 180
        b = numpy.mod(values, 360)
        near = _union([near, (float(a.min()), float(a.max()))])
        far = _union([far, (float(b.min()), float(b.max()))])
    return None if near is None else (near, far)


def _lon_extent(spans):
    near = _union(s[0] for s in spans)
    far = _union(s[1] for s in spans)
    if far[1] - far[0] < near[1] - near[0]:       # narrower across 180: it crosses there
        return tuple(v - 360 if v > 180 else v for v in far)
    return near


def _datetimes(var, span):
    import netCDF4

    units = var.text("units") or ""
    calendar = var.text("calendar") or "standard"
    try:
        first, last = netCDF4.num2date(list(span), units, calendar,
                                       only_use_cftime_datetimes=False,
                                       only_use_python_datetimes=True)
    except Exception as exc:   # cftime says why in many ways: units, calendar, overflow
        raise FileError(f"the times of {var.name} ({span[0]:g}..{span[1]:g} {units!r}, "
                        f"calendar {calendar!r}) cannot be read: {exc}") from exc
    return first.replace(tzinfo=UTC), last.replace(tzinfo=UTC)


# ---------------------------------------------------------------------------------------------
# The declared extent against the coordinates


def check_box(box, contents):
    """Raise FileError when the file's coordinates lie outside the box it declares."""
    west, south, east, north = box
    if contents.lat and (contents.lat[0] < south - TOLERANCE_DEG
                         or contents.lat[1] > north + TOLERANCE_DEG):
        raise FileError(f"it declares latitudes {south:g}..{north:g} but its coordinates "
                        f"span {contents.lat[0]:g}..{contents.lat[1]:g}")
    if contents.lon and not _arc_inside(contents.lon, (west, east)):
        raise FileError(f"it declares longitudes {west:g}..{east:g} but its coordinates "
                        f"span {contents.lon[0]:g}..{contents.lon[1]:g}")


def _arc_inside(inner, outer):
    """Whether the eastward arc inner (west, east) lies within outer, give or take the
    tolerance; arcs may cross the antimeridian."""
    start = outer[0] - TOLERANCE_DEG
    length = (outer[1] - outer[0]) % 360 + 2 * TOLERANCE_DEG
    if outer[1] - outer[0] >= 360 - 1e-9 or length >= 360:
        return True
    offset = (inner[0] - start) % 360
    return offset + (inner[1] - inner[0]) % 360 <= length


def check_times(start, end, contents):
    """Raise FileError when the file's time coordinate lies outside its declared coverage."""
    if not contents.time:
        return
    first, last = contents.time
    if ((start - first).total_seconds() > TOLERANCE_S
            or (last - end).total_seconds() > TOLERANCE_S):
        raise FileError(f"it declares {start.isoformat()}..{end.isoformat()} but its time "
                        f"coordinate spans {first.isoformat()}..{last.isoformat()}")
