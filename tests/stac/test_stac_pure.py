"""The pure parts of backend.catalog.stac: no database, no HTTP."""
import hashlib
from datetime import UTC, datetime, timedelta, timezone

import multihash
import pytest

from backend.catalog import checksums, stac, stac_search

# The multicodec names of the checksum types Granary accepts that have a multihash code.
MULTICODEC = {"MD5": "md5", "SHA256": "sha2-256", "CKSUM": None, "ADLER32": None}


@pytest.mark.parametrize("kind", checksums.SUPPORTED)
def test_file_checksum_is_a_multihash_a_multihash_library_reads(kind):
    """pystac-client users check assets with multihash tools: the value must decode, name the
    right function and carry the file's digest; types with no multicodec code get none."""
    data = b"granule bytes"
    hasher = checksums.hasher(kind)
    hasher.update(data)
    value = stac.multihash(kind, hasher.hexdigest().upper())
    name = MULTICODEC[kind]
    if name is None:
        assert value is None
        assert not any(kind.lower() in code for code in multihash.constants.HASH_CODES)
        return
    decoded = multihash.decode(bytes.fromhex(value))
    assert decoded.name == name
    assert decoded.digest == hashlib.new(kind.lower(), data).digest()


def test_multihash_of_a_malformed_digest_is_left_out():
    assert stac.multihash("MD5", "not-hex") is None
    assert stac.multihash("SHA256", hashlib.md5(b"x").hexdigest()) is None


@pytest.mark.parametrize("name, expected", [
    ("MOD021KM.A2024001.0000.061.hdf", "application/x-hdf"),
    ("granule.H5", "application/x-hdf5"),
    ("sst.nc", "application/netcdf"),
    ("granule.met", "text/plain"),
    ("browse.JPG", "image/jpeg"),
    ("README", None),
    ("data.xyz", None),
])
def test_media_type_by_extension(name, expected):
    assert stac.media_type(name) == expected


def test_footprints():
    assert stac.footprint(None) is None
    assert stac.footprint([5, 6, 5, 6]) == {"type": "Point", "coordinates": [5, 6]}
    polygon = stac.footprint([-10, -5, 10, 5])
    assert polygon["type"] == "Polygon"
    assert polygon["coordinates"][0][0] == polygon["coordinates"][0][-1]
    split = stac.footprint([179, 0, -179, 1])
    assert split["type"] == "MultiPolygon"
    assert [min(p[0] for p in poly[0]) for poly in split["coordinates"]] == [179, -180]
    assert [max(p[0] for p in poly[0]) for poly in split["coordinates"]] == [180, -179]


@pytest.mark.parametrize("text, expected", [
    ("2024-01-31T12:00:00Z", datetime(2024, 1, 31, 12, tzinfo=UTC)),
    ("2024-01-31t12:00:00z", datetime(2024, 1, 31, 12, tzinfo=UTC)),
    ("2024-01-31T12:00:00.1Z", datetime(2024, 1, 31, 12, 0, 0, 100000, tzinfo=UTC)),
    ("2024-01-31T12:00:00.123456789Z", datetime(2024, 1, 31, 12, 0, 0, 123456, tzinfo=UTC)),
    ("2024-01-31T12:00:00-08:00",
     datetime(2024, 1, 31, 12, tzinfo=timezone(-timedelta(hours=8)))),
    ("2016-12-31T23:59:60Z", datetime(2016, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)),
])
def test_rfc3339_instants(text, expected):
    assert stac_search.parse_rfc3339(text) == expected


def test_format_datetime_is_utc_with_z():
    east = timezone(timedelta(hours=2))
    assert stac.format_datetime(datetime(2024, 1, 1, 2, tzinfo=east)) == "2024-01-01T00:00:00Z"
    assert stac.format_datetime(datetime(2024, 1, 1, 0, 0, 0, 5000, tzinfo=UTC)) == \
        "2024-01-01T00:00:00.005000Z"
    assert stac.format_datetime(None) is None


def test_geometry_shape_box_of_nested_geometries():
    polygon = {"type": "MultiPolygon", "coordinates": [
        [[[102, 2], [103, 2], [103, 3], [102, 3], [102, 2]]],
        [[[100, 0], [101, 0], [101, 1], [100, 1], [100, 0]]],
    ]}
    assert stac_search.geometry_shape(polygon).bbox().as_list() == [100, 0, 103, 3]
    line = {"type": "LineString", "coordinates": [[1, 2, 30], [3, -4, 50]]}
    assert stac_search.geometry_shape(line).bbox().as_list() == [1, -4, 3, 2]
    with pytest.raises(stac.StacError, match="latitude 95 is outside"):
        stac_search.geometry_shape({"type": "Point", "coordinates": [0, 95]})
    with pytest.raises(stac.StacError, match="malformed"):
        stac_search.geometry_shape({"type": "Point", "coordinates": ["a", 1]})


def test_tokens_round_trip_and_are_bound_to_the_sort():
    search = stac_search.search_from_query({"sortby": "-collection,+datetime"})
    values = ["MOD021KM", "061", datetime(2024, 1, 1, tzinfo=UTC), 42]
    token = stac_search.encode_token(search, values)
    resumed = stac_search.search_from_query({"sortby": "-collection,+datetime", "token": token})
    assert stac_search.decode_token(resumed) == values
    other = stac_search.search_from_query({"sortby": "id", "token": token})
    with pytest.raises(stac.StacError, match="another sortby"):
        stac_search.decode_token(other)


def test_search_order_ends_with_a_unique_tie_breaker():
    search = stac_search.search_from_body({"sortby": [{"field": "properties.datetime",
                                                "direction": "desc"}, {"field": "id"}]})
    assert search.order() == [("temporal_start", "datetime", True),
                              ("granule_id", "text", False), ("pk", "int", True)]
    assert stac_search.search_from_query({}).order() == [("temporal_start", "datetime", True),
                                                  ("pk", "int", True)]


def test_extent_bbox():
    assert stac.Extent().bbox() == [-180.0, -90.0, 180.0, 90.0]
    assert stac.Extent(1, 2, 3, 4).bbox() == [1, 2, 3, 4]
    assert stac.Extent(1, 2, 3, 4, crosses_antimeridian=True).bbox() == [-180.0, 2, 180.0, 4]
