"""Thin Celery wrappers around the storage manager."""
from celery import shared_task

from .services import manager


@shared_task(name="backend.archive.tick")
def tick():
    """Recover stale work and start idle drives on queued work (also run by beat)."""
    manager.tick()


@shared_task(name="backend.archive.run_drive")
def run_drive(drive_id):
    manager.run_drive(drive_id)
