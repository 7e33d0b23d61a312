"""One vocabulary for order and file states: the list, an order's page and its links say the
same words for the same state (the table below is the vocabulary pages use)."""
from datetime import timedelta

import pytest
from django.utils import timezone

from distribution.models import Order, OrderItem
from tests.factories import FileFactory, GranuleFactory

pytestmark = pytest.mark.django_db

ORDER_WORDS = {
    "submitted": "Submitted", "staging": "Waiting for tape", "ready": "Ready",
    "partially_ready": "Ready in part", "completed": "Delivered", "failed": "Failed",
    "cancelled": "Cancelled", "expired": "Expired",
}
ITEM_WORDS = {"waiting": "Waiting", "ready": "Ready", "failed": "Failed", "expired": "Expired",
              "cancelled": "Cancelled", "empty": "Nothing inside the subset"}


def test_the_vocabulary_covers_every_state():
    assert set(ORDER_WORDS) == set(Order.State.values)
    assert set(ITEM_WORDS) == set(OrderItem.State.values)


@pytest.mark.parametrize("state", sorted(ORDER_WORDS))
def test_list_page_and_links_say_the_same(user_api, state):
    granule = GranuleFactory()
    order = Order.objects.create(user=user_api.user, state=state)
    item_states = sorted(ITEM_WORDS)
    for item_state in item_states:
        # a ready file has an expiry, as refresh_order gives it
        OrderItem.objects.create(order=order, granule=granule, state=item_state,
                                 file=FileFactory(granule=granule),
                                 expires_at=timezone.now() + timedelta(days=1))
    listed = next(o for o in user_api.get("/api/v1/orders/").json()["results"]
                  if o["id"] == order.pk)
    page = user_api.get(f"/api/v1/orders/{order.pk}/").json()
    links = user_api.get(f"/api/v1/orders/{order.pk}/links/").json()
    for body in (listed, page, links):
        assert (body["state"], body["state_label"]) == (state, ORDER_WORDS[state])
    assert {(i["state"], i["state_label"]) for i in page["items"]} == {
        (s, ITEM_WORDS[s]) for s in item_states}


def test_cancelling_a_final_order_names_its_state_in_words(user_api):
    order = Order.objects.create(user=user_api.user, state=Order.State.COMPLETED)
    answer = user_api.post(f"/api/v1/orders/{order.pk}/cancel/")
    assert answer.status_code == 409
    assert answer.json()["detail"] == f"Order {order.pk} is already delivered."
