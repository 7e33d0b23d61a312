"""The AMQP channel: events published to a durable topic exchange on the RabbitMQ Granary
runs, routing key `<type>.<collection key>` (`-` without one), so a site's consumers bind
their own queues (`granule.archived.#`, `#.MOD09GA.061`). Message id: the event id.

Publisher confirms: the channel has its own connections (GRANARY_EVENTS_AMQP_URL, else the
broker's), in confirm mode, so a publish returns only once the broker has taken the persistent
message, and a broker that refuses it (a nack) or goes away fails the attempt: the delivery
is tried again, never counted delivered on a message the broker lost."""
import json

from django.conf import settings
from kombu import Connection, Exchange, pools
from kombu.exceptions import OperationalError

from backend.celery import app


def routing_key(event):
    return f"{event.type}.{event.collection_key or '-'}"


def connection():
    """A connection to the events' broker, confirms on (pools key it by its URL)."""
    url = settings.GRANARY_EVENTS_AMQP_URL or app.conf.broker_url
    options = dict(app.conf.broker_transport_options or {})
    if url.startswith(("amqp", "pyamqp")):
        options["confirm_publish"] = True
    return Connection(url, transport_options=options,
                      connect_timeout=settings.GRANARY_EVENTS_TIMEOUT_S)


def send(endpoint, event):
    exchange = Exchange(endpoint.url or settings.GRANARY_EVENTS_EXCHANGE, type="topic",
                        durable=True)
    body = json.dumps(event.document(), separators=(",", ":"))
    with pools.producers[connection()].acquire(block=True, timeout=10) as producer:
        try:
            producer.publish(body, exchange=exchange, routing_key=routing_key(event),
                             declare=[exchange], delivery_mode=2, message_id=str(event.uid),
                             content_type="application/cloudevents+json",
                             content_encoding="utf-8", retry=True,
                             retry_policy={"max_retries": 2, "interval_start": 0.2})
        except OperationalError as exc:  # kombu's retry hides why: the log should say
            cause = exc.__cause__ or exc.__context__ or exc
            raise OperationalError(f"not confirmed by the broker: {type(cause).__name__} "
                                   f"{cause}".strip()) from exc
    return None
