"""The events bench's AMQP consumer: a queue of its own bound to a fresh topic exchange (as a
site's consumer binds one), an operator's AMQP endpoint publishing there (with publisher
confirms), and a thread that counts every event per granule in the order it arrived."""
import json
import threading
import uuid
from collections import Counter, defaultdict

from django.conf import settings

from backend.events import services as events

# what each granule is told, in this order, on the bus
SEQUENCE = ("granule.archived", "granule.withdrawn")


class Consumer:
    def __init__(self, url):
        from kombu import Connection, Exchange, Queue

        self.exchange = f"granary.cloudevents.bench-{uuid.uuid4().hex[:8]}"
        self.conn = Connection(url)
        self.queue = Queue(f"{self.exchange}.q", Exchange(self.exchange, type="topic",
                                                          durable=True),
                           routing_key="granule.#", auto_delete=True)
        self.types = defaultdict(list)   # granule -> event types in arrival order
        self.ids = Counter()
        self.lock, self.stop = threading.Lock(), threading.Event()
        self.queue(self.conn.channel()).declare()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        with self.conn.clone() as conn, conn.Consumer(self.queue, callbacks=[self.on_message],
                                                      accept=["application/cloudevents+json",
                                                              "json"]):
            while not self.stop.is_set():
                try:
                    conn.drain_events(timeout=0.5)
                except TimeoutError:
                    continue

    def on_message(self, _body, message):
        doc = json.loads(message.body)
        with self.lock:
            self.ids[doc["id"]] += 1
            self.types[doc["data"]["granule"]].append(doc["type"].removeprefix("org.granary."))
        message.ack()

    def got(self):
        with self.lock:
            return sum(len(v) for v in self.types.values())

    def close(self):
        self.stop.set()
        self.thread.join(5)
        try:
            self.queue(self.conn.channel()).delete()
        finally:
            self.conn.release()

    def tally(self, granules):
        """(received, missing, out of order, duplicates) over `granules` granules."""
        with self.lock:
            received = sum(len(v) for v in self.types.values())
            out_of_order = sum(1 for g in range(granules)
                               if _deduped(self.types.get(g, [])) != list(SEQUENCE))
            duplicates = sum(n - 1 for n in self.ids.values())
        missing = granules * len(SEQUENCE) - len(self.ids)
        return received, missing, out_of_order, duplicates


def _deduped(seq):
    out = []
    for kind in seq:
        if kind not in out:
            out.append(kind)
    return out


def start(operator_group):
    """The consumer and its endpoint, or None when the broker is not RabbitMQ."""
    from django.contrib.auth import get_user_model

    url = settings.CELERY_BROKER_URL
    if not url.startswith(("amqp", "pyamqp")):
        return None
    settings.GRANARY_EVENTS_AMQP_URL = url
    consumer = Consumer(url)
    owner = get_user_model().objects.create(username="bench-amqp")
    owner.groups.add(operator_group)
    events.create(owner, "amqp", consumer.exchange, "bus", [{"type": "granule.*"}])
    return consumer
