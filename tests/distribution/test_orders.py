"""Carts and orders: rights, limits, other users' orders, the data pool, failed items."""
import pytest

from backend.archive.models import ArchivePolicy, FileCopy
from backend.catalog.models import Collection
from distribution.models import Order
from distribution.services import orders, push, upkeep
from distribution.targets import PushError

from .conftest import evict

pytestmark = pytest.mark.django_db


def _order(client, granules, **extra):
    return client.post("/api/v1/orders/", {"granules": [g.pk for g in granules], **extra},
                       format="json")


def test_cart_becomes_an_order_and_empties(alice, collection, archived, inline):
    granules = archived(collection, 3)
    response = alice.post("/api/v1/cart/", {"granules": [g.pk for g in granules]},
                          format="json")
    assert response.status_code == 200 and response.json()["count"] == 3
    assert alice.delete(f"/api/v1/cart/{granules[0].pk}/").json()["count"] == 2
    response = inline(alice.post, "/api/v1/orders/", {}, format="json")
    assert response.status_code == 201
    assert {i["granule_pk"] for i in response.json()["items"]} == {g.pk for g in granules[1:]}
    assert alice.get("/api/v1/cart/").json()["count"] == 0


def test_data_pool_granules_are_ready_at_once(alice, collection, archived, inline):
    ArchivePolicy.objects.filter(collection=collection).update(cache_residency_days=30)
    granules = archived(collection, 2)
    response = inline(_order, alice, granules)
    order = alice.get(f"/api/v1/orders/{response.json()['id']}/").json()
    assert order["state"] == "ready"
    assert {i["residency"] for i in order["items"]} == {"cache"}


def test_failed_item_does_not_hide_the_others(alice, collection, archived, inline):
    good, bad = archived(collection, 2)
    evict([bad])
    FileCopy.objects.filter(file__granule=bad).update(state="released")
    order = inline(_order, alice, [good, bad]).json()
    order = alice.get(f"/api/v1/orders/{order['id']}/").json()
    assert order["state"] == "partially_ready"
    assert order["counts"]["failed"] == 2 and order["counts"]["ready"] == 2
    links = alice.get(f"/api/v1/orders/{order['id']}/links/").json()
    assert {row["granule"] for row in links["links"]} == {str(good)}
    assert all("no readable copy" in row["error"] for row in links["failed"])


def test_restricted_collection_needs_approval(alice, collection, archived):
    [granule] = archived(collection)
    Collection.objects.filter(pk=collection.pk).update(access="restricted")
    for response in (_order(alice, [granule]),
                     alice.post("/api/v1/cart/", {"granules": [granule.pk]}, format="json")):
        assert response.status_code == 403
        assert "restricted" in response.json()["detail"]
    collection.approved_users.add(alice.user)
    assert _order(alice, [granule]).status_code == 201


def test_unknown_and_malformed_granules_are_400(alice, db):
    response = alice.post("/api/v1/orders/", {"granules": [987654]}, format="json")
    assert response.status_code == 400 and "no granule 987654" in response.json()["detail"]
    response = alice.post("/api/v1/orders/", {"granules": "x"}, format="json")
    assert response.status_code == 400
    response = alice.post("/api/v1/orders/", {}, format="json")
    assert response.status_code == 400 and "cart is empty" in response.json()["detail"]


def test_an_order_of_many_unknown_ids_names_a_few_and_counts_them(alice, db):
    """100,000 unknown ids answered a 1.3 MB 400 listing every one (issue 34, item 15)."""
    ids = list(range(10**6, 10**6 + 100_000))
    response = alice.post("/api/v1/orders/", {"granules": ids}, format="json")
    assert response.status_code == 400 and len(response.content) < 2000
    detail = response.json()["detail"]
    assert detail.startswith("granules: There is no granule 1000000, 1000001, ")
    assert "(and 99,980 more, 100,000 in all)" in detail


def test_another_users_order_is_404_but_operators_see_and_cancel(alice, bob, operator,
                                                                   collection, archived):
    [granule] = archived(collection)
    order = _order(alice, [granule]).json()
    for path in ("", "links/", "script/"):
        assert bob.get(f"/api/v1/orders/{order['id']}/{path}").status_code == 404
    assert bob.post(f"/api/v1/orders/{order['id']}/cancel/").status_code == 404
    assert bob.get("/api/v1/orders/").json()["results"] == []
    assert operator.get(f"/api/v1/orders/{order['id']}/").status_code == 200
    response = operator.post(f"/api/v1/orders/{order['id']}/cancel/")
    assert response.status_code == 200 and response.json()["state"] == "cancelled"
    assert operator.post(f"/api/v1/orders/{order['id']}/cancel/").status_code == 409


def test_limits_name_the_limit(alice, collection, archived, settings):
    granules = archived(collection, 3)
    settings.GRANARY_ORDER_MAX_GRANULES = 2
    response = _order(alice, granules)
    assert response.status_code == 400
    assert "GRANARY_ORDER_MAX_GRANULES" in response.json()["detail"]
    assert "limit_granules" in response.json()["errors"]
    response = alice.post("/api/v1/cart/", {"granules": [g.pk for g in granules]},
                          format="json")
    assert response.status_code == 400 and "limit is 2 granules" in response.json()["detail"]

    settings.GRANARY_ORDER_MAX_GRANULES = 100
    settings.GRANARY_ORDER_MAX_GB = 5000 / 1e9
    response = _order(alice, granules[:2])
    assert response.status_code == 400 and "GRANARY_ORDER_MAX_GB" in response.json()["detail"]

    settings.GRANARY_ORDER_MAX_GB = 500
    settings.GRANARY_ORDER_MAX_OPEN = 1
    assert _order(alice, granules[:1]).status_code == 201
    response = _order(alice, granules[1:2])
    assert response.status_code == 400
    assert "1 open orders" in response.json()["detail"]
    assert "GRANARY_ORDER_MAX_OPEN" in response.json()["detail"]


def test_push_order_copies_with_manifest(alice, collection, archived, inline, data_root):
    granules = archived(collection, 2)
    dest = alice.post("/api/v1/destinations/", {"name": "lab", "path": "lab"},
                      format="json")
    assert dest.status_code == 201, dest.json()
    response = inline(_order, alice, granules, delivery="push", destination=dest.json()["id"])
    order = Order.objects.get(pk=response.json()["id"])
    assert order.state == "completed"
    folder = data_root / "outbox" / alice.user.username / "lab" / f"order-{order.pk}"
    assert (folder / "manifest.json").exists()
    lines = (folder / "CHECKSUMS").read_text().splitlines()
    assert len(lines) == 4
    for g in granules:
        for f in g.files.all():
            assert (folder / g.granule_id / f.name).stat().st_size == f.size
            assert f"MD5 {f.checksum}  {g.granule_id}/{f.name}" in lines


def test_push_needs_a_destination_inside_the_outbox(alice, collection, archived):
    [granule] = archived(collection)
    response = _order(alice, [granule], delivery="push")
    assert response.status_code == 400 and "destination" in response.json()["detail"]
    response = alice.post("/api/v1/destinations/", {"name": "x", "path": "../etc"},
                          format="json")
    assert response.status_code == 400 and ".." in response.json()["detail"]


def test_push_failure_is_retried(alice, collection, archived, data_root):
    granules = archived(collection, 1)
    dest = alice.post("/api/v1/destinations/", {"name": "lab"}, format="json").json()
    blocker = data_root / "outbox" / alice.user.username / "lab"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("a file where the destination folder should be")
    order_id = alice.post("/api/v1/orders/", {"granules": [granules[0].pk], "delivery": "push",
                                              "destination": dest["id"]},
                          format="json").json()["id"]
    orders.refresh_order(order_id)
    with pytest.raises(PushError):
        push.push_order(order_id)
    order = Order.objects.get(pk=order_id)
    assert order.push_attempts == 1 and order.error.startswith("push: ")
    blocker.unlink()
    upkeep.sweep()
    order = Order.objects.get(pk=order_id)
    assert order.state == "completed" and order.push_attempts == 0 and order.error == ""
    assert (blocker / f"order-{order_id}" / "manifest.json").exists()


def test_a_destination_in_use_is_not_deleted(alice, collection, archived):
    [granule] = archived(collection)
    used = alice.post("/api/v1/destinations/", {"name": "lab"}, format="json").json()
    spare = alice.post("/api/v1/destinations/", {"name": "spare"}, format="json").json()
    assert _order(alice, [granule], delivery="push", destination=used["id"]).status_code == 201
    response = alice.delete(f"/api/v1/destinations/{used['id']}/")
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == "destination: Orders or subscriptions still use this destination."
    assert list(body["errors"]) == ["destination"]
    assert alice.delete(f"/api/v1/destinations/{spare['id']}/").status_code == 204
    assert [d["name"] for d in alice.get("/api/v1/destinations/").json()] == ["lab"]


@pytest.mark.parametrize("n", [1, 4])
def test_the_order_page_reads_its_items_in_one_statement_however_many(
        alice, collection, archived, inline, n):
    """The order page refreshes every few seconds while it waits: the order, then its items
    with their files, granules and collections joined; not a statement per relation."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    granules = archived(collection, n)
    created = inline(_order, alice, granules).json()
    with CaptureQueriesContext(connection) as queries:
        order = alice.get(f"/api/v1/orders/{created['id']}/").json()
    assert {i["granule_pk"] for i in order["items"]} == {g.pk for g in granules}
    assert {i["granule"] for i in order["items"]} == {
        f"{collection.short_name}.{collection.version}:{g.granule_id}" for g in granules}
    reads = [q["sql"] for q in queries.captured_queries]
    assert len(reads) == 2      # APIClient's force-authenticated user: no session read
    assert 'FROM "distribution_order"' in reads[0]
    assert all(f'"{table}"' in reads[1] for table in (
        "distribution_orderitem", "catalog_file", "catalog_granule", "catalog_collection"))
