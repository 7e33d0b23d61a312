"""A real worker on the configured broker (RabbitMQ in CI) writes to the database."""
import uuid

import pytest
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from backend.metrics.models import QueueHeartbeat
from backend.metrics.tasks import heartbeat
from tests.workers import celery_worker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services]


def test_task_round_trip_writes_to_database_and_only_after_commit():
    queue = f"test-{uuid.uuid4().hex[:8]}"
    sent_at = timezone.now().isoformat()
    with celery_worker([queue]) as worker:
        try:
            with transaction.atomic():
                heartbeat.apply_async_on_commit(args=["rolled-back", sent_at], queue=queue)
                raise RuntimeError("roll back")
        except RuntimeError:
            pass
        with transaction.atomic():
            heartbeat.apply_async_on_commit(args=["committed", sent_at], queue=queue)
        wait_for(lambda: QueueHeartbeat.objects.filter(queue="committed").exists(), worker)
    log = worker.stdout.read()
    scheme = settings.CELERY_BROKER_URL.split("://")[0].replace("pyamqp", "amqp")
    assert f"Connected to {scheme}://" in log, log[-2000:]
    beat = QueueHeartbeat.objects.get(queue="committed")
    assert beat.seen_at >= beat.sent_at
    assert not QueueHeartbeat.objects.filter(queue="rolled-back").exists()



def test_a_task_for_one_queue_lands_in_that_queue_only():
    """Each concern's queue can be served by its own hosts: no copies in the other queues."""
    from backend.celery import app, declare_queues

    names = [f"t{uuid.uuid4().hex[:6]}-{n}" for n in ("ingest", "archive", "distribution")]
    queues = declare_queues(names, prefix=f"test.{uuid.uuid4().hex[:6]}.")
    with app.connection_for_write() as conn:
        channel = conn.default_channel
        bound = [q.bind(channel) for q in queues]
        for q in bound:
            q.declare()
        try:
            with app.producer_or_acquire() as producer:
                producer.publish({"hello": "archive"}, exchange=queues[1].exchange,
                                 routing_key=queues[1].routing_key, declare=queues,
                                 serializer="json")
            counts = {}
            for q in bound:
                message = q.get(no_ack=True)
                counts[q.name] = 0 if message is None else 1 + (q.get(no_ack=True) is not None)
            assert counts == {names[0]: 0, names[1]: 1, names[2]: 0}
        finally:
            for q in bound:
                q.delete()
