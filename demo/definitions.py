"""The demo collections: realistic ESDTs of the kinds a DAAC holds, with what a collection
page shows (DOI, citation, variables, declared coverage; AIRS2RET_NRT declares none, so its
page shows what its granules cover)."""
from datetime import UTC, datetime

from .products import PRODUCTS

GLOBAL = {"extent_west": -180.0, "extent_south": -90.0, "extent_east": 180.0,
          "extent_north": 90.0}
TERRA_FIRST_LIGHT = datetime(2000, 2, 24, tzinfo=UTC)


def _variables(*rows):
    return [{"name": name, "units": units, "long_name": long_name}
            for name, units, long_name in rows]


def _variables_of(short_name):
    """The variables the demo's files of a collection hold: one list serves the files and the
    collection page, so the page never names a variable a downloaded file lacks."""
    return _variables(*((v.name, v.units, v.long_name) for v in PRODUCTS[short_name].variables))


DEMO_COLLECTIONS = [
    {
        "short_name": "MOD021KM", "version": "061",
        "title": "MODIS/Terra Calibrated Radiances 5-Min L1B Swath 1km",
        "description": "Calibrated and geolocated at-aperture radiances for 36 bands at 1 km, "
        "one granule per five minutes of the Terra orbit.",
        "processing_level": "1B", "platform": "Terra", "instrument": "MODIS",
        "file_patterns": [
            r"^(?P<granule>MOD021KM\.A\d{7}\.\d{4}\.061\.\d{13})\.(hdf|hdf\.met|png)$"],
        "doi": "10.5067/MODIS/MOD021KM.061",
        "variables": _variables_of("MOD021KM"),
        "citation": "MODIS Characterization Support Team (MCST), 2017. MODIS 1km Calibrated "
        "Radiances Product, Collection 6.1. NASA MODIS Adaptive Processing System, Goddard "
        "Space Flight Center. https://doi.org/10.5067/MODIS/MOD021KM.061",
        **GLOBAL, "extent_start": TERRA_FIRST_LIGHT,
    },
    {
        "short_name": "MOD10C1", "version": "061",
        "title": "MODIS/Terra Snow Cover Daily L3 Global 0.05Deg CMG",
        "description": "Daily global snow cover on a 0.05 degree climate modelling grid.",
        "processing_level": "3", "platform": "Terra", "instrument": "MODIS",
        "file_patterns": [r"^(?P<granule>MOD10C1\.A\d{7}\.061\.\d{13})\.(hdf|hdf\.met|jpg|png)$"],
        "doi": "10.5067/MODIS/MOD10C1.061",
        "citation": "Hall, D. K. and G. A. Riggs, 2021. MODIS/Terra Snow Cover Daily L3 Global "
        "0.05Deg CMG, Version 61. NASA National Snow and Ice Data Center DAAC, Boulder, "
        "Colorado USA. https://doi.org/10.5067/MODIS/MOD10C1.061",
        "variables": _variables_of("MOD10C1"),
        **GLOBAL, "extent_start": TERRA_FIRST_LIGHT,
    },
    {
        "short_name": "GHRSST_OISST_L4", "version": "2.1",
        "title": "GHRSST Level 4 Optimally Interpolated Sea Surface Temperature (NetCDF)",
        "description": "Daily 0.25 degree blended sea surface temperature analysis in NetCDF-4.",
        "processing_level": "4", "platform": "NOAA-19", "instrument": "AVHRR",
        "file_patterns": [
            r"^(?P<granule>\d{8}120000-NCEI-L4_GHRSST-SSTblend-AVHRR_OI-GLOB)\.(nc|png)$"],
        "doi": "10.5067/GHAAO-4BC21",
        "variables": _variables_of("GHRSST_OISST_L4"),
        "citation": "NOAA National Centers for Environmental Information, 2016. GHRSST Level 4 "
        "AVHRR_OI Global Blended Sea Surface Temperature Analysis (GDS2) from NCEI, Version "
        "2.1. PO.DAAC, CA, USA. https://doi.org/10.5067/GHAAO-4BC21",
        **GLOBAL, "extent_start": datetime(1981, 9, 1, tzinfo=UTC),
    },
    {
        "short_name": "AIRS2RET_NRT", "version": "7.0",
        "title": "AIRS/Aqua L2 Near Real Time Standard Physical Retrieval",
        "description": "Near-real-time temperature and humidity profiles; restricted to "
        "approved forecasting partners.",
        "processing_level": "2", "platform": "Aqua", "instrument": "AIRS", "access": "restricted",
        "file_patterns": [r"^(?P<granule>AIRS\.\d{4}\.\d{2}\.\d{2}\.\d{3}\.L2\.RetStd_NRT)\.hdf$"],
        "citation": "AIRS project, 2019. Aqua/AIRS L2 Near Real Time (NRT) Standard Physical "
        "Retrieval (AIRS-only) V7.0. Goddard Earth Sciences Data and Information Services "
        "Center (GES DISC), Greenbelt, MD, USA.",
        "variables": _variables(
            ("TAirStd", "K", "Air temperature at standard pressure levels"),
            ("H2OMMRStd", "g/kg", "Water vapour mass mixing ratio at standard levels"),
            ("TSurfStd", "K", "Surface skin temperature"),
            ("totO3Std", "Dobson units", "Total ozone burden"),
        ),
    },
]

DEMO_PROVIDERS = [
    {"name": "MODAPS", "title": "MODIS Adaptive Processing System",
     "collections": ["MOD021KM.061", "MOD10C1.061"]},
    {"name": "PODAAC_SIPS", "title": "Ocean products processing",
     "collections": ["GHRSST_OISST_L4.2.1"]},
]

DEMO_USERS = [
    {"username": "operator", "role": "operator", "password": "granary-operator"},
    {"username": "modaps", "role": "provider", "password": "granary-provider",
     "provider": "MODAPS"},
    {"username": "scientist", "role": "user", "password": "granary-scientist"},
]
