"""Orders: an order holds one item per file, and its items become ready on their own.

Items ask the archive for their bytes (`make_available`), wait while a recall runs, and become
ready on their own: a failed item never hides the links of the others (the Earthdata Search
lesson), and the order's expiry starts only when nothing is left waiting, so a slow recall does
not eat the time users have to download (ESPA). Ready files are kept in the cache through
`CacheEntry.keep_until`, never pinned, until they are delivered or expire.

An order larger than its share of the cache (GRANARY_ORDER_CACHE_SHARE) is staged in parts:
it asks for recalls only while its undelivered files and recalls fit in that share, and each
delivery asks for the next part. Asking for everything at once filled the cache with kept
files while the rest waited for room that never came (issue #17).
"""
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from backend.accounts.ownership import owned
from backend.archive import services as archive
from backend.archive.models import ArchiveRequest
from backend.catalog.models import File, Granule
from backend.errors import Conflict, DomainError
from backend.nudges import send_on_commit

from ..models import CartItem, Delivery, Order, OrderItem
from . import transforms
from .access import get_order, orderable_granules
from .limits import check_size, limits, open_orders
from .notify import notify_order, notify_part


def create_order(user, granule_ids=None, delivery=Delivery.HTTPS, destination=None,
                 subset=None):
    """Submit an order for `granule_ids` (or the whole cart, which it then empties); `subset`
    (the API's options) cuts each data file (services.transforms), checked before ordering."""
    from_cart = granule_ids is None
    if from_cart:
        items = owned(CartItem.objects, user)
        granule_ids = list(items.filter(granule__state=Granule.State.ARCHIVED)
                           .values_list("granule_id", flat=True))
        if not granule_ids:
            raise DomainError("The cart holds only withdrawn granules; add others or name them."
                              if items.exists() else
                              "The cart is empty; add granules or name them.", "granules")
    if delivery not in Delivery.values:
        raise DomainError(f"delivery must be one of {', '.join(Delivery.values)}.", "delivery")
    if delivery == Delivery.PUSH and destination is None:
        raise DomainError("A push order needs a destination.", "destination")
    granules = orderable_granules(user, granule_ids)
    nbytes = check_size(granules, "The order")
    cut = transforms.parse_subset(subset)
    transforms.check_subset(granules, cut)
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        count, limit = open_orders(user).count(), limits().open_orders
        if count >= limit:
            raise DomainError(
                f"You have {count} open orders; the limit is {limit} open orders "
                "(GRANARY_ORDER_MAX_OPEN). Wait for one to finish or cancel one.",
                "limit_open_orders")
        order = Order.objects.create(user=user, delivery=delivery, destination=destination,
                                     total_bytes=nbytes,
                                     subset=cut.as_json() if cut.cuts else {})
        add_items(order, granules)
        if from_cart:
            owned(CartItem.objects, user).filter(granule__in=granules).delete()
    queue_refresh(order.pk)
    return order


def add_items(order, granules):
    """An item per file of `granules` (those the order holds already stay as they are); an
    order with a subset delivers the data files alone, cut."""
    files = File.objects.filter(granule__in=granules)
    if order.subset:
        files = files.filter(role=File.Role.DATA)
    OrderItem.objects.bulk_create(
        [OrderItem(order=order, granule_id=f.granule_id, file=f) for f in files],
        ignore_conflicts=True,
    )


def queue_refresh(order_id):
    """Have a worker refresh the order once this transaction commits."""
    send_on_commit("distribution.refresh_order", order_id)


def retention():
    return timedelta(days=settings.GRANARY_ORDER_RETENTION_DAYS)


def order_share():
    """Bytes of the cache one order may hold at once, its kept files and its recalls together
    (GRANARY_ORDER_CACHE_SHARE of the cache): a larger order is staged in parts."""
    return int(settings.GRANARY_ORDER_CACHE_SHARE * settings.GRANARY_CACHE_BYTES)


# Items whose file must stay in the cache: asked for by an order still staging, or ready and
# not yet delivered (downloaded in full, or pushed).
# A data file cut to a subset needs the cache until it is cut (its output is served from the
# order's folder).
NEEDS_CACHE = (
    Q(state=OrderItem.State.WAITING, recall_request_id__isnull=False,
      order__state__in=[Order.State.SUBMITTED, Order.State.STAGING])
    | transforms.PENDING
    | Q(state=OrderItem.State.READY, order__delivery=Delivery.HTTPS, downloaded_at__isnull=True,
        output_size__isnull=True)
    | Q(state=OrderItem.State.READY, order__delivery=Delivery.PUSH, pushed_at__isnull=True,
        output_size__isnull=True)
)


def keep_in_cache(file_ids, until):
    """Keep ready files from the purge until `until` (never shortening a longer residency)."""
    archive.keep_until(file_ids, until)


def release_cache(items):
    """Let the purge take the files of items that no longer need them: delivered, expired or
    cancelled. A file another live item needs keeps its keep, and so does a longer residency
    (the collection's data pool)."""
    items = list(items)
    needed = set(OrderItem.objects.filter(file_id__in=[i.file_id for i in items])
                 .exclude(pk__in=[i.pk for i in items]).filter(NEEDS_CACHE)
                 .values_list("file_id", flat=True))
    latest = timezone.now() + retention()
    for item in items:
        if item.file_id not in needed:
            archive.end_keep(item.file_id, item.expires_at or latest)


def delivered(item):
    """An item was delivered: its file may leave the cache, and the next part of an order
    staged in parts is asked for."""
    release_cache([item])
    if Order.objects.filter(pk=item.order_id, state=Order.State.STAGING).exists():
        queue_refresh(item.order_id)


def refresh_order(order_id):
    """Ask the archive again for the waiting items; settle the order's state (idempotent)."""
    with transaction.atomic():
        order = Order.objects.select_for_update().filter(pk=order_id).first()
        if order is None or order.state in Order.FINAL:
            return None
        now = timezone.now()
        # items cut to a subset wait in the cache for their transform, not for the archive
        waiting = list(order.items.filter(state=OrderItem.State.WAITING, in_cache=False)
                       .select_related("file__granule__collection"))
        asking = _to_ask(order, waiting)
        answers = archive.make_available([i.file for i in asking], requested_by=order.user,
                                         share="subscription" if order.subscription_id
                                         else "order")
        cutting = list(transforms.claimable(now).filter(order=order).values_list("pk", flat=True))
        for item, answer in zip(asking, answers, strict=True):
            if answer.ready and transforms.needs_transform(order, item):
                item.in_cache, item.eta_s = True, None
                cutting.append(item.pk)
            elif answer.ready:
                item.state, item.in_cache, item.eta_s = OrderItem.State.READY, True, None
                item.ready_at, item.expires_at = now, now + retention()
            elif answer.error:
                item.state, item.error, item.eta_s = OrderItem.State.FAILED, answer.error, None
            else:
                item.in_cache, item.eta_s = False, answer.eta_s
                item.recall_request_id = answer.request_id
        OrderItem.objects.bulk_update(
            waiting, ["state", "in_cache", "eta_s", "error", "ready_at", "expires_at",
                      "recall_request_id"])
        ready = [i for i in waiting if i.state == OrderItem.State.READY or i.pk in cutting]
        if ready:
            keep_in_cache([i.file_id for i in ready], now + retention())
        settle(order, now)
        transforms.queue_transforms(cutting)
    return order


def _to_ask(order, waiting):
    """The waiting items to ask the archive for now; fails those that cannot be staged.

    Items asked before are asked again (their recall may be done). New ones are asked in
    order while the order's undelivered ready files and its recalls fit in its share of the
    cache (one file at least, so any file the cache can hold is staged in its turn); the
    rest wait until earlier parts are delivered. A file larger than the whole cache fails:
    it could never be staged.
    """
    failed_recalls = dict(ArchiveRequest.objects.filter(
        pk__in=[i.recall_request_id for i in waiting if i.recall_request_id],
        state=ArchiveRequest.State.FAILED).values_list("pk", "error"))
    capacity = settings.GRANARY_CACHE_BYTES
    held = order.items.filter(NEEDS_CACHE).filter(
        Q(state=OrderItem.State.READY) | transforms.PENDING).aggregate(
        total=Sum("file__size"))["total"] or 0
    held += sum(i.file.size for i in waiting
                if i.recall_request_id and i.recall_request_id not in failed_recalls)
    asking, full = [], False
    for item in waiting:
        if item.recall_request_id in failed_recalls:
            item.state, item.eta_s = OrderItem.State.FAILED, None
            item.error = f"recall failed: {failed_recalls[item.recall_request_id]}"
        elif item.file.size > capacity:
            item.state, item.eta_s = OrderItem.State.FAILED, None
            item.error = (f"{item.file.name} ({item.file.size} bytes) is larger than the whole "
                          f"cache ({capacity} bytes): it cannot be staged")
        elif item.recall_request_id:
            asking.append(item)
        elif not full and (not held or held + item.file.size <= order_share()):
            asking.append(item)
            held += item.file.size
        else:
            full = True
    return asking


def settle(order, now):
    """The order's state from its items'; starts its expiry once nothing waits."""
    counts = dict(order.items.order_by().values("state").annotate(n=Count("pk"))
                  .values_list("state", "n"))
    waiting = counts.get(OrderItem.State.WAITING, 0)
    ready = counts.get(OrderItem.State.READY, 0)
    failed = counts.get(OrderItem.State.FAILED, 0)
    empty = counts.get(OrderItem.State.EMPTY, 0)   # an outcome of a subset, not a failure
    if not counts:
        state = Order.State.SUBMITTED
    elif waiting:
        state = Order.State.STAGING
    elif not ready and not (empty and not failed):
        state = Order.State.FAILED
    elif failed:
        state = Order.State.PARTIALLY_READY
    else:
        state = Order.State.READY
    if order.state == Order.State.COMPLETED and state in (Order.State.READY,
                                                          Order.State.PARTIALLY_READY):
        state = Order.State.COMPLETED
    became_ready = (state in (Order.State.READY, Order.State.PARTIALLY_READY)
                    and order.state not in (Order.State.READY, Order.State.PARTIALLY_READY))
    if became_ready and order.subscription_id is None:
        order.ready_at, order.expires_at = now, now + retention()
        ready_items = order.items.filter(state=OrderItem.State.READY)
        ready_items.update(expires_at=order.expires_at)
        # parts delivered while the rest was staged are not kept again
        keep_in_cache(list(ready_items.filter(NEEDS_CACHE).values_list("file_id", flat=True)),
                      order.expires_at)
    order.state = state
    if state == Order.State.FAILED:
        order.error = "; ".join(sorted(set(
            order.items.filter(state=OrderItem.State.FAILED).values_list("error", flat=True))))
    order.save(update_fields=["state", "ready_at", "expires_at", "error", "updated_at"])
    if order.delivery == Delivery.PUSH and ready and order.items.filter(
            state=OrderItem.State.READY, pushed_at__isnull=True).exists():
        send_on_commit("distribution.push_order", order.pk)
    if state == Order.State.STAGING and ready:
        _part_ready(order)
    if state != order.notified_state and state in (
            Order.State.READY, Order.State.PARTIALLY_READY, Order.State.FAILED):
        order.notified_state = state
        order.save(update_fields=["notified_state"])
        notify_order(order)


def _part_ready(order):
    """Tell the user once each part of an order staged in parts is all ready: the next part
    is recalled only as they download this one."""
    waiting = order.items.filter(state=OrderItem.State.WAITING)
    if order.subscription_id or waiting.filter(recall_request_id__isnull=False).exists():
        return
    later = waiting.count()
    ready = order.items.filter(state=OrderItem.State.READY).count()
    mark = f"part:{ready}"
    if later and order.notified_state != mark:
        order.notified_state = mark
        order.save(update_fields=["notified_state"])
        notify_part(order, ready, later)


def cancel_order(user, order_id):
    with transaction.atomic():
        order = get_order(user, order_id)
        order = Order.objects.select_for_update().get(pk=order.pk)
        if order.state in Order.FINAL:
            raise Conflict(f"Order {order.pk} is already {order.get_state_display().lower()}.")
        if order.subscription_id:
            raise Conflict(f"Order {order.pk} is the standing order of a subscription: pause or "
                           "delete the subscription instead.")
        live = order.items.filter(state__in=[OrderItem.State.WAITING, OrderItem.State.READY])
        items = list(live)
        live.update(state=OrderItem.State.CANCELLED)
        order.state = Order.State.CANCELLED
        order.save(update_fields=["state", "updated_at"])
        release_cache(items)
        transforms.remove_outputs(items)
    return order
