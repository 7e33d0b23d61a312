"""Thin Celery wrappers around the console's services (queue `default`); idempotent on ids."""
from celery import shared_task

from .services.bulk import runner


@shared_task(name="console.run_bulk_job")
def run_bulk_job(job_id):
    """Act on a bulk job's pending items and follow up its waiting ones."""
    return runner.run(job_id)


@shared_task(name="console.bulk_sweep")
def bulk_sweep():
    """Beat: run unfinished bulk jobs again (lost messages, dead workers, finished archive work)."""
    return runner.sweep()
