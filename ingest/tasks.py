"""Thin Celery wrappers around the ingest services (queue `ingest`); each is idempotent on ids."""
from celery import shared_task

from .services import periodic, pipeline, polling


@shared_task(name="ingest.process_request")
def process_request(request_id):
    """Queue the chunks of a request whose granules wait for a worker."""
    return pipeline.kick(request_id)


@shared_task(name="ingest.process_chunk")
def process_chunk(request_id, start, stop):
    return pipeline.process_chunk(request_id, start, stop)


@shared_task(name="ingest.sweep")
def sweep():
    """Beat: re-kick dead workers' granules, admit waiting ones, finish what is finished."""
    return periodic.sweep()


@shared_task(name="ingest.poll_staging")
def poll_staging():
    """Beat: PDRs and drop directories in the providers' staging areas."""
    return polling.poll_staging()


@shared_task(name="ingest.clean_staging")
def clean_staging():
    return periodic.clean_staging()
