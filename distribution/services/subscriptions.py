"""Subscriptions: standing filters of a user's, stored with the index rows matching reads, and
previewed against what was archived lately."""
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from backend.accounts.ownership import owned
from backend.catalog import shapes
from backend.catalog.geo import BBox
from backend.catalog.models import Collection, Granule
from backend.catalog.services import (
    FOOTPRINT_FIELDS,
    bbox_q,
    shape_q,
    temporal_q,
    visible_collections,
)
from backend.errors import DomainError, Forbidden

from ..matching import attributes_match
from ..models import Delivery, Order, OrderItem, Subscription, SubscriptionCollection
from .orders import release_cache


def _check_visible(user, collections):
    hidden = [c.key for c in collections if not visible_collections(user).filter(
        pk=c.pk).exists()]
    if hidden:
        raise Forbidden(f"Collection {', '.join(hidden)} is restricted and you are not approved "
                        "to subscribe to it.")


def save_subscription(subscription, collections):
    """Store a validated subscription and its collection index rows. Its owner stays who it
    is, whoever edits it: the collections must be ones the owner may see."""
    _check_visible(subscription.user, collections)
    if subscription.mode == Subscription.Mode.PUSH and subscription.destination is None:
        raise DomainError("A push subscription needs a destination.", "destination")
    with transaction.atomic():
        try:
            with transaction.atomic():
                subscription.save()
        except IntegrityError as exc:  # the same name saved by a request alongside
            if "subscription_user_name_unique" not in str(exc):
                raise
            raise DomainError(f"You already have a subscription named {subscription.name}: "
                              "choose another name.", "name") from exc
        SubscriptionCollection.objects.filter(subscription=subscription).exclude(
            collection__in=collections).delete()
        index = subscription_index(subscription)
        for collection in collections:
            SubscriptionCollection.objects.update_or_create(
                subscription=subscription, collection=collection, defaults=index)
        SubscriptionCollection.objects.filter(subscription=subscription).update(**index)
        order = getattr(subscription, "standing_order", None) if subscription.pk else None
        if order is not None:
            Order.objects.filter(pk=order.pk).update(
                delivery=order_delivery(subscription), destination=subscription.destination)
    return subscription


INDEXED_FIELDS = ("active", "west", "south", "east", "north", "geometry", "temporal_start",
                  "temporal_end", "conditions", "new_versions")


def subscription_shape(subscription):
    """The shape a subscription was drawn with (its box alone needs none), as a Shape whose
    boxes are the subscription's box."""
    if not subscription.geometry:
        return None
    return shapes.Shape(shapes.from_stored(subscription.geometry), (BBox(*subscription.bbox),))


def subscription_index(subscription):
    """The fields of a subscription its SubscriptionCollection rows carry for matching."""
    return {name: getattr(subscription, name) for name in INDEXED_FIELDS}


def delete_subscription(subscription):
    """Delete a subscription with its standing order, letting the cache purge its files.

    Its row is locked first, as a worker recording a delivery locks it: a delivery being
    recorded is waited for and deleted with the rest. Without the lock the rows to delete were
    collected before the worker's delivery committed, and the commit failed on it (a 500)."""
    with transaction.atomic():
        if not Subscription.objects.select_for_update().filter(pk=subscription.pk).exists():
            return   # deleted meanwhile: what the caller asked for is done
        order = Order.objects.filter(subscription=subscription).first()
        if order is not None:
            release_cache(list(order.items.filter(state=OrderItem.State.READY)))
        subscription.delete()


def subscriptions_of(user):
    return owned(Subscription.objects.select_related("user", "destination").prefetch_related(
        "collections"), user)


def collection_by_key(user, key):
    try:
        return Collection.objects.get_by_key(key)
    except Collection.DoesNotExist as exc:
        raise DomainError(str(exc), "collections") from exc


def archived_candidates(collections, since, *, bbox=None, shape=None, start=None, end=None,
                        new_versions=True):
    """Granules archived since `since` that a filter's collections, box (or shape's boxes) and
    window select, by the catalog's indexed queries; the caller checks the attribute
    conditions and the shape itself (catalog.services.meets) on what is left."""
    granules = Granule.objects.filter(
        state=Granule.State.ARCHIVED, archived_at__gte=since, collection__in=collections,
    ).filter(temporal_q(start, end))
    if shape is not None:
        granules = granules.filter(shape_q(shape))
    elif bbox:
        granules = granules.filter(bbox_q(BBox(*bbox)))
    if not new_versions:
        granules = granules.filter(replaces__isnull=True)
    return granules


@dataclass
class Preview:
    count: int
    days: int
    since: datetime
    sample: list


PREVIEW_SAMPLE = 5


def preview_subscription(user, collections, *, bbox=None, shape=None, start=None, end=None,
                         conditions=(), new_versions=False, days=30):
    """How many granules archived in the last `days` days a filter matches, and the newest few:
    the query "apply since" delivers from, so the preview promises what a subscription sends
    (a shape is tested exactly on every candidate: the count is exact)."""
    _check_visible(user, collections)
    since = timezone.now() - timedelta(days=days)
    granules = archived_candidates(collections, since, bbox=bbox, shape=shape, start=start,
                                   end=end, new_versions=new_versions
                                   ).order_by("-archived_at", "-id")
    if conditions or shape is not None:
        count, newest = 0, []
        rows = granules.values_list("pk", "attributes", *FOOTPRINT_FIELDS).iterator(
            chunk_size=2000)
        for batch in chunks(rows, 2000):
            hits = ([True] * len(batch) if shape is None else shape.intersects_many(
                shapes.load_footprints([row[2:] for row in batch])))
            for (pk, attributes, *_), hit in zip(batch, hits, strict=True):
                if hit and attributes_match(conditions, attributes):
                    count += 1
                    if len(newest) < PREVIEW_SAMPLE:
                        newest.append(pk)
        sample = granules.filter(pk__in=newest)
    else:
        count, sample = granules.count(), granules[:PREVIEW_SAMPLE]
    return Preview(count=count, days=days, since=since,
                   sample=list(sample.select_related("collection")))


def chunks(rows, size):
    """Lists of `size` rows (the last one shorter) from an iterator."""
    chunk = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def order_delivery(subscription):
    return Delivery.PUSH if subscription.mode == Subscription.Mode.PUSH else Delivery.HTTPS
