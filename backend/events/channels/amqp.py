"""The AMQP channel: events published to a durable topic exchange on the RabbitMQ Granary
runs, routing key `<type>.<collection key>` (`-` without one), so a site's consumers bind
their own queues (`granule.archived.#`, `#.MOD09GA.061`). Message id: the event id."""
import json

from django.conf import settings
from kombu import Exchange

from backend.celery import app


def routing_key(event):
    return f"{event.type}.{event.collection_key or '-'}"


def send(endpoint, event):
    exchange = Exchange(endpoint.url or settings.GRANARY_EVENTS_EXCHANGE, type="topic",
                        durable=True)
    body = json.dumps(event.document(), separators=(",", ":"))
    with app.producer_or_acquire() as producer:
        producer.publish(body, exchange=exchange, routing_key=routing_key(event),
                         declare=[exchange], delivery_mode=2, message_id=str(event.uid),
                         content_type="application/cloudevents+json",
                         content_encoding="utf-8", retry=True,
                         retry_policy={"max_retries": 2, "interval_start": 0.2})
    return None
