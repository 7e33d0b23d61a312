"""Thin tasks over the events services: each is an idempotent function of ids."""
from celery import shared_task

from . import services


@shared_task(name="backend.events.fan_out")
def fan_out(event_ids):
    return services.fan_out(event_ids)


@shared_task(name="backend.events.deliver")
def deliver(endpoint_ids):
    return services.deliver(endpoint_ids)


@shared_task(name="backend.events.sweep")
def sweep():
    return services.sweep()
