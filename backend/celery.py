"""The Celery app: one queue per concern, late acks, JSON only, enqueue on commit."""
import os

from celery import Celery
from celery.signals import celeryd_init, worker_process_init, worker_ready
from kombu import Exchange, Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")

app = Celery("granary", task_cls="celery.contrib.django.task:DjangoTask")
app.config_from_object("django.conf:settings", namespace="CELERY")

QUEUES = ("ingest", "archive", "distribution", "events", "fanout", "transform", "default")


def declare_queues(names, prefix="granary."):
    """One direct exchange and routing key per queue, so a task lands in exactly one queue
    (queues left to share Celery's default exchange and key would each get a copy)."""
    return [Queue(name, Exchange(f"{prefix}{name}", type="direct"), routing_key=name)
            for name in names]


app.conf.update(
    task_queues=declare_queues(QUEUES),
    task_default_queue="default",
    task_default_exchange="granary.default",
    task_default_routing_key="default",
    task_routes={
        "ingest.*": {"queue": "ingest"},
        "backend.archive.*": {"queue": "archive"},
        "distribution.*": {"queue": "distribution"},
        # an event's fan-out never waits behind the sends on `events` (one runs at a time)
        "backend.events.fan_out": {"queue": "fanout"},
        "backend.events.*": {"queue": "events"},
        # cutting files to an order's subset: its own queue, so it never starves recalls,
        # downloads or order refreshes
        "transform.*": {"queue": "transform"},
    },
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    task_ignore_result=True,
    broker_connection_retry_on_startup=True,
    timezone="UTC",
    enable_utc=True,
)
app.autodiscover_tasks()


@celeryd_init.connect
def _yield_to_the_web(**_):
    """Workers run at nice GRANARY_WORKER_NICE (10 by default; 0 keeps the priority they were
    started with): when the host's CPUs are full, a search or a page waits for a worker's
    time slice far less (deploy/README.md, "The web comes first"). Set in the main process
    before the pool forks, so every child inherits it."""
    from backend.host import lower_priority

    lower_priority(int(os.environ.get("GRANARY_WORKER_NICE", "10")))


@worker_process_init.connect
@worker_ready.connect
def _settle(**_):
    """Once a pool process (prefork's children) or the worker itself (the solo and thread
    pools run tasks in it) has started, what it loaded is set aside from the garbage
    collector's full collections (backend.host.settle_started)."""
    from backend.host import settle_started

    settle_started()
