"""Distribution: carts, orders, signed downloads, push deliveries and subscriptions.

An order holds one item per file. Items ask the archive for their bytes (`make_available`),
wait while a recall runs, and become ready on their own: a failed item never hides the links
of the others (the Earthdata Search lesson), and the order's expiry starts only when nothing
is left waiting, so a slow recall does not eat the time users have to download (ESPA).
Ready files are kept in the cache through `CacheEntry.keep_until`, never pinned.
"""
import functools
import ipaddress
import json
import logging
import os
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.core.signing import Signer
from django.db import connection, transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from backend.accounts import roles
from backend.archive import services as archive
from backend.archive.models import ArchiveRequest, CacheEntry
from backend.catalog import checksums
from backend.catalog.geo import BBox
from backend.catalog.models import Collection, File, Granule
from backend.catalog.services import bbox_q, temporal_q, visible_collections, visible_granules
from backend.metrics.models import TransferRecord
from backend.metrics.services import record_transfer

from . import streaming, targets
from .matching import attributes_match, stored_conditions
from .models import (
    CartItem,
    Delivery,
    Destination,
    Order,
    OrderItem,
    Subscription,
    SubscriptionCollection,
    SubscriptionDelivery,
)
from .targets import FolderTarget, HostKey, HostKeyError, PushError, SftpTarget

log = logging.getLogger(__name__)

CHUNK = 1 << 20
_signer = Signer(salt="distribution.download")


class DistributionError(Exception):
    """A request distribution refuses, with a sentence for the user and an HTTP status."""

    status = 400

    def __init__(self, detail, field=None):
        super().__init__(detail)
        self.detail = detail
        self.field = field


class Forbidden(DistributionError):
    status = 403


class NotFound(DistributionError):
    status = 404


class Conflict(DistributionError):
    status = 409


class Gone(DistributionError):
    status = 410


class Unavailable(DistributionError):
    status = 503


# ---------------------------------------------------------------------------------------------
# Who may order what


def orders_of(user):
    """Operators see every order; everyone else only their own."""
    qs = Order.objects.select_related("user", "destination")
    return qs if roles.is_operator(user) else qs.filter(user=user)


def get_order(user, order_id):
    order = orders_of(user).filter(pk=order_id).first()
    if order is None:
        raise NotFound(f"There is no order {order_id} of yours.")
    return order


def orderable_granules(user, granule_ids):
    """The granules `user` may order, or a 400 (unknown, not archived) or 403 (restricted)."""
    try:
        ids = sorted({int(g) for g in granule_ids})
    except (TypeError, ValueError) as exc:
        raise DistributionError("Granules are given by their numeric ids.", "granules") from exc
    if not ids:
        raise DistributionError("Name at least one granule.", "granules")
    found = {g.pk: g for g in Granule.objects.select_related("collection").filter(pk__in=ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        raise DistributionError(f"There is no granule {', '.join(map(str, missing))}.",
                                "granules")
    visible = set(visible_collections(user).filter(
        pk__in={g.collection_id for g in found.values()}).values_list("pk", flat=True))
    hidden = sorted({g.collection.key for g in found.values() if g.collection_id not in visible})
    if hidden:
        raise Forbidden(f"Collection {', '.join(hidden)} is restricted and you are not "
                        "approved to order it.")
    unarchived = [g for g in found.values() if g.state != Granule.State.ARCHIVED]
    if unarchived:
        raise DistributionError(
            f"Granule {unarchived[0]} is {unarchived[0].state}, not archived: it cannot be "
            "ordered yet.", "granules")
    return [found[i] for i in ids]


# ---------------------------------------------------------------------------------------------
# Limits


@dataclass(frozen=True)
class Limits:
    granules: int
    bytes: int
    open_orders: int


def limits():
    return Limits(
        granules=settings.GRANARY_ORDER_MAX_GRANULES,
        bytes=int(settings.GRANARY_ORDER_MAX_GB * 10**9),
        open_orders=settings.GRANARY_ORDER_MAX_OPEN,
    )


def _check_size(granules, what):
    limit = limits()
    if len(granules) > limit.granules:
        raise DistributionError(
            f"{what} has {len(granules)} granules; the limit is {limit.granules} granules "
            "(GRANARY_ORDER_MAX_GRANULES). Split it into several orders.", "limit_granules")
    nbytes = sum(g.total_size for g in granules)
    if nbytes > limit.bytes:
        raise DistributionError(
            f"{what} holds {nbytes / 1e9:.1f} GB; the limit is {limit.bytes / 1e9:g} GB "
            "(GRANARY_ORDER_MAX_GB). Split it into several orders.", "limit_bytes")
    return nbytes


def open_orders(user):
    return Order.objects.filter(user=user, subscription__isnull=True, state__in=Order.OPEN)


def order_limits(user):
    """The limits as a user sees them before ordering, with their open orders counted."""
    limit = limits()
    return {"granules": limit.granules, "bytes": limit.bytes, "open_orders": limit.open_orders,
            "open_orders_used": open_orders(user).count()}


# ---------------------------------------------------------------------------------------------
# The cart


def cart(user):
    return CartItem.objects.filter(user=user).select_related("granule__collection")


def add_to_cart(user, granule_ids):
    granules = orderable_granules(user, granule_ids)
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        have = set(CartItem.objects.filter(user=user).values_list("granule_id", flat=True))
        new = [g for g in granules if g.pk not in have]
        limit = limits().granules
        if len(have) + len(new) > limit:
            raise DistributionError(
                f"The cart would hold {len(have) + len(new)} granules; the limit is {limit} "
                "granules (GRANARY_ORDER_MAX_GRANULES).", "limit_granules")
        CartItem.objects.bulk_create([CartItem(user=user, granule=g) for g in new],
                                     ignore_conflicts=True)
    return cart(user)


def remove_from_cart(user, granule_ids=None):
    items = CartItem.objects.filter(user=user)
    if granule_ids is not None:
        items = items.filter(granule_id__in=granule_ids)
    items.delete()
    return cart(user)


# ---------------------------------------------------------------------------------------------
# Orders


def destination_of(user, destination_id):
    if destination_id in (None, ""):
        return None
    found = Destination.objects.filter(user=user, pk=destination_id).first()
    if found is None:
        raise DistributionError(f"You have no destination {destination_id}.", "destination")
    return found


def create_order(user, granule_ids=None, delivery=Delivery.HTTPS, destination=None):
    """Submit an order for `granule_ids` (or the whole cart, which it then empties)."""
    from_cart = granule_ids is None
    if from_cart:
        granule_ids = list(CartItem.objects.filter(user=user).values_list("granule_id",
                                                                          flat=True))
        if not granule_ids:
            raise DistributionError("The cart is empty; add granules or name them.", "granules")
    if delivery not in Delivery.values:
        raise DistributionError(f"delivery must be one of {', '.join(Delivery.values)}.",
                                "delivery")
    if delivery == Delivery.PUSH and destination is None:
        raise DistributionError("A push order needs a destination.", "destination")
    granules = orderable_granules(user, granule_ids)
    nbytes = _check_size(granules, "The order")
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        count, limit = open_orders(user).count(), limits().open_orders
        if count >= limit:
            raise DistributionError(
                f"You have {count} open orders; the limit is {limit} open orders "
                "(GRANARY_ORDER_MAX_OPEN). Wait for one to finish or cancel one.",
                "limit_open_orders")
        order = Order.objects.create(user=user, delivery=delivery, destination=destination,
                                     total_bytes=nbytes)
        _add_items(order, granules)
        if from_cart:
            CartItem.objects.filter(user=user, granule__in=granules).delete()
    _kick(order.pk)
    return order


def _add_items(order, granules):
    files = File.objects.filter(granule__in=granules)
    OrderItem.objects.bulk_create(
        [OrderItem(order=order, granule_id=f.granule_id, file=f) for f in files],
        ignore_conflicts=True,
    )


def _kick(order_id):
    from .tasks import refresh_order

    refresh_order.delay_on_commit(order_id)


def _retention():
    return timedelta(days=settings.GRANARY_ORDER_RETENTION_DAYS)


def _keep_in_cache(file_ids, until):
    """Keep ready files from the purge until `until` (never shortening a longer residency)."""
    (CacheEntry.objects.filter(file_id__in=file_ids)
     .filter(Q(keep_until__isnull=True) | Q(keep_until__lt=until))
     .update(keep_until=until))


def _release_cache(items):
    """Drop the keep of items that no longer need their files (a later keep stays)."""
    for item in items:
        if item.expires_at:
            CacheEntry.objects.filter(file_id=item.file_id,
                                      keep_until__lte=item.expires_at).update(keep_until=None)


def refresh_order(order_id):
    """Ask the archive again for the waiting items; settle the order's state (idempotent)."""
    with transaction.atomic():
        order = Order.objects.select_for_update().filter(pk=order_id).first()
        if order is None or order.state in Order.FINAL:
            return None
        now = timezone.now()
        waiting = list(order.items.filter(state=OrderItem.State.WAITING)
                       .select_related("file__granule__collection"))
        failed_recalls = dict(ArchiveRequest.objects.filter(
            pk__in=[i.recall_request_id for i in waiting if i.recall_request_id],
            state=ArchiveRequest.State.FAILED).values_list("pk", "error"))
        asking = []
        for item in waiting:
            if item.recall_request_id in failed_recalls:
                item.state = OrderItem.State.FAILED
                item.error = f"recall failed: {failed_recalls[item.recall_request_id]}"
                item.eta_s = None
            else:
                asking.append(item)
        answers = archive.make_available([i.file for i in asking], requested_by=order.user)
        for item, answer in zip(asking, answers, strict=True):
            if answer.ready:
                item.state, item.in_cache, item.eta_s = OrderItem.State.READY, True, None
                item.ready_at, item.expires_at = now, now + _retention()
            elif answer.error:
                item.state, item.error, item.eta_s = OrderItem.State.FAILED, answer.error, None
            else:
                item.in_cache, item.eta_s = False, answer.eta_s
                item.recall_request_id = answer.request_id
        OrderItem.objects.bulk_update(
            waiting, ["state", "in_cache", "eta_s", "error", "ready_at", "expires_at",
                      "recall_request_id"])
        ready = [i for i in waiting if i.state == OrderItem.State.READY]
        if ready:
            _keep_in_cache([i.file_id for i in ready], now + _retention())
        _settle(order, now)
    return order


def _settle(order, now):
    """The order's state from its items'; starts its expiry once nothing waits."""
    counts = dict(order.items.order_by().values("state").annotate(n=Count("pk"))
                  .values_list("state", "n"))
    waiting = counts.get(OrderItem.State.WAITING, 0)
    ready = counts.get(OrderItem.State.READY, 0)
    failed = counts.get(OrderItem.State.FAILED, 0)
    if not counts:
        state = Order.State.SUBMITTED
    elif waiting:
        state = Order.State.STAGING
    elif not ready:
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
        order.ready_at, order.expires_at = now, now + _retention()
        ready_items = order.items.filter(state=OrderItem.State.READY)
        ready_items.update(expires_at=order.expires_at)
        _keep_in_cache(list(ready_items.values_list("file_id", flat=True)), order.expires_at)
    order.state = state
    if state == Order.State.FAILED:
        order.error = "; ".join(sorted(set(
            order.items.filter(state=OrderItem.State.FAILED).values_list("error", flat=True))))
    order.save(update_fields=["state", "ready_at", "expires_at", "error", "updated_at"])
    if order.delivery == Delivery.PUSH and ready and order.items.filter(
            state=OrderItem.State.READY, pushed_at__isnull=True).exists():
        from .tasks import push_order

        push_order.delay_on_commit(order.pk)
    if state != order.notified_state and state in (
            Order.State.READY, Order.State.PARTIALLY_READY, Order.State.FAILED):
        order.notified_state = state
        order.save(update_fields=["notified_state"])
        _notify_order(order)


def cancel_order(user, order_id):
    with transaction.atomic():
        order = get_order(user, order_id)
        order = Order.objects.select_for_update().get(pk=order.pk)
        if order.state in Order.FINAL:
            raise Conflict(f"Order {order.pk} is already {order.state}.")
        if order.subscription_id:
            raise Conflict(f"Order {order.pk} is the standing order of a subscription: pause or "
                           "delete the subscription instead.")
        live = order.items.filter(state__in=[OrderItem.State.WAITING, OrderItem.State.READY])
        _release_cache(list(live.filter(state=OrderItem.State.READY)))
        live.update(state=OrderItem.State.CANCELLED)
        order.state = Order.State.CANCELLED
        order.save(update_fields=["state", "updated_at"])
    return order


def expire():
    """Beat: expire ready items and orders past their time, and warn a day before."""
    now = timezone.now()
    items = list(OrderItem.objects.filter(state=OrderItem.State.READY, expires_at__lte=now))
    _release_cache(items)
    OrderItem.objects.filter(pk__in=[i.pk for i in items]).update(state=OrderItem.State.EXPIRED)
    live = Order.objects.filter(subscription__isnull=True,
                                state__in=[Order.State.READY, Order.State.PARTIALLY_READY])
    expired = live.filter(expires_at__lte=now).update(state=Order.State.EXPIRED, updated_at=now)
    warn_by = now + timedelta(hours=settings.GRANARY_ORDER_EXPIRY_WARNING_H)
    for order in live.filter(expiry_warned=False, expires_at__gt=now, expires_at__lte=warn_by):
        _notify(order.user, f"Granary order {order.pk} expires soon",
                f"Your order {order.pk} can be downloaded until {order.expires_at:%Y-%m-%d %H:%M}"
                f" UTC.\nLinks: {_site()}api/v1/orders/{order.pk}/links/\n")
        Order.objects.filter(pk=order.pk).update(expiry_warned=True)
    return {"items": len(items), "orders": expired}


def sweep():
    """Beat: re-check staging orders, re-kick pushes and pending subscription deliveries."""
    for order_id in Order.objects.filter(
            state__in=[Order.State.SUBMITTED, Order.State.STAGING]).values_list("pk", flat=True):
        try:
            refresh_order(order_id)
        except Exception:
            log.exception("refreshing order %s", order_id)
    pushes = (OrderItem.objects.filter(order__delivery=Delivery.PUSH, state=OrderItem.State.READY,
                                       pushed_at__isnull=True,
                                       order__push_attempts__lt=settings.GRANARY_PUSH_MAX_ATTEMPTS)
              .values_list("order_id", flat=True).distinct())
    for order_id in pushes:
        try:
            push_order(order_id)
        except Exception:
            log.exception("pushing order %s", order_id)
    for delivery_id in SubscriptionDelivery.objects.filter(
            state=SubscriptionDelivery.State.PENDING).values_list("pk", flat=True):
        try:
            deliver(delivery_id)
        except Exception:
            log.exception("subscription delivery %s", delivery_id)


# ---------------------------------------------------------------------------------------------
# Signed links and downloads


def sign(file_id, order_id, expires):
    return _signer.signature(f"{file_id}:{order_id}:{int(expires)}")


def download_url(item, site=None):
    expires = int(item.expires_at.timestamp())
    return (f"{_site(site)}api/v1/files/{item.file_id}/download?order={item.order_id}"
            f"&expires={expires}&sig={sign(item.file_id, item.order_id, expires)}")


def _site(site=None):
    """The site's base URL: the request's when there is one, else the configured one."""
    return (site or settings.GRANARY_SITE_URL).rstrip("/") + "/"


def links(order, site=None):
    """Ready items with their signed URL; failed and waiting ones listed beside them."""
    items = order.items.select_related("file", "granule__collection")
    ready, failed, waiting = [], [], []
    for item in items:
        row = {"item": item.pk, "file_id": item.file_id, "granule": str(item.granule),
               "name": item.file.name, "size": item.file.size,
               "checksum_type": item.file.checksum_type, "checksum": item.file.checksum}
        if item.state == OrderItem.State.READY and order.state not in (Order.State.CANCELLED,
                                                                       Order.State.EXPIRED):
            ready.append({**row, "url": download_url(item, site), "expires_at": item.expires_at})
        elif item.state == OrderItem.State.FAILED:
            failed.append({**row, "error": item.error})
        elif item.state == OrderItem.State.WAITING:
            waiting.append({**row, "eta_s": item.eta_s})
    return {"order": order.pk, "state": order.state, "expires_at": order.expires_at,
            "links": ready, "failed": failed, "waiting": waiting}


def download_script(order, site=None):
    """A bash script that fetches every ready file with curl, resumes, checks checksums and
    carries on past a failed file (one bad file must not stall the rest: the ESPA lesson)."""
    listing = links(order, site)
    tools = {"MD5": "md5sum", "SHA256": "sha256sum"}
    lines = [
        "#!/usr/bin/env bash",
        f"# Granary order {order.pk}: {len(listing['links'])} files, links valid until "
        f"{order.expires_at:%Y-%m-%d %H:%M} UTC." if order.expires_at else
        f"# Granary order {order.pk}: {len(listing['links'])} files.",
        "set -u",
        "failed=0",
        "fetch() {  # url name checksum-tool checksum",
        '  if ! curl --fail --location --retry 3 --continue-at - --output "$2" "$1"; then',
        '    echo "FAILED: $2" >&2; failed=$((failed + 1)); return',
        "  fi",
        '  if [ -n "$3" ] && ! echo "$4  $2" | "$3" --check --quiet -; then',
        '    echo "CHECKSUM MISMATCH: $2" >&2; failed=$((failed + 1))',
        "  fi",
        "}",
    ]
    for row in listing["links"]:
        tool = tools.get(row["checksum_type"], "")
        checksum = row["checksum"] if tool else ""
        lines.append(f"fetch '{row['url']}' '{_shell_safe(row['name'])}' '{tool}' '{checksum}'")
    for row in listing["failed"]:
        lines.append(f"echo 'not available: {_shell_safe(row['name'])}' >&2")
    lines += ['echo "done; $failed failed"', '[ "$failed" -eq 0 ]', ""]
    return "\n".join(lines)


def _shell_safe(name):
    return name.replace("'", "")


@dataclass
class Download:
    file: File
    item: OrderItem | None


def authorize_download(user, file_id, params):
    """The file to send: by a signed link (any client), else to a user who may see it."""
    if params.get("sig") is not None:
        return _authorize_signed(file_id, params)
    file = File.objects.select_related("granule__collection").filter(pk=file_id).first()
    # Browse images are shown to every visitor who may see the granule, logged in or not.
    browse = file is not None and file.role == File.Role.BROWSE
    if not user.is_authenticated and not browse:
        raise Forbidden("Log in, or use the signed link of an order, to download.")
    if file is None or not visible_granules(user).filter(pk=file.granule_id).exists():
        raise Forbidden("You may not download this file.")
    return Download(file, None)


def _authorize_signed(file_id, params):
    """A signed link names its order and file: one query reads the item, its order and file."""
    try:
        order_id, expires = int(params.get("order", "")), int(params.get("expires", ""))
    except ValueError as exc:
        raise Forbidden("This download link is malformed.") from exc
    if not constant_time_compare(params["sig"], sign(file_id, order_id, expires)):
        raise Forbidden("This download link's signature is not valid.")
    if expires < timezone.now().timestamp():
        raise Gone("This download link has expired; order the granule again.")
    item = (OrderItem.objects.select_related("order", "file__granule__collection")
            .filter(order_id=order_id, file_id=file_id).first())
    if item is None:
        raise Forbidden("This download link's signature is not valid.")
    if item.state in (OrderItem.State.EXPIRED, OrderItem.State.CANCELLED) or \
            item.order.state in (Order.State.CANCELLED, Order.State.EXPIRED):
        raise Gone(f"Order {order_id} is {item.order.state}; its links no longer work.")
    if item.state != OrderItem.State.READY:
        raise Conflict(f"{item.file.name} is not ready yet.")
    return Download(item.file, item)


def open_download(download, range_header, sock=None):
    """(body, span): the bytes to send (a DownloadBody, which records the transfer when it
    is closed), span (start, end) for a range or None for all. `sock`, the client's socket
    where the server tells it, lets a large download leave the page cache behind it (see
    streaming).

    The cached file is sent as it is, not hashed again first: its checksum was checked when
    it entered the cache (ingest validation, or the recall that read it from tape), the
    fixity audit re-reads copies, and the client checks the whole file by its Digest. A hash
    pass per download would cap every download at the hash rate (MD5 runs at a third of the
    disk's speed here) and read each file twice; re-hashing for every range would make
    resumable downloads quadratic.
    """
    from .matching import RangeNotSatisfiable, parse_range

    file = download.file
    try:
        span = parse_range(range_header, file.size)
    except RangeNotSatisfiable as exc:
        raise RangeError(file.size) from exc
    try:
        handle = _open_cached(file)
    except archive.ArchiveError as exc:
        if download.item is not None:
            OrderItem.objects.filter(pk=download.item.pk).update(
                state=OrderItem.State.WAITING, in_cache=False)
            Order.objects.filter(pk=download.item.order_id).update(state=Order.State.STAGING)
            _kick(download.item.order_id)
            raise Unavailable(f"{file.name} left the cache; it is being recalled.") from exc
        raise Conflict(f"{file.name} is on tape only; order it to have it recalled.") from exc
    start, end = span if span else (0, file.size - 1)
    body = DownloadBody(handle, download, start, end)
    if sock is not None and streaming.streams_through(end + 1 - start,
                                                      settings.GRANARY_DROP_BEHIND_BYTES):
        body.followed = streaming.drop_behind.follow(handle.fileno(), sock, start, end)
    return body, span


class RangeError(DistributionError):
    status = 416

    def __init__(self, size):
        super().__init__(f"The range asked for lies beyond the file's {size} bytes.")
        self.size = size


def _open_cached(file):
    path = archive.cache_path(file)
    if not archive.touch_if_cached(file) or not path.exists():
        raise archive.ArchiveError(f"{file.name} is not in the cache")
    return open(path, "rb")


class DownloadBody:
    """Bytes start..end of an open file, as a file object: a WSGI server with a file wrapper
    (gunicorn) sends it with sendfile(2), from the page cache to the socket without copies
    through Python; other servers read it in CHUNK blocks. Never read whole into memory.

    Closing it records the transfer, counting the bytes that left: reads advance the
    position, and socket.sendfile() seeks past what it sent, also when the client goes away.
    """

    def __init__(self, handle, download, start, end):
        self.handle, self.download, self.start, self.end = handle, download, start, end
        self.started, self.closed, self.followed = timezone.now(), False, None
        self.position = handle.seek(start)

    def fileno(self):
        return self.handle.fileno()

    def read(self, size=-1):
        left = self.end + 1 - self.position
        size = left if size is None or size < 0 else min(size, left)
        block = self.handle.read(size) if size > 0 else b""
        self.position += len(block)
        return block

    def seek(self, offset, whence=os.SEEK_SET):
        self.position = self.handle.seek(offset, whence)
        return self.position

    def seekable(self):
        """No: Django's FileResponse would otherwise measure the body by reading it all (the
        view sets Content-Length itself)."""
        return False

    def close(self):
        if self.closed:
            return
        self.closed = True
        sent = max(0, min(self.position, self.end + 1) - self.start)
        if self.followed is not None:
            streaming.drop_behind.forget(self.followed, finished=self.start + sent > self.end)
        self.handle.close()
        _downloaded(self.download, sent, self.started,
                    self.start + sent >= self.download.file.size)


def _downloaded(download, sent, started, to_the_end):
    if sent:
        record_transfer(TransferRecord.Direction.DISTRIBUTION, sent, started, timezone.now(),
                        download.file.granule.collection)
    item = download.item
    if item is None or not to_the_end:
        return
    OrderItem.objects.filter(pk=item.pk, downloaded_at__isnull=True).update(
        downloaded_at=timezone.now())
    order = item.order
    if (order.subscription_id is None and order.delivery == Delivery.HTTPS
            and order.state in (Order.State.READY, Order.State.PARTIALLY_READY)
            and not order.items.filter(state=OrderItem.State.READY,
                                       downloaded_at__isnull=True).exists()):
        Order.objects.filter(pk=order.pk, state=order.state).update(
            state=Order.State.COMPLETED, updated_at=timezone.now())


def digest_headers(file):
    """Checksum headers: RFC 3230 `Digest` where the type has a name there, and X-Checksum-*."""
    import base64

    kind = checksums.normalise(file.checksum_type)
    headers = {f"X-Checksum-{kind.capitalize()}": file.checksum}
    names = {"MD5": "md5", "SHA256": "sha-256"}
    if kind in names:
        raw = base64.b64encode(bytes.fromhex(file.checksum)).decode()
        headers["Digest"] = f"{names[kind]}={raw}"
    elif kind == "ADLER32":
        headers["Digest"] = f"adler32={file.checksum}"
    return headers


# ---------------------------------------------------------------------------------------------
# Push delivery


def destination_root(destination):
    relative = destination.path or f"{destination.user.username}/{destination.name}"
    return Path(settings.OUTBOX_ROOT) / relative


def destination_location(destination):
    """Where a destination's deliveries go, as users read it."""
    if destination.kind == Destination.Kind.SFTP:
        return targets.sftp_location(destination.host, destination.port, destination.username,
                                     destination.path or ".")
    return str(destination_root(destination))


def check_destination_path(path):
    """A destination folder must stay inside the outbox."""
    parts = PurePosixPath(path or "").parts
    if path and (PurePosixPath(path).is_absolute() or ".." in parts):
        raise DistributionError("path must be a relative folder inside the outbox, without '..'.",
                                "path")
    return path or ""


SFTP_FIELDS = ("host", "username", "host_key")
DESTINATION_FIELDS = ("kind", "path", "port", *SFTP_FIELDS)
_HOST_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST_NAME = re.compile(rf"{_HOST_LABEL}(?:\.{_HOST_LABEL})*\.?")


def clean_destination(fields, given):
    """The stored form of a destination's fields (`fields`: the current ones updated with the
    request's, `given`), or a DistributionError naming the field at fault."""
    kind = fields.get("kind") or Destination.Kind.FOLDER
    if kind == Destination.Kind.FOLDER:
        stray = [f for f in SFTP_FIELDS if given.get(f)]
        if stray:
            raise DistributionError(f"Only SFTP destinations have a {stray[0]}; set kind to "
                                    "sftp.", stray[0])
        return {"kind": kind, "path": check_destination_path(fields.get("path")), "host": "",
                "port": 22, "username": "", "host_key": ""}
    try:
        host_key = HostKey.parse(fields.get("host_key")).text
    except HostKeyError as exc:
        raise DistributionError(str(exc), "host_key") from exc
    return {"kind": kind, "path": _check_remote_path(fields.get("path")),
            "host": _check_host(fields.get("host")), "port": fields.get("port") or 22,
            "username": _check_username(fields.get("username")), "host_key": host_key}


def _check_host(value):
    host = (value or "").strip()
    if not host:
        raise DistributionError("An SFTP destination needs the server's host name or address.",
                                "host")
    try:
        return str(ipaddress.ip_address(host.removeprefix("[").removesuffix("]")))
    except ValueError:
        pass
    if "@" in host:
        raise DistributionError("Give the host alone here and the user in username.", "host")
    if ":" in host:
        raise DistributionError("Give the host alone here and the port in port.", "host")
    if len(host) > 253 or not _HOST_NAME.fullmatch(host):
        raise DistributionError(f"{host!r} is not a host name or IP address.", "host")
    return host


def _check_username(value):
    username = (value or "").strip()
    if not username:
        raise DistributionError("An SFTP destination needs the user Granary logs in as.",
                                "username")
    if any(c.isspace() or not c.isprintable() or c in "@:/" for c in username):
        raise DistributionError(f"{username!r} is not a user name.", "username")
    return username


def _check_remote_path(value):
    path = (value or "").strip()
    if any(not c.isprintable() for c in path):
        raise DistributionError("path holds a control character.", "path")
    return path


def host_key_fingerprint(destination):
    return HostKey.parse(destination.host_key).fingerprint if destination.host_key else ""


def sftp_key():
    """Granary's public key for users' authorized_keys (made on first use)."""
    return targets.granary_public_key()


def push_target(destination, folder):
    """The target a push into `folder` of `destination` writes to (not yet connected)."""
    if destination.kind == Destination.Kind.SFTP:
        return SftpTarget(
            host=destination.host, port=destination.port, username=destination.username,
            host_key=HostKey.parse(destination.host_key),
            root=PurePosixPath(destination.path or ".") / folder,
            timeout=settings.GRANARY_SFTP_TIMEOUT_S)
    return FolderTarget(destination_root(destination) / folder)


def push_order(order_id):
    """Copy the ready, not yet pushed files of a push order into its destination (a folder or
    an SFTP server: the same flow for both), verify each copy, and rewrite the manifest.
    Idempotent: pushed items are skipped."""
    order = Order.objects.select_related("destination__user", "user").filter(pk=order_id).first()
    if order is None or order.delivery != Delivery.PUSH or order.state in (
            Order.State.CANCELLED, Order.State.EXPIRED):
        return 0
    target = push_target(order.destination, f"subscription-{order.subscription_id}"
                         if order.subscription_id else f"order-{order.pk}")
    items = list(order.items.filter(state=OrderItem.State.READY, pushed_at__isnull=True)
                 .select_related("file__granule__collection"))
    pushed = 0
    try:
        with target:
            for item in items:
                _push_file(target, item)
                pushed += 1
            _write_manifest(target, order)
    except (OSError, archive.ArchiveError, PushError) as exc:
        _push_failed(order, exc)
        raise PushError(str(exc)) from exc
    Order.objects.filter(pk=order.pk).update(push_attempts=0, error="")
    if order.subscription_id is None and not order.items.filter(
            Q(state=OrderItem.State.WAITING)
            | Q(state=OrderItem.State.READY, pushed_at__isnull=True)).exists():
        Order.objects.filter(pk=order.pk, state__in=[Order.State.READY,
                                                     Order.State.PARTIALLY_READY]).update(
            state=Order.State.COMPLETED, updated_at=timezone.now())
    if pushed:
        _notify(order.user, f"Granary order {order.pk}: {pushed} files delivered",
                f"{pushed} files were copied into {target.label} with manifest.json and a "
                "checksum list.\n")
    return pushed


def _push_file(target, item):
    """Send one file, hashing its bytes as they are read from the cache (one read): the copy
    is good when the size the target holds and the checksum of what was sent are the
    catalog's."""
    file = item.file
    started = timezone.now()
    digest = checksums.hasher(file.checksum_type)

    def hashed(source):
        while block := source.read(CHUNK):
            digest.update(block)
            yield block

    with _open_cached(file) as source:
        _place(target, f"{file.granule.granule_id}/{file.name}", hashed(source), file.size,
               lambda: checksums.same(file.checksum_type, digest.hexdigest(), file.checksum))
    record_transfer(TransferRecord.Direction.DISTRIBUTION, file.size, started, timezone.now(),
                    file.granule.collection)
    OrderItem.objects.filter(pk=item.pk).update(pushed_at=timezone.now())


def _place(target, path, blocks, size, checksum_ok=lambda: True):
    """Write `blocks` as <path>.partial and rename it to `path` only once the target holds
    `size` bytes and checksum_ok(): nothing stands under its final name unless it is whole."""
    partial = f"{path}.partial"
    target.write(partial, blocks)
    held = target.size(partial)
    problem = None
    if held != size:
        problem = f"{held} of {size} bytes arrived"
    elif not checksum_ok():
        problem = "the bytes read from the cache fail its catalog checksum"
    if problem:
        target.remove(partial)
        raise PushError(f"the copy of {path} is not whole: {problem}")
    target.replace(partial, path)


def _write_manifest(target, order):
    pushed = (order.items.filter(pushed_at__isnull=False)
              .select_related("file__granule").order_by("granule_id", "file_id"))
    rows = [{"path": f"{i.file.granule.granule_id}/{i.file.name}", "size": i.file.size,
             "checksum_type": i.file.checksum_type, "checksum": i.file.checksum,
             "granule": str(i.granule)} for i in pushed]
    listing = {
        "manifest.json": json.dumps({"order": order.pk, "files": rows}, indent=1),
        "CHECKSUMS": "".join(f"{r['checksum_type']} {r['checksum']}  {r['path']}\n"
                             for r in rows),
    }
    for name, text in listing.items():
        data = text.encode()
        _place(target, name, [data], len(data))


def _push_failed(order, exc):
    attempts = order.push_attempts + 1
    Order.objects.filter(pk=order.pk).update(push_attempts=attempts, error=f"push: {exc}")
    if attempts >= settings.GRANARY_PUSH_MAX_ATTEMPTS:
        with transaction.atomic():
            order.items.filter(state=OrderItem.State.READY, pushed_at__isnull=True).update(
                state=OrderItem.State.FAILED, error=f"push failed {attempts} times: {exc}")
            _settle(Order.objects.select_for_update().get(pk=order.pk), timezone.now())


# ---------------------------------------------------------------------------------------------
# Subscriptions


def _check_visible(user, collections):
    hidden = [c.key for c in collections if not visible_collections(user).filter(
        pk=c.pk).exists()]
    if hidden:
        raise Forbidden(f"Collection {', '.join(hidden)} is restricted and you are not approved "
                        "to subscribe to it.")


def save_subscription(user, subscription, collections):
    """Store a validated subscription and its collection index rows."""
    _check_visible(user, collections)
    if subscription.mode == Subscription.Mode.PUSH and subscription.destination is None:
        raise DistributionError("A push subscription needs a destination.", "destination")
    with transaction.atomic():
        subscription.user = user
        subscription.save()
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
                delivery=_order_delivery(subscription), destination=subscription.destination)
    return subscription


INDEXED_FIELDS = ("active", "west", "south", "east", "north", "temporal_start", "temporal_end",
                  "conditions", "new_versions")


def subscription_index(subscription):
    """The fields of a subscription its SubscriptionCollection rows carry for matching."""
    return {name: getattr(subscription, name) for name in INDEXED_FIELDS}


def delete_subscription(subscription):
    """Delete a subscription with its standing order, letting the cache purge its files."""
    with transaction.atomic():
        order = Order.objects.filter(subscription=subscription).first()
        if order is not None:
            _release_cache(list(order.items.filter(state=OrderItem.State.READY)))
        subscription.delete()


def subscriptions_of(user):
    qs = Subscription.objects.select_related("user", "destination").prefetch_related(
        "collections")
    return qs if roles.is_operator(user) else qs.filter(user=user)


def matching_subscriptions(granule):
    """Ids of the active subscriptions whose filter holds for `granule` (for a new version of
    a reprocessed granule, of those that asked for new versions).

    Candidates are the index rows of the granule's collection (SubscriptionCollection, by
    its partial indexes: rows without a box, and boxed rows by latitude), footprint and
    window are tested on them in SQL, and only the attribute conditions of what is left are
    checked here, on plain rows. The SQL is written out once per shape rather than built
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
    # conditions as text: most subscriptions have none, and those need no decoding
    return [pk for pk, text in rows
            if text == "[]" or attributes_match(stored_conditions(text), attributes)]


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
    return (f"SELECT subscription_id, CAST(conditions AS TEXT) FROM {table} "
            f"WHERE {' AND '.join(where)}")


def on_file_recalled(sender, file_id, **kwargs):
    """Receiver of archive.signals.file_recalled: the orders waiting for that file are
    refreshed now rather than at the next sweep. Never raises into the storage manager."""
    try:
        for order_id in (OrderItem.objects.filter(
                file_id=file_id, order__state__in=[Order.State.SUBMITTED, Order.State.STAGING])
                .values_list("order_id", flat=True).distinct()):
            _kick(order_id)
    except Exception:
        log.exception("queueing the refresh of orders waiting for file %s", file_id)


def on_granules_archived(sender, granules, **kwargs):
    """Receiver of archive.signals.granules_archived: hand the matching of a batch archived
    together to a worker as one message (a message per granule cost the storage manager more
    than the writes). It never raises into the storage manager; the sweep of pending
    deliveries covers a lost message."""
    try:
        from .tasks import match_granules

        match_granules.delay_on_commit([g.pk for g in granules])
    except Exception:
        log.exception("queueing subscription matching for %d granules", len(granules))


def match_granules(granule_ids):
    """match_granule for each of a batch; the deliveries made."""
    return sum(match_granule(pk) for pk in granule_ids)


def match_granule(granule_id):
    """Record and make the deliveries of an archived granule (re-running adds none)."""
    granule = Granule.objects.select_related("collection").filter(pk=granule_id).first()
    if granule is None or granule.state != Granule.State.ARCHIVED:
        return 0
    return sum(_deliver_once(pk, granule) for pk in matching_subscriptions(granule))


def _deliver_once(subscription_id, granule):
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
    granules = archived_candidates(
        subscription.collections.all(), since, bbox=subscription.bbox,
        start=subscription.temporal_start, end=subscription.temporal_end,
        new_versions=subscription.new_versions)
    made = 0
    for granule in granules.select_related("collection").iterator(chunk_size=500):
        if attributes_match(subscription.conditions, granule.attributes):
            made += _deliver_once(subscription.pk, granule)
    return made


def archived_candidates(collections, since, *, bbox=None, start=None, end=None,
                        new_versions=True):
    """Granules archived since `since` that a filter's collections, box and window select, by
    the catalog's indexed queries; the caller checks the attribute conditions on what is left."""
    granules = Granule.objects.filter(
        state=Granule.State.ARCHIVED, archived_at__gte=since, collection__in=collections,
    ).filter(temporal_q(start, end))
    if bbox:
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


def preview_subscription(user, collections, *, bbox=None, start=None, end=None, conditions=(),
                         new_versions=False, days=30):
    """How many granules archived in the last `days` days a filter matches, and the newest few:
    the query "apply since" delivers from, so the preview promises what a subscription sends."""
    _check_visible(user, collections)
    since = timezone.now() - timedelta(days=days)
    granules = archived_candidates(collections, since, bbox=bbox, start=start, end=end,
                                   new_versions=new_versions).order_by("-archived_at", "-id")
    if conditions:
        count, newest = 0, []
        rows = granules.values_list("pk", "attributes").iterator(chunk_size=2000)
        for pk, attributes in rows:
            if attributes_match(conditions, attributes):
                count += 1
                if len(newest) < PREVIEW_SAMPLE:
                    newest.append(pk)
        sample = granules.filter(pk__in=newest)
    else:
        count, sample = granules.count(), granules[:PREVIEW_SAMPLE]
    return Preview(count=count, days=days, since=since,
                   sample=list(sample.select_related("collection")))


def _order_delivery(subscription):
    return Delivery.PUSH if subscription.mode == Subscription.Mode.PUSH else Delivery.HTTPS


def standing_order(subscription):
    order, _ = Order.objects.get_or_create(
        subscription=subscription,
        defaults={"user": subscription.user, "delivery": _order_delivery(subscription),
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
            body = f"{text}\nSTAC item: {_site()}stac/collections/{granule.collection.key}" \
                   f"/items/{granule.granule_id}\n"
        else:
            order = standing_order(subscription)
            _add_items(order, [granule])
            Order.objects.filter(pk=order.pk).update(
                total_bytes=order.items.aggregate(t=Sum("file__size"))["t"] or 0)
            _kick(order.pk)
            delivery.detail = f"added to order {order.pk}"
            body = (f"{text}\nIt was added to your standing order {order.pk}: "
                    f"{_site()}api/v1/orders/{order.pk}/links/\n")
        _notify(subscription.user, f"Granary subscription {subscription}: {granule}", body,
                fail_silently=False)
        delivery.state, delivery.delivered_at = SubscriptionDelivery.State.DELIVERED, now
        delivery.save(update_fields=["state", "detail", "attempts", "delivered_at"])
    return True


# ---------------------------------------------------------------------------------------------
# Notifications


def _notify(user, subject, body, fail_silently=True):
    if not user.email:
        return 0
    return send_mail(subject, body, None, [user.email], fail_silently=fail_silently)


def _notify_order(order):
    if order.subscription_id:
        return
    listing = links(order)
    subject = {
        Order.State.READY: f"Granary order {order.pk} is ready",
        Order.State.PARTIALLY_READY: f"Granary order {order.pk} is ready in part",
        Order.State.FAILED: f"Granary order {order.pk} failed",
    }[order.state]
    lines = [subject + "."]
    if listing["links"]:
        how = ("They are being copied into your destination." if order.delivery == Delivery.PUSH
               else f"Download them by {order.expires_at:%Y-%m-%d %H:%M} UTC: "
                    f"{_site()}api/v1/orders/{order.pk}/script/")
        lines.append(f"{len(listing['links'])} files are ready. {how}")
    for row in listing["failed"]:
        lines.append(f"Not available: {row['name']}: {row['error']}")
    transaction.on_commit(lambda: _notify(order.user, subject, "\n".join(lines) + "\n"))


def collection_by_key(user, key):
    try:
        return Collection.objects.get_by_key(key)
    except Collection.DoesNotExist as exc:
        raise DistributionError(str(exc), "collections") from exc
