"""Publisher confirms on the AMQP channel: a message the broker refuses is not counted
delivered. RabbitMQ's own refusal is used: a queue bound to the exchange holds one message and
rejects more (`x-overflow: reject-publish`), which the broker tells a confirming publisher
with a nack; without confirms the publish would return as if it had landed."""
import uuid

import pytest
from django.conf import settings as django_settings
from django.db import transaction
from django.utils import timezone
from kombu import Connection, Exchange, Queue

from backend.events import services as events
from backend.events.models import Delivery, Endpoint
from tests.factories import CollectionFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services]


@pytest.fixture
def full_queue():
    if not django_settings.CELERY_BROKER_URL.startswith(("amqp", "pyamqp")):
        pytest.skip("needs RabbitMQ (CELERY_BROKER_URL=amqp://...)")
    name = f"granary.cloudevents.confirm-{uuid.uuid4().hex[:8]}"
    conn = Connection(django_settings.CELERY_BROKER_URL)
    queue = Queue(f"{name}.q", Exchange(name, type="topic", durable=True), routing_key="#",
                  auto_delete=True,
                  queue_arguments={"x-max-length": 1, "x-overflow": "reject-publish"})
    queue(conn.channel()).declare()
    yield conn, queue, name
    try:
        queue(conn.channel()).delete()
    finally:
        conn.release()


def test_a_message_the_broker_refuses_is_tried_again_not_counted_delivered(full_queue):
    conn, queue, exchange = full_queue
    operator = UserFactory(role="operator")
    bus = events.create(operator, "amqp", exchange, "site bus", [{"type": "granule.*"}])
    collection = CollectionFactory()
    with transaction.atomic():
        first, second = events.emit_many([events.event(
            "granule.archived", f"granules/{i}", {"granule": i}, collection=collection)
            for i in (1, 2)])
    events.drain()
    rows = {d.event_id: d for d in Delivery.objects.filter(endpoint=bus)}
    assert rows[first.pk].state == "delivered"
    assert rows[second.pk].state == "pending" and rows[second.pk].attempts == 1
    assert "not confirmed" in rows[second.pk].last_error and "Nack" in rows[second.pk].last_error
    # the site's consumer takes the first; the second, tried again, now lands
    message = queue(conn.channel()).get(no_ack=True)
    assert message.properties["message_id"] == str(first.uid)
    Delivery.objects.filter(pk=rows[second.pk].pk).update(due_at=timezone.now())
    assert Endpoint.objects.get(pk=bus.pk).retry_at is not None   # its circuit opened
    Endpoint.objects.filter(pk=bus.pk).update(retry_at=None)      # and its backoff is over
    events.drain()
    assert Delivery.objects.get(pk=rows[second.pk].pk).state == "delivered"
    message = queue(conn.channel()).get(no_ack=True)
    assert message.properties["message_id"] == str(second.uid)
