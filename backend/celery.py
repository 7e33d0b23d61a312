"""The Celery app: one queue per concern, late acks, JSON only, enqueue on commit."""
import os

from celery import Celery
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")

app = Celery("granary", task_cls="celery.contrib.django.task:DjangoTask")
app.config_from_object("django.conf:settings", namespace="CELERY")

QUEUES = ("ingest", "archive", "distribution", "default")

app.conf.update(
    task_queues=[Queue(name) for name in QUEUES],
    task_default_queue="default",
    task_routes={
        "ingest.*": {"queue": "ingest"},
        "backend.archive.*": {"queue": "archive"},
        "distribution.*": {"queue": "distribution"},
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
