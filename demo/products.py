"""The demo collections' products as real files a scientist can open: small NetCDF-4 (netCDF4)
and HDF5 (h5py) granules with CF variables (units, long names, fill values, scale and offset),
latitude/longitude/time coordinates and CF/ACDD global attributes, and a browse PNG of each
granule's main variable. Pure Python, no Django.

The fields are synthetic but plausible: smooth seeded patterns laid on Natural Earth's land
mask (land-mask.png), MODIS swaths placed along a sun-synchronous orbit so that times,
positions and day or night agree. Each file says it is demo data (global attribute `comment`).
The same collection, seed and index always give the same bytes.
"""
import functools
import math
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy

from . import browse
from .ecs_met import inventory_metadata

DAY0 = datetime(2026, 11, 1, tzinfo=UTC)
COMMENT = ("Synthetic demo data made by Granary's seed_demo: plausible fields on a real land "
           "mask, not an observation. Do not use for science.")
INSTITUTION = "Granary demo archive"


@dataclass(frozen=True)
class Variable:
    name: str
    long_name: str
    units: str


@dataclass(frozen=True)
class Product:
    """What a collection's demo granules hold: file format, variables (coordinates first),
    and the variable the browse image shows."""
    short_name: str
    file_format: str
    main: str
    variables: tuple


PRODUCTS = {p.short_name: p for p in (
    Product("GHRSST_OISST_L4", "NetCDF-4", "analysed_sst", (
        Variable("time", "reference time of sst field", "seconds since 1981-01-01 00:00:00"),
        Variable("lat", "latitude", "degrees_north"),
        Variable("lon", "longitude", "degrees_east"),
        Variable("analysed_sst", "analysed sea surface temperature", "kelvin"),
        Variable("analysis_error", "estimated error standard deviation of analysed_sst",
                 "kelvin"),
        Variable("sea_ice_fraction", "sea ice area fraction", "1"),
    )),
    Product("MOD10C1", "HDF5", "Day_CMG_Snow_Cover", (
        Variable("time", "day of the observations", "days since 2000-01-01 00:00:00"),
        Variable("lat", "latitude of the cell centre", "degrees_north"),
        Variable("lon", "longitude of the cell centre", "degrees_east"),
        Variable("Day_CMG_Snow_Cover", "daily snow extent, global at 1 degree", "percent"),
        Variable("Day_CMG_Cloud_Obscured", "cloud obscured observations of the cell",
                 "percent"),
        Variable("Day_CMG_Clear_Index", "clear sky observations of the cell", "percent"),
    )),
    Product("MOD021KM", "HDF5", "Band31_Brightness_Temperature", (
        Variable("Latitude", "geodetic latitude of the pixel", "degrees_north"),
        Variable("Longitude", "geodetic longitude of the pixel", "degrees_east"),
        Variable("SolarZenith", "solar zenith angle", "degree"),
        Variable("Band1_Radiance", "radiance of band 1 (0.645 um)", "W m-2 um-1 sr-1"),
        Variable("Band2_Radiance", "radiance of band 2 (0.858 um)", "W m-2 um-1 sr-1"),
        Variable("Band31_Brightness_Temperature", "brightness temperature of band 31 (11.03 um)",
                 "K"),
    )),
)}


@dataclass
class DemoGranule:
    granule_id: str
    files: list          # [(name, role, path)]
    attributes: dict     # what the provider's system declares besides the files


def make_granule(short_name, index, folder, seed=0):
    """Write granule number `index` of the collection into `folder`; returns it."""
    waves = _Waves(numpy.random.default_rng([zlib.crc32(short_name.encode()), seed]))
    maker = {"GHRSST_OISST_L4": _sst, "MOD10C1": _snow, "MOD021KM": _swath}[short_name]
    return maker(PRODUCTS[short_name], index, Path(folder), _rng(short_name, index, seed), waves)


def granule_id(short_name, index, seed=0):
    """The id make_granule gives, without making it."""
    if short_name == "MOD021KM":
        return _swath_id(_swath_start(index, _rng(short_name, index, seed)))
    start = DAY0 + timedelta(days=index)
    if short_name == "MOD10C1":
        return f"MOD10C1.A{start:%Y}{start.timetuple().tm_yday:03d}.061.2026320093000"
    return f"{start:%Y%m%d}120000-NCEI-L4_GHRSST-SSTblend-AVHRR_OI-GLOB"


def _rng(short_name, index, seed):
    return numpy.random.default_rng([zlib.crc32(short_name.encode()), seed, index])


# ---------------------------------------------------------------------------------------------
# Shared pieces: the land mask, smooth patterns, attributes


@functools.cache
def _land():
    """Land (True) in 0.5 degree cells, row 0 at 90N, column 0 at 180W."""
    from PIL import Image

    with Image.open(Path(__file__).with_name("land-mask.png")) as picture:
        return numpy.array(picture.convert("1"), dtype=bool)


def land_at(lat, lon):
    land = _land()
    rows = numpy.clip(((90 - numpy.asarray(lat)) * 2).astype(int), 0, land.shape[0] - 1)
    cols = (((numpy.asarray(lon) + 180) * 2).astype(int)) % land.shape[1]
    return land[rows, cols]


class _Waves:
    """A smooth pattern over the globe that drifts from day to day: a sum of plane waves in
    three dimensions taken on the unit sphere, so it has no seam at 180 and no pinch at the
    poles; `fine` shortens the waves."""

    def __init__(self, rng, count=7):
        directions = rng.normal(size=(count, 3))
        directions /= numpy.linalg.norm(directions, axis=1, keepdims=True)
        self.terms = [(directions[k] * rng.uniform(1.5, 4.0), rng.uniform(0, 2 * math.pi),
                       rng.uniform(0.5, 1.0), rng.uniform(-0.4, 0.4)) for k in range(count)]
        self.norm = math.sqrt(sum(t[2] ** 2 for t in self.terms) / 2)

    def __call__(self, lat, lon, day, fine=1):
        phi, lam = numpy.radians(lat), numpy.radians(lon)
        x, y, z = numpy.cos(phi) * numpy.cos(lam), numpy.cos(phi) * numpy.sin(lam), numpy.sin(phi)
        total = numpy.zeros(numpy.broadcast(phi, lam).shape)
        for (kx, ky, kz), phase, amplitude, drift in self.terms:
            total += amplitude * numpy.sin(fine * (kx * x + ky * y + kz * z) + phase + drift * day)
        return total / self.norm        # about -2..2, standard deviation 1


def _attributes(product, title, start, end, box, extra=()):
    west, south, east, north = box
    return {
        "Conventions": "CF-1.8, ACDD-1.3",
        "title": title,
        "summary": f"{title}: a small stand-in for the product, for trying Granary out.",
        "comment": COMMENT,
        "institution": INSTITUTION,
        "source": f"Granary demo generator for {product.short_name}",
        "product_id": product.short_name,
        "time_coverage_start": _iso(start),
        "time_coverage_end": _iso(end),
        "geospatial_lat_min": float(south), "geospatial_lat_max": float(north),
        "geospatial_lon_min": float(west), "geospatial_lon_max": float(east),
        "geospatial_lat_units": "degrees_north", "geospatial_lon_units": "degrees_east",
        "date_created": _iso(end + timedelta(hours=3)),
        **dict(extra),
    }


def _iso(when):
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _describe(target, product, name):
    """units and long_name of a variable from the product's description."""
    spec = next(v for v in product.variables if v.name == name)
    target.units, target.long_name = spec.units, spec.long_name


# ---------------------------------------------------------------------------------------------
# GHRSST L4 sea surface temperature (NetCDF-4)

GRID = 1.0


def _grid(north_first):
    lat = numpy.arange(-90 + GRID / 2, 90, GRID)
    lon = numpy.arange(-180 + GRID / 2, 180, GRID)
    return (lat[::-1] if north_first else lat), lon


def _sst(product, index, folder, rng, waves):
    import netCDF4

    start = DAY0 + timedelta(days=index)
    end = start + timedelta(days=1)
    gid = granule_id(product.short_name, index)
    lat, lon = _grid(north_first=False)
    lats, lons = lat[:, None], lon[None, :]
    ocean = ~land_at(lats, lons)
    # warm tropics, freezing poles, the warmth shifted south in the austral spring
    field = (271.35 + 31.5 * numpy.cos(numpy.radians(lats + 4)) ** 2
             + 1.2 * waves(lats, lons, index) + 0.4 * waves(lats, lons, index, fine=5))
    ice = numpy.clip((271.9 - field) / 1.5, 0, 1)
    sst = numpy.clip(field, 271.35, 306.0)
    error = 0.25 + 0.1 * numpy.abs(waves(lats, lons, index + 0.5, fine=2)) + 0.3 * ice
    error += rng.uniform(0, 0.05)
    path = folder / f"{gid}.nc"
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("time", 1)
        ds.createDimension("lat", lat.size)
        ds.createDimension("lon", lon.size)
        time = ds.createVariable("time", "i4", ("time",))
        _describe(time, product, "time")
        time.standard_name, time.axis, time.calendar = "time", "T", "standard"
        time[:] = [int((start + timedelta(hours=12) - datetime(1981, 1, 1, tzinfo=UTC))
                       .total_seconds())]
        for name, values, axis in (("lat", lat, "Y"), ("lon", lon, "X")):
            coordinate = ds.createVariable(name, "f4", (name,))
            _describe(coordinate, product, name)
            coordinate.standard_name = "latitude" if name == "lat" else "longitude"
            coordinate.axis = axis
            coordinate[:] = values
        packed = [("analysed_sst", sst, "i2", 0.01, 273.15, "sea_surface_foundation_temperature"),
                  ("analysis_error", error, "i2", 0.01, 0.0, None),
                  ("sea_ice_fraction", ice, "i1", 0.01, 0.0, "sea_ice_area_fraction")]
        for name, values, kind, scale, offset, standard in packed:
            fill = -32768 if kind == "i2" else -128
            var = ds.createVariable(name, kind, ("time", "lat", "lon"), zlib=True, complevel=4,
                                    shuffle=True, fill_value=fill)
            _describe(var, product, name)
            if standard:
                var.standard_name = standard
            var.scale_factor, var.add_offset = numpy.float32(scale), numpy.float32(offset)
            var.coordinates = "time lat lon"
            var[0] = numpy.ma.masked_array(values, mask=~ocean)
        ds.setncatts(_attributes(
            product, "GHRSST Level 4 blended sea surface temperature analysis (demo)", start, end,
            (-180.0, -90.0, 180.0, 90.0), {
                "platform": "NOAA-19", "instrument": "AVHRR", "processing_level": "L4",
                "product_version": "2.1", "geospatial_lat_resolution": GRID,
                "geospatial_lon_resolution": GRID, "cdm_data_type": "grid"}))
    picture = browse.render(numpy.where(ocean, sst, numpy.nan)[::-1], 271, 305, "thermal",
                            "analysed_sst (kelvin)", scale=2)
    png = folder / f"{gid}.png"
    png.write_bytes(picture)
    return DemoGranule(gid, [(path.name, "data", path), (png.name, "browse", png)],
                       {"sst_mean_k": round(float(sst[ocean].mean()), 2)})


# ---------------------------------------------------------------------------------------------
# MOD10C1 daily snow cover on a global grid (HDF5)


def _snow(product, index, folder, rng, waves):
    import h5py

    start = DAY0 + timedelta(days=index)
    end = start + timedelta(days=1) - timedelta(seconds=1)
    gid = granule_id(product.short_name, index)
    lat, lon = _grid(north_first=True)
    lats, lons = lat[:, None], lon[None, :]
    land = land_at(lats, lons)
    # snow from the poles down to a snow line that wanders with longitude and moves south as
    # winter comes; Antarctica and the high Arctic always white
    line = 52 - index * 0.6 + 4 * waves(0.0, lons, index * 0.2)
    depth = numpy.maximum(lats - line, -lats - 62)
    snow = numpy.clip(depth / 12 + 0.5, 0, 1) * 100
    cloud = numpy.clip(45 + 25 * waves(lats, lons, index, fine=3) + rng.normal(0, 4), 0, 100)
    path = folder / f"{gid}.hdf"
    with h5py.File(path, "w") as f:
        days = (start - datetime(2000, 1, 1, tzinfo=UTC)).days + 0.5
        f.create_dataset("time", data=numpy.array([days]))
        f["time"].attrs.update({"standard_name": "time", "calendar": "standard"})
        _h5_describe(f["time"], product, "time")
        for name, values in (("lat", lat), ("lon", lon)):
            f.create_dataset(name, data=values.astype("f4"))
            _h5_describe(f[name], product, name)
            f[name].attrs["standard_name"] = "latitude" if name == "lat" else "longitude"
            f[name].make_scale(name)
        for name, values in (("Day_CMG_Snow_Cover", snow), ("Day_CMG_Cloud_Obscured", cloud),
                             ("Day_CMG_Clear_Index", 100 - cloud)):
            packed = numpy.where(land, numpy.round(values), 255).astype("u1")
            dset = f.create_dataset(name, data=packed, compression="gzip", compression_opts=4,
                                    shuffle=True, fillvalue=255, chunks=(90, 180))
            _h5_describe(dset, product, name)
            dset.attrs["_FillValue"] = numpy.uint8(255)
            dset.attrs["valid_range"] = numpy.array([0, 100], dtype="u1")
            dset.attrs["coordinates"] = "lat lon"
            dset.dims[0].attach_scale(f["lat"])
            dset.dims[1].attach_scale(f["lon"])
        f.attrs.update(_attributes(
            product, "MODIS/Terra Snow Cover Daily L3 Global CMG (demo)", start, end,
            (-180.0, -90.0, 180.0, 90.0), {
                "platform": "Terra", "instrument": "MODIS", "processing_level": "L3",
                "product_version": "061", "geospatial_lat_resolution": GRID,
                "geospatial_lon_resolution": GRID}))
    shown = numpy.where(land, numpy.round(snow), numpy.nan)
    picture = browse.render(shown, 0, 100, "snow", "Day_CMG_Snow_Cover (percent)", scale=2,
                            no_data=browse.SEA)
    png = folder / f"{gid}.png"
    png.write_bytes(picture)
    return DemoGranule(gid, [(path.name, "data", path), (png.name, "browse", png)],
                       {"snow_cover_pct": round(float(snow[land].mean()), 1)})


def _h5_describe(dset, product, name):
    spec = next(v for v in product.variables if v.name == name)
    dset.attrs["units"], dset.attrs["long_name"] = spec.units, spec.long_name


# ---------------------------------------------------------------------------------------------
# MOD021KM five-minute swaths (HDF5 with an ECS .met): a sun-synchronous orbit, descending at
# 10:30 local time, whose daytime pass on the first day crosses the equator at 20E.

ORBIT_S = 98.88 * 60
INCLINATION = math.radians(98.2)
FIRST_PASS_S = 9 * 3600 + 10 * 60
ROWS, COLUMNS = 203, 135          # 10 km pixels: a tenth of the 1 km product's 2030 x 1354
HALF_WIDTH_KM = 1165.0
EARTH_KM = 6371.0


def _track(seconds):
    """Sub-satellite latitude and longitude (degrees) at `seconds` after DAY0."""
    u = math.pi + 2 * math.pi * (seconds - FIRST_PASS_S) / ORBIT_S   # from the ascending node
    lat = numpy.degrees(numpy.arcsin(numpy.sin(INCLINATION) * numpy.sin(u)))
    along = numpy.degrees(numpy.arctan2(numpy.cos(INCLINATION) * numpy.sin(u), numpy.cos(u)))
    hours = (seconds / 3600.0) % 24
    node = (22.5 - hours) * 15          # the ascending node stays at 22:30 local time
    return lat, (node + along + 180) % 360 - 180


def _pass_start(day):
    """A five-minute boundary shortly before the day's descending equator crossing nearest
    09:10 UTC (a daytime pass over Europe and Africa)."""
    crossing = FIRST_PASS_S + round(day * 86400 / ORBIT_S) * ORBIT_S
    return int(crossing // 300) * 300 - 300


def _destination(lat, lon, bearing, km):
    """The point `km` from (lat, lon) along `bearing` on a sphere (degrees)."""
    phi, lam, theta = numpy.radians(lat), numpy.radians(lon), numpy.radians(bearing)
    delta = km / EARTH_KM
    phi2 = numpy.arcsin(numpy.sin(phi) * numpy.cos(delta)
                        + numpy.cos(phi) * numpy.sin(delta) * numpy.cos(theta))
    lam2 = lam + numpy.arctan2(numpy.sin(theta) * numpy.sin(delta) * numpy.cos(phi),
                               numpy.cos(delta) - numpy.sin(phi) * numpy.sin(phi2))
    return numpy.degrees(phi2), (numpy.degrees(lam2) + 180) % 360 - 180


def _bearing(lat1, lon1, lat2, lon2):
    phi1, phi2 = numpy.radians(lat1), numpy.radians(lat2)
    dlam = numpy.radians(lon2 - lon1)
    return numpy.degrees(numpy.arctan2(
        numpy.sin(dlam) * numpy.cos(phi2),
        numpy.cos(phi1) * numpy.sin(phi2) - numpy.sin(phi1) * numpy.cos(phi2) * numpy.cos(dlam)))


def _solar_zenith(lat, lon, when):
    """Degrees, from the declination of the day and the hour angle (good to a degree)."""
    doy = when.timetuple().tm_yday
    declination = math.radians(-23.44 * math.cos(2 * math.pi / 365 * (doy + 10)))
    hours = when.hour + when.minute / 60 + when.second / 3600
    hour_angle = numpy.radians((hours + numpy.asarray(lon) / 15 - 12) * 15)
    phi = numpy.radians(lat)
    cos_z = (numpy.sin(phi) * math.sin(declination)
             + numpy.cos(phi) * math.cos(declination) * numpy.cos(hour_angle))
    return numpy.degrees(numpy.arccos(numpy.clip(cos_z, -1, 1)))


def swath_box(lat, lon):
    """(west, south, east, north) around a swath: longitudes taken relative to its centre so
    a swath across 180 gets west > east; one over a pole goes all the way round."""
    centre = float(lon[lat.shape[0] // 2, lat.shape[1] // 2])
    relative = (lon - centre + 180) % 360 - 180
    south, north = float(lat.min()), float(lat.max())
    if north > 89 or south < -89 or relative.max() - relative.min() > 350:
        return -180.0, south, 180.0, north
    west, east = (float((centre + r + 180) % 360 - 180) for r in (relative.min(), relative.max()))
    return west, south, east, north


def swath_gring(lat, lon, per_edge=10):
    """The swath's outline as a G-ring (first row, last column, last row and first column
    back, `per_edge` points each), or None where it is not a simple polygon on the lon/lat
    plane (a swath over a pole): its bounding rectangle then stands for it."""
    from backend.catalog import shapes

    rows, columns = lat.shape
    across = numpy.linspace(0, columns - 1, per_edge + 1).round().astype(int)
    along = numpy.linspace(0, rows - 1, per_edge + 1).round().astype(int)
    edge = ([(0, c) for c in across[:-1]] + [(r, columns - 1) for r in along[:-1]]
            + [(rows - 1, c) for c in across[::-1][:-1]] + [(r, 0) for r in along[::-1][:-1]])
    ring = [[round(float(lon[r, c]), 4), round(float(lat[r, c]), 4)] for r, c in edge]
    north, south = max(y for _, y in ring), min(y for _, y in ring)
    if north > 89 or south < -89:
        return None
    try:
        shapes.parse_geojson({"type": "Polygon", "coordinates": [[*ring, ring[0]]]},
                             edges=shapes.SPHERE)
    except shapes.ShapeError:
        return None
    return ring


def _swath_start(index, rng):
    day, slot = divmod(index, 4)
    if slot < 3:        # three granules of the daytime pass over Europe and Africa
        seconds = _pass_start(day) + slot * 300
    else:               # and one anywhere else in the day
        seconds = day * 86400 + int(rng.integers(0, 288)) * 300
    return DAY0 + timedelta(seconds=seconds)


def _swath_id(start):
    doy = start.timetuple().tm_yday
    return f"MOD021KM.A{start:%Y}{doy:03d}.{start:%H%M}.061.2026{doy + 1:03d}101512"


def _swath_geometry(start):
    """Latitude and longitude of each pixel: rows along the track, columns across it."""
    offset = (start - DAY0).total_seconds()
    times = offset + (numpy.arange(ROWS) + 0.5) * 300.0 / ROWS
    centre_lat, centre_lon = _track(times)
    ahead_lat, ahead_lon = _track(times + 1.0)
    heading = _bearing(centre_lat, centre_lon, ahead_lat, ahead_lon)
    across = numpy.linspace(-HALF_WIDTH_KM, HALF_WIDTH_KM, COLUMNS)
    return _destination(centre_lat[:, None], centre_lon[:, None], heading[:, None] + 90,
                        across[None, :])


def _swath_fields(lat, lon, zenith, start, rng, waves):
    """Band 31 brightness temperature, bands 1 and 2 radiance (NaN at night) and the cloud
    mask: land warmer by day, cloud tops cold and bright."""
    land = land_at(lat, lon)
    day = start.timetuple().tm_yday - DAY0.timetuple().tm_yday
    clouds = (waves(lat, lon, day, fine=6) + 0.6 * waves(lat, lon, day + 3, fine=15)
              + 0.4 * waves(lat, lon, day + 5, fine=40))
    thickness = numpy.clip((clouds - rng.uniform(-0.6, 0.9)) / 0.8, 0, 1)
    cloudy = thickness > 0.3
    lit = zenith < 90
    surface = 271.5 + 31 * numpy.cos(numpy.radians(lat + 4)) ** 2 + numpy.where(
        land, numpy.where(lit, 9.0, -6.0), 0.0)
    top = 242 - 12 * waves(lat, lon, day + 7, fine=30)
    temperature = surface + thickness * (numpy.minimum(top, surface - 2) - surface)
    sun = numpy.cos(numpy.radians(zenith)).clip(0) / math.pi
    bright = thickness * 0.7
    red = numpy.where(lit, (bright + (1 - bright) * numpy.where(land, 0.12, 0.04)) * 1600 * sun,
                      numpy.nan)
    nir = numpy.where(lit, (bright + (1 - bright) * numpy.where(land, 0.30, 0.02)) * 980 * sun,
                      numpy.nan)
    return temperature, red, nir, cloudy


def _swath(product, index, folder, rng, waves):
    import h5py

    start = _swath_start(index, rng)
    end = start + timedelta(minutes=5)
    gid = _swath_id(start)
    lat, lon = _swath_geometry(start)
    zenith = _solar_zenith(lat, lon, start + timedelta(seconds=150))
    temperature, red, nir, cloudy = _swath_fields(lat, lon, zenith, start, rng, waves)
    box = swath_box(lat, lon)
    path = folder / f"{gid}.hdf"
    with h5py.File(path, "w") as f:
        for name, values in (("Latitude", lat), ("Longitude", lon)):
            dset = f.create_dataset(name, data=values.astype("f4"), compression="gzip",
                                    compression_opts=4, shuffle=True, chunks=(ROWS, COLUMNS))
            _h5_describe(dset, product, name)
            dset.attrs["standard_name"] = name.lower()
        for name, values, kind, scale, add in (
                ("SolarZenith", zenith, "i2", 0.01, 0.0),
                ("Band1_Radiance", red, "u2", 0.02, 0.0),
                ("Band2_Radiance", nir, "u2", 0.02, 0.0),
                ("Band31_Brightness_Temperature", temperature, "u2", 0.01, 150.0)):
            fill = numpy.iinfo(kind).max if kind == "u2" else numpy.iinfo(kind).min
            packed = numpy.where(numpy.isnan(values), fill,
                                 numpy.round((numpy.nan_to_num(values) - add) / scale))
            dset = f.create_dataset(name, data=packed.astype(kind), compression="gzip",
                                    compression_opts=4, shuffle=True, fillvalue=fill,
                                    chunks=(ROWS, COLUMNS))
            _h5_describe(dset, product, name)
            dset.attrs.update({"_FillValue": numpy.array(fill, dtype=kind),
                               "scale_factor": numpy.float32(scale),
                               "add_offset": numpy.float32(add),
                               "coordinates": "Latitude Longitude"})
        f.attrs.update(_attributes(
            product, "MODIS/Terra Calibrated Radiances 5-Min L1B Swath (demo, 10 km)", start,
            end, box, {"platform": "Terra", "instrument": "MODIS", "processing_level": "L1B",
                       "product_version": "061", "cdm_data_type": "swath"}))
    day_night = "Day" if float(zenith[ROWS // 2, COLUMNS // 2]) < 85 else "Night"
    met = folder / f"{gid}.hdf.met"
    met.write_text(inventory_metadata(f"{gid}.hdf", start, end, box, day_night,
                                      swath_gring(lat, lon)))
    north_up = temperature if lat[0].mean() >= lat[-1].mean() else temperature[::-1, ::-1]
    picture = browse.render(north_up, 200, 310, "infrared",
                            "Band31_Brightness_Temperature (K)", scale=2)
    png = folder / f"{gid}.png"
    png.write_bytes(picture)
    return DemoGranule(gid, [(path.name, "data", path), (met.name, "metadata", met),
                             (png.name, "browse", png)],
                       {"day_night": day_night, "cloud_cover": int(round(cloudy.mean() * 100))})
