"""What distribution tells users: events about their orders and subscriptions, written with
the change. Whether they arrive by mail, webhook or not at all is each user's choice, kept by
the events app."""
from django.db.models import Count

from backend.events import services as events

from ..models import Order, StageFile, StageRequest
from .signed_links import links

ORDER_TYPES = {Order.State.READY: "order.ready",
               Order.State.PARTIALLY_READY: "order.partially_ready",
               Order.State.FAILED: "order.failed"}


def order_event(order, type, **data):
    """Record an order.* event for the order's user (ids and links, no prose)."""
    pk = order.pk
    events.emit(type, f"orders/{pk}", {
        "order": pk, "delivery": order.delivery, **data,
        "links": {"order": events.link(f"orders/{pk}/"),
                  "files": events.link(f"orders/{pk}/links/"),
                  "script": events.link(f"orders/{pk}/script/")}}, user=order.user)


def notify_order(order):
    """An order (not a subscription's) is ready, ready in part, or failed."""
    if order.subscription_id:
        return
    listing = links(order)
    order_event(order, ORDER_TYPES[order.state], files=len(listing["links"]),
                failed=len(listing["failed"]),
                expires_at=order.expires_at.isoformat() if order.expires_at else None)


def notify_part(order, ready, later):
    """A part of an order staged in parts is ready; `later` files follow."""
    order_event(order, "order.part_ready", ready=ready, later=later)


def subscription_matched(subscription, granule, order=None):
    """A granule matched the subscription (and joined its standing order, when it has one)."""
    key = granule.collection.key
    found = {"granule": events.link(f"granules/{granule.pk}/"),
             "subscription": events.link(f"subscriptions/{subscription.pk}/"),
             "stac_item": events.link("").replace(
                 "/api/v1/", f"/stac/collections/{key}/items/{granule.granule_id}")}
    if order is not None:
        found["order"] = events.link(f"orders/{order.pk}/links/")
    events.emit("subscription.matched", f"subscriptions/{subscription.pk}", {
        "subscription": subscription.pk, "granule": granule.pk,
        "granule_name": str(granule), "collection": key,
        "order": order.pk if order is not None else None, "links": found},
        user=subscription.user, collection_key=key)


RECALL_FILES = 1000  # files named in a recall.done event; the request's own page lists all


def recall_done(stage_id):
    """A stage (recall) request finished: every file completed, failed or cancelled. Its files
    by path and state, the first RECALL_FILES of them (the link lists them all)."""
    stage = StageRequest.objects.get(pk=stage_id)
    rows = list(StageFile.objects.filter(request_id=stage_id).order_by("pk")
                .values_list("path", "file_id", "state")[:RECALL_FILES + 1])
    counts = {s: 0 for s in StageFile.State.values}
    for state, n in (StageFile.objects.filter(request_id=stage_id).order_by()
                     .values_list("state").annotate(n=Count("pk"))):
        counts[state] = n
    events.emit("recall.done", f"stage-requests/{stage.pk}", {
        "stage_request": str(stage.pk), "file_count": stage.file_count, "states": counts,
        "files": [{"path": p, "file": f, "state": s} for p, f, s in rows[:RECALL_FILES]],
        "files_truncated": len(rows) > RECALL_FILES,
        "links": {"stage_request": events.link(f"stage-requests/{stage.pk}/"),
                  "tape_rest": events.link("").replace("/api/v1/",
                                                       f"/api/tape/v1/stage/{stage.pk}")}},
        user=stage.user)
