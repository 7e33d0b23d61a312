"""Subscription deliveries: which subscriptions an archived granule matches, and each match
delivered once (a mail, or the granule added to the subscription's standing order)."""
from datetime import UTC, datetime, timedelta

from django.db import connection, transaction
from django.db.models import Sum
from django.utils import timezone

from backend.catalog import shapes
from backend.catalog.models import Granule
from backend.catalog.services import FOOTPRINT_FIELDS, meets, visible_granules

from ..match_table import MatchTable, Row
from ..matching import attributes_match
from ..models import (
    Order,
    Subscription,
    SubscriptionCollection,
    SubscriptionDelivery,
    SubscriptionIndexStamp,
)
from .notify import subscription_matched
from .orders import add_items, queue_refresh
from .subscriptions import archived_candidates, chunks, order_delivery, subscription_shape


def matching_subscriptions(granule, table=None):
    """Ids (ascending) of the active subscriptions whose filter holds for `granule` (for a new
    version of a reprocessed granule, of those that asked for new versions).

    The granule's collection's subscriptions are held in memory as a MatchTable (box, window,
    compiled conditions and shapes as columns, matched at once), read again from the index
    rows (SubscriptionCollection) when the collection's stamp has changed: one small query
    per granule instead of reading every candidate row and testing its conditions here,
    which grew with the matches (14 ms at 1,240 of them). A batch passes the table it read
    once for the granule's collection.
    """
    table = match_table(granule.collection_id) if table is None else table
    if not len(table):
        return []
    footprint = None
    if granule.bbox and table.is_shaped.any():
        footprint = shapes.load_footprints(
            [[getattr(granule, name) for name in FOOTPRINT_FIELDS]])[0]
    return table.match(granule.bbox, _microseconds(granule.temporal_start),
                       _microseconds(granule.temporal_end), granule.attributes or {},
                       new_version=granule.replaces_id is not None, footprint=footprint)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_tables = {}


def _microseconds(instant):
    return None if instant is None else (instant - _EPOCH) // timedelta(microseconds=1)


def match_table(collection_id):
    """The MatchTable of a collection's active subscriptions, as this process last read it if
    the collection's stamp (kept by triggers on every write to its index rows) has not
    changed since; read first, so a change committed while the rows are read makes the next
    call read them again."""
    stamp = SubscriptionIndexStamp._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT token FROM {connection.ops.quote_name(stamp)} "
                       "WHERE collection_id = %s", [collection_id])
        found = cursor.fetchone()
    token = found[0] if found else None
    key = (connection.settings_dict["NAME"], collection_id)
    held = _tables.get(key)
    if held is not None and held[0] == token:
        return held[1]
    rows = SubscriptionCollection.objects.filter(collection_id=collection_id, active=True)
    table = MatchTable(
        Row(pk, None if west is None else (west, south, east, north), geometry,
            _microseconds(start), _microseconds(end), conditions, new_versions)
        for pk, west, south, east, north, geometry, start, end, conditions, new_versions
        in rows.values_list("subscription_id", "west", "south", "east", "north", "geometry",
                            "temporal_start", "temporal_end", "conditions", "new_versions"))
    _tables[key] = (token, table)
    return table


def match_granules(granule_ids):
    """match_granule for each of a batch; the deliveries made. The batch's granules are read in
    one query and a collection no active subscription names costs nothing more: an archived
    batch of ingest no longer holds the distribution queue (and the order refreshes behind it)
    for two queries per granule (issue #22, mixed); each collection's table is read once."""
    granules = Granule.objects.select_related("collection").filter(
        pk__in=list(granule_ids), state=Granule.State.ARCHIVED).order_by("pk")
    tables, made = {}, 0
    for granule in granules:
        if granule.collection_id not in tables:
            tables[granule.collection_id] = match_table(granule.collection_id)
        if len(tables[granule.collection_id]):
            made += _deliver(granule, tables[granule.collection_id])
    return made


def match_granule(granule_id):
    """Record and make the deliveries of an archived granule (re-running adds none)."""
    granule = Granule.objects.select_related("collection").filter(pk=granule_id).first()
    if granule is None or granule.state != Granule.State.ARCHIVED:
        return 0
    return _deliver(granule)


def _deliver(granule, table=None):
    return sum(_deliver_once(pk, granule) or 0 for pk in matching_subscriptions(granule, table))


def _deliver_once(subscription_id, granule):
    """Record and make one delivery; None when the subscription is gone (deleted meanwhile).

    The subscription row is locked while its delivery is recorded, so a delete either comes
    first (and nothing is recorded) or waits and takes the delivery with it."""
    with transaction.atomic():
        if not Subscription.objects.select_for_update().filter(pk=subscription_id).exists():
            return None
        delivery, created = SubscriptionDelivery.objects.get_or_create(
            subscription_id=subscription_id, granule=granule)
    if delivery.state == SubscriptionDelivery.State.PENDING:
        deliver(delivery.pk)
    return int(created)


def apply_since(subscription_id, since):
    """Deliver what was already archived since `since` and matches the subscription."""
    subscription = Subscription.objects.filter(pk=subscription_id).first()
    if subscription is None:
        return 0
    shape = subscription_shape(subscription)
    granules = archived_candidates(
        subscription.collections.all(), since, bbox=subscription.bbox, shape=shape,
        start=subscription.temporal_start, end=subscription.temporal_end,
        new_versions=subscription.new_versions)
    made = 0
    for batch in chunks(granules.select_related("collection").iterator(chunk_size=500), 500):
        hits = meets(shape, batch) if shape is not None else [True] * len(batch)
        for granule, hit in zip(batch, hits, strict=True):
            if not hit or not attributes_match(subscription.conditions, granule.attributes):
                continue
            delivered = _deliver_once(subscription.pk, granule)
            if delivered is None:
                return made
            made += delivered
    return made


def standing_order(subscription):
    """The subscription's standing order; it cuts what comes next as the subscription now
    says (granules added before keep the cut they had)."""
    order, _ = Order.objects.get_or_create(
        subscription=subscription,
        defaults={"user": subscription.user, "delivery": order_delivery(subscription),
                  "destination": subscription.destination, "subset": subscription.subset})
    if order.subset != subscription.subset:
        order.subset = subscription.subset
        order.save(update_fields=["subset"])
    return order


def deliver(delivery_id):
    """Make one pending delivery. The mail goes out inside the transaction, so a failure leaves
    the delivery pending for the sweep: at least once, and never twice once recorded."""
    with transaction.atomic():
        delivery = (SubscriptionDelivery.objects.select_for_update()
                    .select_related("subscription__user", "granule__collection")
                    .filter(pk=delivery_id).first())
        if delivery is None or delivery.state != SubscriptionDelivery.State.PENDING:
            return False
        subscription, granule = delivery.subscription, delivery.granule
        delivery.attempts += 1
        now = timezone.now()
        if not visible_granules(subscription.user).filter(pk=granule.pk).exists():
            delivery.state = SubscriptionDelivery.State.FAILED
            delivery.detail = f"{subscription.user} may no longer see {granule.collection.key}"
            delivery.save(update_fields=["state", "detail", "attempts"])
            return False
        order = None
        if subscription.mode == Subscription.Mode.NOTIFY:
            delivery.detail = "notified"
        else:
            order = standing_order(subscription)
            add_items(order, [granule])
            Order.objects.filter(pk=order.pk).update(
                total_bytes=order.items.aggregate(t=Sum("file__size"))["t"] or 0)
            queue_refresh(order.pk)
            delivery.detail = f"added to order {order.pk}"
        subscription_matched(subscription, granule, order)
        delivery.state, delivery.delivered_at = SubscriptionDelivery.State.DELIVERED, now
        delivery.save(update_fields=["state", "detail", "attempts", "delivered_at"])
    return True
