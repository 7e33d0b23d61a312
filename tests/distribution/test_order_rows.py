"""An order's page and the orders list, written in plain Python (distribution.order_rows), say
exactly what the serializers' DRF fields say, for orders in every state with items in every
state: cut to a subset or not, on tape or in the cache, asked of the archive or waiting for
their part; and the order page reads its items in one statement however many there are."""
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.renderers import JSONRenderer
from rest_framework.serializers import ModelSerializer
from rest_framework.test import APIClient

from distribution.models import Order, OrderItem
from distribution.serializers import OrderDetailSerializer, OrderSerializer
from tests.factories import CollectionFactory, FileFactory, GranuleFactory, UserFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)


def by_fields(serializer, order):
    """The order as the serializer's DRF fields write it (its own to_representation aside)."""
    return json.loads(JSONRenderer().render(ModelSerializer.to_representation(serializer, order)))


def rendered(data):
    return json.loads(JSONRenderer().render(data))


def _items(order, files, states):
    for n, (f, (state, extra)) in enumerate(zip(files, states, strict=False)):
        OrderItem.objects.create(order=order, granule=f.granule, file=f, state=state,
                                 **{"eta_s": 12.5 * n if n % 2 else None, **extra})


@pytest.fixture
def orders():
    owner = UserFactory()
    collection = CollectionFactory(short_name="ROWS", version="2.1")
    files = [FileFactory(granule=GranuleFactory(collection=collection), name=f"f{n}.h5",
                         size=1000 + n, checksum_type="MD5", checksum=f"{n:032x}")
             for n in range(7)]
    W, R = OrderItem.State.WAITING, OrderItem.State.READY
    made = []
    for state, item_states in (
        (Order.State.STAGING, [(W, {}), (W, {"recall_request_id": 77}),
                               (W, {"in_cache": True}), (R, {"in_cache": True,
                                                            "ready_at": T0})]),
        (Order.State.READY, [(R, {"in_cache": True, "ready_at": T0,
                                  "expires_at": T0 + timedelta(days=7),
                                  "downloaded_at": T0 + timedelta(hours=1)}),
                             (OrderItem.State.EMPTY, {"output_name": "", "output_size": 0,
                                                      "output_checksum": "",
                                                      "provenance": {"empty": True}}),
                             (R, {"in_cache": True, "output_name": "f2.cut.nc",
                                  "output_size": 512, "output_checksum_type": "SHA256",
                                  "output_checksum": "ab" * 32,
                                  "provenance": {"source": "f2.h5", "bbox": [1, 2, 3, 4]}})]),
        (Order.State.FAILED, [(OrderItem.State.FAILED, {"error": "both copies are bad"}),
                              (OrderItem.State.CANCELLED, {})]),
        (Order.State.SUBMITTED, []),
    ):
        order = Order.objects.create(
            user=owner, state=state, total_bytes=123456789012, error="" if state !=
            Order.State.FAILED else "no file could be recalled",
            subset={"bbox": [-10.5, 0, 10, 20]} if state == Order.State.READY else {},
            ready_at=T0 if state == Order.State.READY else None,
            expires_at=T0 + timedelta(days=3) if state == Order.State.READY else None)
        _items(order, files, item_states)
        made.append(order)
    return owner, made


def test_the_rows_are_what_the_fields_write(orders):
    _, made = orders
    for order in made:
        fresh = Order.objects.select_related("user").get(pk=order.pk)
        assert rendered(OrderDetailSerializer(fresh).data) == by_fields(
            OrderDetailSerializer(), fresh)
        listed = Order.objects.select_related("user").prefetch_related("items").get(pk=order.pk)
        assert rendered(OrderSerializer(listed).data) == by_fields(OrderSerializer(), listed)


def test_the_api_answers_the_rows_and_the_staging_order_says_what_waits_for_its_part(orders):
    owner, made = orders
    client = APIClient()
    client.force_authenticate(owner)
    staging = made[0]
    page = client.get(f"/api/v1/orders/{staging.pk}/").json()
    assert page == by_fields(OrderDetailSerializer(), Order.objects.get(pk=staging.pk))
    assert [i["next_part"] for i in page["items"]] == [True, False, False, False]
    assert page["in_parts"] is True
    assert page["counts"] == {**dict.fromkeys(OrderItem.State.values, 0), "waiting": 3,
                              "ready": 1}
    assert [i["residency"] for i in page["items"]] == ["tape", "tape", "cache", "cache"]
    cut = client.get(f"/api/v1/orders/{made[1].pk}/").json()["items"][2]
    assert (cut["name"], cut["size"], cut["checksum_type"]) == ("f2.cut.nc", 512, "SHA256")
    assert cut["granule"].startswith("ROWS.2.1:")
    listed = client.get("/api/v1/orders/").json()["results"]
    assert sorted(listed, key=lambda o: o["id"]) == [
        by_fields(OrderSerializer(), o) for o in Order.objects.prefetch_related(
            "items").order_by("pk")]


def test_an_order_page_reads_its_items_in_one_statement(orders):
    owner, made = orders
    client = APIClient()
    client.force_authenticate(owner)
    counts = []
    for order in made:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/api/v1/orders/{order.pk}/").status_code == 200
        counts.append(len([q for q in queries.captured_queries
                           if "distribution_orderitem" in q["sql"]]))
    assert counts == [1, 1, 1, 1]


def test_another_users_order_is_a_404_and_reads_no_items(orders):
    _, made = orders
    client = APIClient()
    client.force_authenticate(UserFactory())
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/api/v1/orders/{made[0].pk}/")
    assert response.status_code == 404
    assert not [q for q in queries.captured_queries if "distribution_orderitem" in q["sql"]]


def test_an_order_page_builds_no_object_per_item_nor_per_file(orders, monkeypatch):
    from backend.catalog.models import File

    owner, made = orders
    built = []
    for model in (OrderItem, File):
        original = model.from_db.__func__
        monkeypatch.setattr(model, "from_db", classmethod(
            lambda cls, *args, original=original: built.append(cls) or original(cls, *args)))
    client = APIClient()
    client.force_authenticate(owner)
    for order in made:
        assert client.get(f"/api/v1/orders/{order.pk}/").status_code == 200
    assert built == []


def test_links_read_the_items_once(orders):
    owner, made = orders
    client = APIClient()
    client.force_authenticate(owner)
    for order in made:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/api/v1/orders/{order.pk}/links/").status_code == 200
        assert len([q for q in queries.captured_queries
                    if "distribution_orderitem" in q["sql"]]) == 1
