"""Thin Celery wrappers around the distribution services (queue `distribution`), idempotent
on ids: a lost message is covered by the sweep, a repeated one does nothing new."""
from datetime import datetime

from celery import shared_task

from .services import deliveries, orders, push, staging_progress, transforms, upkeep
from .targets import PushError


@shared_task(name="distribution.refresh_order")
def refresh_order(order_id):
    orders.refresh_order(order_id)


@shared_task(name="distribution.push_order", max_retries=5, autoretry_for=(PushError,),
             retry_backoff=30, retry_jitter=True)
def push_order(order_id):
    return push.push_order(order_id)


@shared_task(name="distribution.match_granule")
def match_granule(granule_id):
    return deliveries.match_granule(granule_id)


@shared_task(name="distribution.match_granules")
def match_granules(granule_ids):
    return deliveries.match_granules(granule_ids)


@shared_task(name="distribution.apply_subscription")
def apply_subscription(subscription_id, since):
    """Deliver what was archived since `since` (ISO 8601) and matches."""
    return deliveries.apply_since(subscription_id, datetime.fromisoformat(since))


@shared_task(name="distribution.sweep")
def sweep():
    """Beat: re-check staging orders, re-kick pushes and pending deliveries."""
    upkeep.sweep()


@shared_task(name="distribution.expire")
def expire():
    """Beat: expire orders and links past their time; warn users a day ahead."""
    return upkeep.expire()


@shared_task(name="distribution.deliver_subscription")
def deliver_subscription(delivery_id):
    """One pending subscription delivery (an operator's retry); the sweep covers a lost one."""
    return deliveries.deliver(delivery_id)


@shared_task(name="distribution.refresh_stage")
def refresh_stage(stage_id):
    staging_progress.refresh_stage(stage_id)


@shared_task(name="distribution.sweep_stages")
def sweep_stages():
    """Beat: re-ask the archive for every stage request with files still to stage."""
    staging_progress.sweep_stages()


@shared_task(name="transform.subset_item")
def transform_item(item_id):
    """Cut one order item's file to its order's subset (queue `transform`, on its own so a
    long transform never holds up recalls, downloads or order refreshes)."""
    return transforms.transform_item(item_id)
