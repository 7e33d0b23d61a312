"""An order submitted while RabbitMQ is down is stored and answered 201; the sweeper readies
it once the broker is back."""
import pytest

from distribution.models import Order
from distribution.services import upkeep

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_order_submitted_while_the_broker_is_down_is_stored_and_swept_later(
        alice, collection, archived, broker_down):
    [granule] = archived(collection, 1)
    with broker_down():
        response = alice.post("/api/v1/orders/", {"granules": [granule.pk]}, format="json")
    assert response.status_code == 201, response.content
    order = Order.objects.get(pk=response.json()["id"])
    assert order.state == "submitted" and order.items.count() == granule.files.count()

    upkeep.sweep()  # beat, once the broker is back
    assert Order.objects.get(pk=order.pk).state == "ready"
