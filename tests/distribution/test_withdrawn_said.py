"""Issue #34 item 7: a withdrawn granule is said to be withdrawn, and when, where a user meets
it: its page (a 410 with the reason and the time instead of a bare 404) and the cart (it
stays listed as withdrawn instead of vanishing, and is left out of the order)."""
from datetime import datetime

import pytest

from backend.accounts.models import AuditEvent
from backend.archive.services import retirement

from .conftest import client_for

pytestmark = pytest.mark.django_db


def _withdrawn_at(granule):
    return AuditEvent.objects.get(target_type="granule", target_id=str(granule.pk),
                                  action="withdraw").at


def test_page_of_a_withdrawn_granule_says_so_and_when(alice, operator, collection, archived):
    granule, = archived(collection, 1)
    retirement.withdraw(granule, by=operator.user, reason="bad calibration")
    answer = alice.get(f"/api/v1/granules/{granule.pk}/")
    assert answer.status_code == 410
    got = answer.json()
    assert got["state"] == "withdrawn"
    assert datetime.fromisoformat(got["retired_at"]) == _withdrawn_at(granule)
    assert "bad calibration" in got["detail"]
    assert f"{_withdrawn_at(granule):%Y-%m-%d %H:%M} UTC" in got["detail"]

    # Someone who may not see the collection learns nothing: a plain 404.
    collection.access = "restricted"
    collection.save()
    hidden = client_for().get(f"/api/v1/granules/{granule.pk}/")
    assert hidden.status_code == 404 and "retired_at" not in hidden.json()
    assert "No Granule matches" not in hidden.json()["detail"]
    missing = alice.get("/api/v1/granules/987654/")
    assert missing.status_code == 404 and missing.json() == {
        "detail": "There is no granule 987654."}


def test_cart_lists_a_withdrawn_granule_with_its_time_and_orders_the_rest(
        alice, operator, collection, archived, inline):
    kept, gone = archived(collection, 2)
    alice.post("/api/v1/cart/", {"granules": [kept.pk, gone.pk]}, format="json")
    retirement.withdraw(gone, by=operator.user, reason="wrong orbit")

    cart = alice.get("/api/v1/cart/").json()
    assert [g["granule"] for g in cart["granules"]] == [kept.pk]
    assert cart["count"] == 1 and cart["bytes"] == kept.total_size
    [item] = cart["withdrawn"]
    assert (item["granule"], item["granule_id"], item["state"]) == (
        gone.pk, gone.granule_id, "withdrawn")
    assert datetime.fromisoformat(item["at"]) == _withdrawn_at(gone)
    assert "wrong orbit" in item["reason"]

    order = inline(alice.post, "/api/v1/orders/", {}, format="json")
    assert order.status_code == 201
    assert {i["granule"] for i in order.json()["items"]} == {str(kept)}
    left = alice.get("/api/v1/cart/").json()
    assert left["count"] == 0 and [w["granule"] for w in left["withdrawn"]] == [gone.pk]
    refused = alice.post("/api/v1/orders/", {}, format="json")
    assert refused.status_code == 400 and "only withdrawn" in refused.json()["detail"]
    # removed by the user, it is gone for good; restored, it would be back in the cart
    emptied = alice.delete(f"/api/v1/cart/{gone.pk}/").json()
    assert emptied["withdrawn"] == []


def test_a_restored_granule_is_back_in_the_cart(alice, operator, collection, archived):
    granule, = archived(collection, 1)
    alice.post("/api/v1/cart/", {"granules": [granule.pk]}, format="json")
    retirement.withdraw(granule, by=operator.user, reason="checking")
    assert alice.get("/api/v1/cart/").json()["count"] == 0
    retirement.restore(granule, by=operator.user, reason="fine after all")
    cart = alice.get("/api/v1/cart/").json()
    assert cart["count"] == 1 and cart["withdrawn"] == []


def test_the_cart_reads_its_items_once_with_the_withdrawn_among_them(
        alice, operator, collection, archived):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    first, gone, last = archived(collection, 3)
    for granule in (first, gone, last):       # one at a time: the cart keeps this order
        alice.post("/api/v1/cart/", {"granules": [granule.pk]}, format="json")
    retirement.withdraw(gone, by=operator.user, reason="wrong orbit")
    for ask in (lambda: alice.get("/api/v1/cart/"),
                lambda: alice.post("/api/v1/cart/", {"granules": [first.pk]}, format="json")):
        with CaptureQueriesContext(connection) as queries:
            cart = ask().json()
        assert [g["granule"] for g in cart["granules"]] == [first.pk, last.pk]
        assert [w["granule"] for w in cart["withdrawn"]] == [gone.pk]
        reads = [q["sql"] for q in queries.captured_queries
                 if q["sql"].startswith("SELECT") and 'FROM "distribution_cartitem"' in q["sql"]
                 and 'INNER JOIN "catalog_granule"' in q["sql"]]
        assert len(reads) == 1, reads
    removed = alice.delete(f"/api/v1/cart/{gone.pk}/")
    assert removed.status_code == 200 and removed.json()["withdrawn"] == []
    assert [g["granule"] for g in removed.json()["granules"]] == [first.pk, last.pk]
