"""Subscriptions drawn as a shape deliver only granules whose footprint meets it: the matching
on archive, the preview count and apply-since agree with shapely over every granule in a 0..360
frame (tests/catalog/oracle.py), across the antimeridian."""
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from backend.catalog import services as catalog
from backend.catalog import shapes
from backend.catalog.geo import BBox
from backend.catalog.models import Granule
from distribution.models import Subscription, SubscriptionCollection, SubscriptionDelivery
from distribution.services import deliveries
from tests.catalog import oracle

pytestmark = pytest.mark.django_db

T0 = datetime(2024, 6, 1, tzinfo=UTC)


@pytest.fixture
def footprints(collection):
    """30 archived granules around 180° (random polygons, two boxes): {pk: frame geometry}."""
    rng = oracle.seeded(5)
    frames = {}
    for i in range(30):
        frame = oracle.polygon(rng)
        granule = catalog.register_granule(
            collection, f"G{i}", start=T0, end=T0 + timedelta(minutes=5),
            footprint=shapes.parse_geojson(oracle.geojson(frame, cut=i % 2)))
        frames[granule.pk] = frame
    for i, box in enumerate([(170, -10, -170, 10), (150, 30, 160, 40)]):
        granule = catalog.register_granule(collection, f"B{i}", start=T0,
                                           end=T0 + timedelta(minutes=5), bbox=BBox(*box))
        frames[granule.pk] = oracle.frame_box(*box)
    Granule.objects.filter(pk__in=frames).update(state=Granule.State.ARCHIVED,
                                                 archived_at=timezone.now())
    return frames


def _subscribe(client, name="area", **fields):
    return client.post("/api/v1/subscriptions/", {"name": name, "collections":
                                                  ["MOD021KM.061"], **fields}, format="json")


def test_matching_on_archive_is_the_exact_footprint_test(alice, footprints):
    rng = oracle.seeded(9)
    made = {}
    for i in range(12):
        frame = oracle.polygon(rng, size=(2, 20))
        response = _subscribe(alice, name=f"area {i}", intersects=oracle.geojson(frame, cut=i % 2))
        assert response.status_code == 201, response.json()
        made[response.json()["id"]] = frame
    box_only = _subscribe(alice, bbox=[170, -20, -170, 20]).json()["id"]
    dropped = 0
    for pk, granule_frame in footprints.items():
        granule = Granule.objects.get(pk=pk)
        found = set(deliveries.matching_subscriptions(granule))
        want = {sid for sid, frame in made.items() if frame.intersects(granule_frame)}
        if oracle.frame_box(170, -20, -170, 20).intersects(granule_frame):
            want.add(box_only)
        assert found == want, granule.granule_id
        dropped += sum(1 for sid, frame in made.items()
                       if sid not in found and oracle.frame_box(*_box(frame)).intersects(
                           oracle.frame_box(*granule.bbox)))
    assert dropped > 0, "some granule should meet a subscription's box but not its shape"


def _box(frame):
    west, south, east, north = frame.bounds
    return (west - 360 if west > 180 else west, south, east - 360 if east > 180 else east, north)


def test_preview_and_apply_since_deliver_the_same_exact_set(alice, footprints):
    frame = oracle.polygon(oracle.seeded(11), size=(10, 30))
    shape = oracle.geojson(frame, cut=True)
    want = {pk for pk, f in footprints.items() if f.intersects(frame)}
    assert want, "the test shape should meet some granule"
    preview = alice.post("/api/v1/subscriptions/preview/", {
        "collections": ["MOD021KM.061"], "intersects": shape}, format="json")
    assert preview.status_code == 200, preview.json()
    assert preview.json()["count"] == len(want)
    sub = _subscribe(alice, intersects=shape).json()
    assert sub["intersects"]["type"] in ("Polygon", "MultiPolygon")
    assert sub["bbox"] is not None
    deliveries.apply_since(sub["id"], timezone.now() - timedelta(days=1))
    delivered = set(SubscriptionDelivery.objects.filter(subscription_id=sub["id"])
                    .values_list("granule_id", flat=True))
    assert delivered == want


def test_the_index_rows_carry_the_shape_and_a_box_replaces_it(alice, collection):
    geometry = {"type": "Polygon", "coordinates": [[[170, -5], [190, -5], [190, 5], [170, 5],
                                                    [170, -5]]]}
    sub = _subscribe(alice, intersects=geometry).json()
    assert sub["bbox"] == [170, -5, -170, 5]
    row = SubscriptionCollection.objects.get(subscription_id=sub["id"])
    assert row.geometry == Subscription.objects.get(pk=sub["id"]).geometry and row.west == 170
    patched = alice.patch(f"/api/v1/subscriptions/{sub['id']}/", {"bbox": [0, 0, 1, 1]},
                          format="json").json()
    assert patched["intersects"] is None and patched["bbox"] == [0, 0, 1, 1]
    assert SubscriptionCollection.objects.get(subscription_id=sub["id"]).geometry is None
    reshaped = alice.patch(f"/api/v1/subscriptions/{sub['id']}/", {"intersects": geometry},
                          format="json").json()
    assert reshaped["bbox"] == [170, -5, -170, 5]


@pytest.mark.parametrize("fields, message", [
    ({"intersects": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]}},
     "not closed"),
    ({"intersects": {"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [1, 0], [0, 1],
                                                         [0, 0]]]}}, "Self-intersection"),
    ({"intersects": {"type": "Hexagon"}}, "unknown geometry type"),
    ({"intersects": "POLYGON ((0 0, 1 0, 1 1, 0 0))"}, "GeoJSON geometry object"),
    ({"intersects": {"type": "Point", "coordinates": [0, 0]}, "bbox": [0, 0, 1, 1]}, "not both"),
    ({"intersects": {"type": "LineString", "coordinates": [[i / 1000, 0] for i in range(
        shapes.MAX_VERTICES + 1)]}}, "the limit is"),
])
def test_bad_shapes_are_400_with_the_reason(alice, collection, fields, message):
    response = _subscribe(alice, **fields)
    assert response.status_code == 400, response.json()
    assert message in response.json()["detail"]
