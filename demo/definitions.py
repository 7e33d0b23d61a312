"""The demo collections: realistic ESDTs of the kinds a DAAC holds."""

DEMO_COLLECTIONS = [
    {
        "short_name": "MOD021KM", "version": "061",
        "title": "MODIS/Terra Calibrated Radiances 5-Min L1B Swath 1km",
        "description": "Calibrated and geolocated at-aperture radiances for 36 bands at 1 km, "
        "one granule per five minutes of the Terra orbit.",
        "processing_level": "1B", "platform": "Terra", "instrument": "MODIS",
        "file_patterns": [
            r"^(?P<granule>MOD021KM\.A\d{7}\.\d{4}\.061\.\d{13})\.(hdf|hdf\.met|png)$"],
    },
    {
        "short_name": "MOD10C1", "version": "061",
        "title": "MODIS/Terra Snow Cover Daily L3 Global 0.05Deg CMG",
        "description": "Daily global snow cover on a 0.05 degree climate modelling grid.",
        "processing_level": "3", "platform": "Terra", "instrument": "MODIS",
        "file_patterns": [r"^(?P<granule>MOD10C1\.A\d{7}\.061\.\d{13})\.(hdf|hdf\.met|jpg|png)$"],
    },
    {
        "short_name": "GHRSST_OISST_L4", "version": "2.1",
        "title": "GHRSST Level 4 Optimally Interpolated Sea Surface Temperature (NetCDF)",
        "description": "Daily 0.25 degree blended sea surface temperature analysis in NetCDF-4.",
        "processing_level": "4", "platform": "NOAA-19", "instrument": "AVHRR",
        "file_patterns": [
            r"^(?P<granule>\d{8}120000-NCEI-L4_GHRSST-SSTblend-AVHRR_OI-GLOB)\.(nc|png)$"],
    },
    {
        "short_name": "AIRS2RET_NRT", "version": "7.0",
        "title": "AIRS/Aqua L2 Near Real Time Standard Physical Retrieval",
        "description": "Near-real-time temperature and humidity profiles; restricted to "
        "approved forecasting partners.",
        "processing_level": "2", "platform": "Aqua", "instrument": "AIRS", "access": "restricted",
        "file_patterns": [r"^(?P<granule>AIRS\.\d{4}\.\d{2}\.\d{2}\.\d{3}\.L2\.RetStd_NRT)\.hdf$"],
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
