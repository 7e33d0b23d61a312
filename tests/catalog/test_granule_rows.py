"""A search page's granules written by granule_rows are what GranuleSerializer's DRF fields
write for each: same keys in the same order, same values (times in UTC with Z and their
microseconds, boxes as floats, footprints from the outline or the box, browse links)."""
import json
from datetime import UTC, datetime

import pytest
from rest_framework.renderers import JSONRenderer

from backend.catalog import services, shapes
from backend.catalog.models import File
from backend.catalog.serializers import GranuleSerializer
from tests.factories import CollectionFactory, FileFactory, GranuleFactory, UserFactory

T0 = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)


@pytest.fixture
def granules(db):
    collection = CollectionFactory(short_name="ROWS", version="2")
    plain = GranuleFactory(collection=collection, temporal_start=T0, temporal_end=T0,
                           total_size=12, attributes={"cloud_cover": 10.5, "tile": "h1v2"})
    outlined = GranuleFactory(
        collection=collection, version=2, replaces=plain, archived_at=T0,
        west=170.0, south=-5.0, east=-170.0, north=5.0,
        footprint=json.dumps(shapes.from_box(170.0, -5.0, 190.0 - 360.0, 5.0).geojson()))
    boxless = GranuleFactory(collection=collection, west=None, south=None, east=None,
                             north=None, attributes={})
    FileFactory(granule=outlined, name="b.jpg", role=File.Role.BROWSE)
    FileFactory(granule=outlined, name="a.jpg", role=File.Role.BROWSE)
    FileFactory(granule=outlined, name="data.hdf", size=99)
    FileFactory(granule=plain, name="only.hdf")
    return [plain, outlined, boxless]


def page():
    return services.with_residency(
        services.visible_granules(UserFactory(is_superuser=True))).prefetch_related(
        "files").order_by("pk")


def test_the_rows_are_what_the_fields_write(granules):
    rows = list(page())
    fast = GranuleSerializer(rows, many=True).data
    by_fields = [GranuleSerializer(granule).data for granule in rows]
    assert [list(row) for row in fast] == [list(row) for row in by_fields]
    assert JSONRenderer().render(fast) == JSONRenderer().render(by_fields)


def test_the_rows_values(granules):
    plain, outlined, boxless = GranuleSerializer(list(page()), many=True).data
    assert plain["temporal_start"] == "2024-05-06T07:08:09.123456Z"
    assert plain["collection"] == "ROWS.2"
    assert plain["bbox"] == [-10.0, -10.0, 10.0, 10.0]
    assert plain["attributes"] == {"cloud_cover": 10.5, "tile": "h1v2"}
    assert plain["browse_url"] is None and plain["archived_at"] is None
    assert outlined["replaces"] == granules[0].pk
    assert outlined["archived_at"] == "2024-05-06T07:08:09.123456Z"
    browse = File.objects.get(name="a.jpg")
    assert outlined["browse_url"] == f"/api/v1/files/{browse.pk}/download"
    assert {f["name"] for f in outlined["files"]} == {"a.jpg", "b.jpg", "data.hdf"}
    assert outlined["footprint"]["type"] == "MultiPolygon"     # split at 180°
    assert boxless["bbox"] is None and boxless["footprint"] is None


def _timelines():
    from backend.catalog.services import Timeline

    hours = [{"start": datetime(2024, 5, 6, h, tzinfo=UTC), "count": h * 3} for h in range(24)]
    odd = datetime(2023, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    return [Timeline("hour", sum(b["count"] for b in hours), hours),
            Timeline("day", 0, []),
            Timeline("month", 7, [{"start": odd, "count": 7}])]


@pytest.mark.parametrize("zone", ["UTC", "America/Denver"])
def test_a_timeline_is_what_the_fields_write(granules, zone):
    from django.utils import timezone
    from rest_framework import serializers

    from backend.catalog.serializers import TimelineSerializer

    with timezone.override(zone):
        for timeline in [*_timelines(), services.granule_timeline(page(), "day")]:
            by_fields = serializers.Serializer.to_representation(TimelineSerializer(), timeline)
            fast = TimelineSerializer(timeline).data
            assert JSONRenderer().render(fast) == JSONRenderer().render(by_fields)
    assert TimelineSerializer(_timelines()[2]).data["buckets"] == [
        {"start": "2023-12-31T23:59:59.999999Z", "count": 7}]
