"""Writing events: in the caller's transaction (the outbox), fanned out once it commits."""
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from backend import nudges
from backend.catalog import bulk

from ..models import Event

# What each event says happened, with its audience (the ownership of the row it names).
TYPES = {
    "granule.archived": "every copy of a granule is written and verified",
    "granule.failed": "a granule was given up (a redelivery is needed)",
    "granule.withdrawn": "an operator withdrew a granule",
    "granule.deleted": "an operator deleted a granule",
    "ingest.request.finished": "an ingest request finished (its granules archived or failed)",
    "ingest.pdr.answered": "a PDR was answered with its PAN",
    "order.ready": "an order is ready",
    "order.partially_ready": "an order is ready in part",
    "order.part_ready": "a part of an order staged in parts is ready",
    "order.failed": "an order failed",
    "order.completed": "every file of an order was downloaded or pushed",
    "order.delivered": "a push order's files were copied to its destination",
    "order.expiring": "an order's files expire soon",
    "subscription.matched": "a granule matched a subscription and was delivered",
    "drive.offline": "a tape drive was varied off after repeated errors",
    "volume.suspect": "a tape volume cannot be read as a whole",
    "reconciliation.discrepancies": "a reconciliation run found discrepancies",
    "recall.done": "a stage (recall) request finished: its files completed, failed or cancelled",
    "target.projected_miss": "today's transfers are projected to fall short of a daily target",
    "queue.stuck": "an archive queue holds work older than its bound and makes no progress",
    "test": "a test event sent by its endpoint's owner",
}
SITE_SOURCE = "/granary"
# told to operators only (no user, provider or collection owns them)
OPERATOR_TYPES = ("drive.offline", "volume.suspect", "reconciliation.discrepancies",
                  "target.projected_miss", "queue.stuck")
# a collection's providers are told of these (their ingest, the modern PAN)
PROVIDER_PREFIXES = ("granule.", "ingest.")


def event(type, subject, data, *, source=None, collection=None, collection_key="", user=None,
          provider=None, time=None):
    """An unsaved Event (for emit_many). `collection` makes it its providers' event too;
    `collection_key` alone only names it (routing keys, rules); `time`, when the change was
    seen (a watcher's poll), else now."""
    if type not in TYPES:
        raise ValueError(f"unknown event type {type}")
    key = collection.key if collection else collection_key
    # bulk.new, not Event(...): a tape batch archives thousands of granules, an event each
    related = {name: value for name, value in (("collection", collection), ("user", user),
                                               ("provider", provider)) if value is not None}
    return bulk.new(Event, related, type=type, subject=subject, data=data,
                    time=time or timezone.now(),
                    source=source or (f"/collections/{key}" if key else SITE_SOURCE),
                    collection_key=key)


def emit(type, subject, data, **where):
    """Record one event in the current transaction; its deliveries follow the commit."""
    return emit_many([event(type, subject, data, **where)])[0]


def emit_many(events):
    """Record events in the current transaction (one insert); one nudge after the commit."""
    if not events:
        return []
    rows = bulk.insert(events, need_ids=True)
    ids = [e.pk for e in rows] if rows[0].pk else None
    if ids is None:  # a database that returns no ids: find them by their uids
        ids = list(Event.objects.filter(uid__in=[e.uid for e in rows]).values_list(
            "pk", flat=True))
    transaction.on_commit(lambda: nudges.send("backend.events.fan_out", ids))
    return rows


def purge_expired(now=None):
    """Drop events older than the retention (their deliveries with them)."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.GRANARY_EVENTS_RETENTION_DAYS)
    deleted, _ = Event.objects.filter(time__lt=cutoff).delete()
    return deleted


def link(path):
    """An absolute link into the API (data carries links, never prose)."""
    return f"{settings.GRANARY_SITE_URL.rstrip('/')}/api/v1/{path}"


def granule_event(type, granule, **data):
    """An unsaved granule.* event: the granule's ids and links, for its collection's
    providers and operators."""
    return event(type, f"granules/{granule.pk}",
                 {"granule": granule.pk, "granule_id": granule.granule_id,
                  "version": granule.version, "collection": granule.collection.key, **data,
                  "links": {"granule": link(f"granules/{granule.pk}/")}},
                 collection=granule.collection)
