"""Archived granules with files, shaped for STAC tests."""
from datetime import UTC, datetime, timedelta

from backend.catalog.models import File
from tests.factories import FileFactory, GranuleFactory


def at(day, hour=0):
    return datetime(2024, 3, day, hour, tzinfo=UTC)


def make_granule(collection, granule_id, start, box=(-10, -10, 10, 10), **kwargs):
    west, south, east, north = box
    granule = GranuleFactory(
        collection=collection, granule_id=granule_id, temporal_start=start,
        temporal_end=start + timedelta(minutes=5), west=west, south=south, east=east,
        north=north, **kwargs,
    )
    FileFactory(granule=granule, name=f"{granule_id}.hdf")
    FileFactory(granule=granule, name=f"{granule_id}.jpg", role=File.Role.BROWSE, size=10,
                checksum_type=File.ChecksumType.CKSUM, checksum="1234")
    return granule
