"""Subscription deliveries: which subscriptions an archived granule matches, and each match
delivered once (a mail, or the granule added to the subscription's standing order)."""
import functools

from django.db import connection, transaction
from django.db.models import Sum
from django.utils import timezone

from backend.catalog import shapes
from backend.catalog.geo import BBox
from backend.catalog.models import Granule
from backend.catalog.services import FOOTPRINT_FIELDS, meets, visible_granules

from ..matching import attributes_match, shape_matches, stored_conditions
from ..models import Order, Subscription, SubscriptionCollection, SubscriptionDelivery
from .notify import notify
from .orders import add_items, queue_refresh
from .signed_links import site_url
from .subscriptions import archived_candidates, chunks, order_delivery, subscription_shape


def matching_subscriptions(granule):
    """Ids of the active subscriptions whose filter holds for `granule` (for a new version of
    a reprocessed granule, of those that asked for new versions).

    Candidates are the index rows of the granule's collection (SubscriptionCollection, by
    its partial indexes: rows without a box, and boxed rows by latitude), footprint and
    window are tested on them in SQL, and only the attribute conditions of what is left are
    checked here, on plain rows, with a subscription's shape (its box was the SQL test)
    against the granule's footprint. The SQL is written out once per shape rather than built
    through the ORM each time: building and compiling the queryset, and reading its rows
    back, took longer than the query itself.
    """
    params = [granule.collection_id]
    spans = ()
    if granule.bbox:
        box = BBox(*granule.bbox)
        spans = box.longitude_spans()
        params += [box.north, box.south]
        for lo, hi in spans:
            params += [hi, lo, hi, lo]
    adapt = connection.ops.adapt_datetimefield_value
    params += [adapt(granule.temporal_end), adapt(granule.temporal_start)]
    with connection.cursor() as cursor:
        cursor.execute(_match_sql(connection.vendor, len(spans), granule.replaces_id is not None),
                       params)
        rows = cursor.fetchall()
    attributes = granule.attributes
    footprint = _unset = object()
    matched = []
    # conditions as text: most subscriptions have none, and those need no decoding
    for pk, text, shape in rows:
        if text != "[]" and not attributes_match(stored_conditions(text), attributes):
            continue
        if shape:
            if footprint is _unset:
                footprint = shapes.load_footprints(
                    [[getattr(granule, name) for name in FOOTPRINT_FIELDS]])[0]
            if not shape_matches(shape, footprint):
                continue
        matched.append(pk)
    return matched


# A subscription's box intersects a longitude span [lo, hi] of the granule's (catalog
# bbox_q's test, seen from the other side): a plain box overlaps it, one across the
# antimeridian reaches it from either end.
_SPAN_SQL = ("((west <= east AND west <= %s AND east >= %s) "
             "OR (west > east AND (west <= %s OR east >= %s)))")


@functools.cache
def _match_sql(vendor, spans, new_version):
    """The matching query for a granule with `spans` longitude spans (0: no footprint)."""
    where = ["collection_id = %s", "active"]
    if spans:
        where.append(f"(west IS NULL OR (west IS NOT NULL AND south <= %s AND north >= %s AND "
                     f"({' OR '.join([_SPAN_SQL] * spans)})))")
    else:
        where.append("west IS NULL")
    where += ["(temporal_start IS NULL OR temporal_start <= %s)",
              "(temporal_end IS NULL OR temporal_end >= %s)"]
    if new_version:
        where.append("new_versions")
    table = connection.ops.quote_name(SubscriptionCollection._meta.db_table)
    return (f"SELECT subscription_id, CAST(conditions AS TEXT), geometry FROM {table} "
            f"WHERE {' AND '.join(where)}")


def match_granules(granule_ids):
    """match_granule for each of a batch; the deliveries made."""
    return sum(match_granule(pk) for pk in granule_ids)


def match_granule(granule_id):
    """Record and make the deliveries of an archived granule (re-running adds none)."""
    granule = Granule.objects.select_related("collection").filter(pk=granule_id).first()
    if granule is None or granule.state != Granule.State.ARCHIVED:
        return 0
    return sum(_deliver_once(pk, granule) or 0 for pk in matching_subscriptions(granule))


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
    order, _ = Order.objects.get_or_create(
        subscription=subscription,
        defaults={"user": subscription.user, "delivery": order_delivery(subscription),
                  "destination": subscription.destination})
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
        text = f"{granule} ({granule.temporal_start:%Y-%m-%d %H:%M} UTC) matches {subscription}."
        if subscription.mode == Subscription.Mode.NOTIFY:
            delivery.detail = "notified"
            body = f"{text}\nSTAC item: {site_url()}stac/collections/{granule.collection.key}" \
                   f"/items/{granule.granule_id}\n"
        else:
            order = standing_order(subscription)
            add_items(order, [granule])
            Order.objects.filter(pk=order.pk).update(
                total_bytes=order.items.aggregate(t=Sum("file__size"))["t"] or 0)
            queue_refresh(order.pk)
            delivery.detail = f"added to order {order.pk}"
            body = (f"{text}\nIt was added to your standing order {order.pk}: "
                    f"{site_url()}api/v1/orders/{order.pk}/links/\n")
        notify(subscription.user, f"Granary subscription {subscription}: {granule}", body,
               fail_silently=False)
        delivery.state, delivery.delivered_at = SubscriptionDelivery.State.DELIVERED, now
        delivery.save(update_fields=["state", "detail", "attempts", "delivered_at"])
    return True
