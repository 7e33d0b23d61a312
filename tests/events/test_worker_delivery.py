"""Events through a real worker to a real webhook receiver and a real AMQP consumer, with the
worker killed -9 while it sends: every event arrives at least once, a copy only of the one
whose send was cut, and the dead endpoint's events end in the dead-letter list."""
import os
import signal
import time
import uuid

import pytest
from django.conf import settings as django_settings
from django.db import transaction

from backend.events import services as events
from backend.events.models import Delivery
from console.services.dead_letter import dead_letters
from tests.events.receiver import Receiver, free_ports
from tests.factories import CollectionFactory, UserFactory
from tests.workers import celery_worker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services]

N = 12
FAST = {"GRANARY_EVENTS_ALLOWED_NETS": "127.0.0.1/32", "GRANARY_EVENTS_RETRY_BASE_S": "0.05",
        "GRANARY_EVENTS_MAX_TRIES": "3", "GRANARY_EVENTS_SLICE_S": "1",
        "GRANARY_EVENTS_TIMEOUT_S": "2"}


def _amqp():
    return django_settings.CELERY_BROKER_URL.startswith(("amqp", "pyamqp"))


@pytest.fixture
def consumer():
    """A queue of our own bound to a fresh topic exchange, as a site's consumer binds one."""
    if not _amqp():
        yield None
        return
    from kombu import Connection, Exchange, Queue

    name = f"granary.cloudevents.test-{uuid.uuid4().hex[:8]}"
    conn = Connection(django_settings.CELERY_BROKER_URL)
    queue = Queue(f"{name}.q", Exchange(name, type="topic", durable=True),
                  routing_key="granule.archived.#", auto_delete=True)
    queue(conn.channel()).declare()
    yield conn, queue, name
    try:
        queue(conn.channel()).delete()
    finally:
        conn.release()


def _drain_amqp(conn, queue):
    got = []
    bound = queue(conn.channel())
    while (message := bound.get(no_ack=True)) is not None:
        got.append((message.properties.get("message_id"), message.delivery_info["routing_key"]))
    return got


def test_every_event_arrives_through_a_kill_9_and_the_dead_endpoint_is_dead_lettered(
        settings, consumer):
    settings.GRANARY_EVENTS_ALLOWED_NETS = ["127.0.0.1/32"]
    good_port, dead_port = free_ports(2)
    operator = UserFactory(role="operator")
    collection = CollectionFactory()
    good = events.create(operator, "webhook", f"http://127.0.0.1:{good_port}/hook", "good",
                         [{"type": "granule.*"}])
    dead = events.create(operator, "webhook", f"http://127.0.0.1:{dead_port}/hook", "dead",
                         [{"type": "granule.archived"}])
    if consumer:
        events.create(operator, "amqp", consumer[2], "site bus", [{"type": "*"}])
    with transaction.atomic():
        emitted = events.emit_many([events.event(
            "granule.archived", f"granules/{i}", {"granule": i}, collection=collection)
            for i in range(N)])
    uids = {str(e.uid) for e in emitted}

    with Receiver(good_port, good.secret, hold=30) as receiver:
        with celery_worker(["fanout", "events"], extra_env=FAST) as worker:
            # the worker purged its queue on start: the sweep (beat's, here) finds the work
            wait_for(lambda: events.sweep() and receiver.held.wait(1), worker, timeout=60,
                     what="the first send")
            os.kill(worker.pid, signal.SIGKILL)  # killed while its first send is held
            worker.wait()
        receiver.hold = 0
        with celery_worker(["fanout", "events"], extra_env=FAST) as worker:
            def all_in():
                events.wake_due()  # what beat's sweep does every few seconds
                time.sleep(0.5)
                return set(receiver.ids) == uids and not Delivery.objects.filter(
                    state=Delivery.State.PENDING).exists()
            wait_for(all_in, worker, timeout=90, what="the events worker")

    assert not receiver.bad, receiver.bad
    assert set(receiver.ids) == uids
    copies = {uid: n for uid, n in receiver.ids.items() if n > 1}
    assert set(copies) <= {str(emitted[0].uid)}  # only the send the kill cut short came twice
    assert Delivery.objects.filter(endpoint=good, state="delivered").count() == N
    assert Delivery.objects.filter(endpoint=dead, state="dead").count() == N
    total, rows = dead_letters(kind="event", limit=100)
    assert total == N and all(str(dead_port) in row["label"] for row in rows)
    if consumer:
        got = _drain_amqp(consumer[0], consumer[1])
        assert {m for m, _ in got} == uids
        assert {k for _, k in got} == {f"granule.archived.{collection.key}"}
