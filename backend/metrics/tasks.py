"""Thin Celery wrappers for metrics."""
import socket

from celery import shared_task
from django.utils.dateparse import parse_datetime

from backend.celery import QUEUES

from . import services


@shared_task(name="backend.metrics.heartbeat")
def heartbeat(queue, sent_at):
    services.record_heartbeat(queue, socket.gethostname(), parse_datetime(sent_at))


@shared_task(name="backend.metrics.send_heartbeats")
def send_heartbeats():
    """Beat: one heartbeat per queue, so a queue nobody serves shows up stale."""
    from django.utils import timezone

    now = timezone.now().isoformat()
    for queue in QUEUES:
        heartbeat.apply_async(args=[queue, now], queue=queue)
