"""Shape searches read the banded index on PostgreSQL (a run per collection and latitude
band, merged): what they find, page by page, must be what a scan of every granule finds."""
import random
from datetime import timedelta

import pytest

from backend.catalog import shapes
from backend.catalog.geo import BBox
from backend.catalog.models import Granule
from backend.catalog.stac_query import BAND_DEGREES, bands
from tests.factories import CollectionFactory, GranuleFactory

from .builders import at
from .test_search_shape import collect


def test_bands_hold_every_granule_that_can_meet_the_box():
    """A granule no taller than `tallest` meets the box's latitudes only if the band of its
    south edge is among bands(): checked over a grid of granules against BBox.intersects."""
    for box in ((-20, -3, 20, 4), (170, 60, -170, 90), (-180, -90, 180, -85), (0, 35, 1, 35)):
        shape = shapes.from_box(*box)
        for tallest in (0, 4.5, 10, 25):
            chosen = set(bands(shape, tallest))
            for south in range(-90, 91):
                for height in (0, tallest / 2, tallest):
                    north = min(90, south + height)
                    if BBox(-180, south, 180, north).intersects(BBox(*box)):
                        assert south // BAND_DEGREES in chosen, (box, tallest, south, height)


@pytest.fixture
def scattered(db):
    """Granules of two collections with seeded boxes of every height (some crossing 180°,
    some reaching a pole), times with ties, some not archived and some without a box."""
    rng = random.Random(7)
    made = [CollectionFactory(short_name=name, version="1") for name in ("TALL", "FLAT")]
    for i in range(160):
        collection = made[i % 2]
        height = rng.choice((1, 5, 12, 40)) if collection is made[0] else rng.choice((1, 3))
        south = rng.uniform(-90, 90 - height)
        west = rng.uniform(-180, 180)
        east = west + rng.uniform(1, 50)
        box = dict(west=west, south=south, east=east - 360 if east > 180 else east,
                   north=south + height)
        if i % 17 == 0:
            box = dict(west=None, south=None, east=None, north=None)
        GranuleFactory(collection=collection, granule_id=f"S{i:03d}",
                       temporal_start=at(1) + timedelta(hours=rng.randrange(40)),
                       state=Granule.State.WITHDRAWN if i % 13 == 0 else Granule.State.ARCHIVED,
                       **box)
    return made


def scan(box, start, end, descending):
    """The ids a scan of every granule finds, in the search's order."""
    hits = [g for g in Granule.objects.filter(state=Granule.State.ARCHIVED)
            if g.bbox and g.temporal_start <= end and g.temporal_end >= start
            and BBox(*g.bbox).intersects(BBox(*box))]
    hits.sort(key=lambda g: (g.temporal_start, g.pk), reverse=descending)
    return [("TALL.1" if g.collection.short_name == "TALL" else "FLAT.1", g.granule_id)
            for g in hits]


@pytest.mark.parametrize("box", [(-60, -20, 60, 20), (160, 20, -150, 50), (-180, 60, 180, 90),
                                 (10, -90, 40, -70), (-5, 44, -4, 45)])
@pytest.mark.parametrize("sortby", ["-datetime", "+datetime"])
def test_banded_pages_cover_every_match_once_in_order(api, scattered, box, sortby):
    start, end = at(1, 5), at(2, 10)
    window = f"{start:%Y-%m-%dT%H:%M:%SZ}/{end:%Y-%m-%dT%H:%M:%SZ}"
    bbox = ",".join(str(v) for v in box)
    got = collect(api, f"/stac/search?limit=2&collections=TALL.1,FLAT.1&bbox={bbox}"
                       f"&datetime={window}&sortby={sortby}")
    want = scan(box, start, end, sortby.startswith("-"))
    assert got == want and len(set(got)) == len(got)
