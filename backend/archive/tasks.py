"""Thin Celery wrappers around the storage manager."""
from celery import shared_task

from . import services


@shared_task(name="backend.archive.tick")
def tick():
    """Recover stale work and start idle drives on queued work (also run by beat)."""
    services.tick()


@shared_task(name="backend.archive.run_drive")
def run_drive(drive_id):
    services.run_drive(drive_id)
