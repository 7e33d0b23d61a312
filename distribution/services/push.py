"""Push delivery: the ready files of an order copied into its destination, each verified,
with a manifest and a checksum list beside them."""
import json
from contextlib import closing
from pathlib import PurePosixPath

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from backend.archive import services as archive
from backend.metrics.models import TransferRecord
from backend.metrics.services import record_transfer

from ..models import Delivery, Destination, Order, OrderItem, Served
from ..targets import FolderTarget, HostKey, PushError, SftpTarget
from .destinations import destination_root, outbox_root
from .downloads import CHUNK, back_to_waiting
from .notify import order_event
from .orders import delivered, settle
from .transforms import open_output


def push_target(destination, folder):
    """The target a push into `folder` of `destination` writes to (not yet connected)."""
    if destination.kind == Destination.Kind.SFTP:
        return SftpTarget(
            host=destination.host, port=destination.port, username=destination.username,
            host_key=HostKey.parse(destination.host_key),
            root=PurePosixPath(destination.path or ".") / folder,
            timeout=settings.GRANARY_SFTP_TIMEOUT_S)
    return FolderTarget(destination_root(destination) / folder,
                        within=outbox_root(destination.user))


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
        with transaction.atomic():
            if Order.objects.filter(pk=order.pk, state__in=[
                    Order.State.READY, Order.State.PARTIALLY_READY]).update(
                    state=Order.State.COMPLETED, updated_at=timezone.now()):
                order_event(order, "order.completed")
    if pushed:
        order_event(order, "order.delivered", files=pushed,
                    destination=order.destination_id)
    return pushed


def _push_file(target, item):
    """Send one file, each block checked as it is read from the cache (archive.open_checked):
    the copy is good when the target holds the file's size. A file gone from the cache, or
    damaged there (found before or while it is sent: the partial copy is removed, the cached
    one dropped and recalled), fails this attempt with the reason and waits for its recall."""
    file, served = item.file, Served(item)
    started = timezone.now()
    path = f"{file.granule.granule_id}/{served.name}"
    try:
        if served.cut:      # a subset's output, from the order's folder
            source = open_output(item)
        else:
            source = archive.open_checked(file)
        with closing(source):
            _place(target, path, iter(lambda: source.read(CHUNK), b""), served.size)
    except archive.ArchiveError as exc:
        if not served.cut:
            back_to_waiting(item)  # recalled, then pushed when ready again
        raise PushError(f"{path} was not sent: {exc}") from exc
    record_transfer(TransferRecord.Direction.DISTRIBUTION, served.size, started, timezone.now(),
                    file.granule.collection)
    OrderItem.objects.filter(pk=item.pk).update(pushed_at=timezone.now())
    delivered(item)


def _place(target, path, blocks, size):
    """Write `blocks` as <path>.partial and rename it to `path` only once the target holds
    `size` bytes: nothing stands under its final name unless it is whole. A source that fails
    while it is read leaves no partial behind."""
    partial = f"{path}.partial"
    try:
        target.write(partial, blocks)
    except archive.ArchiveError:
        target.remove(partial)
        raise
    held = target.size(partial)
    if held != size:
        target.remove(partial)
        raise PushError(f"the copy of {path} is not whole: {held} of {size} bytes arrived")
    target.replace(partial, path)


def _write_manifest(target, order):
    pushed = (order.items.filter(pushed_at__isnull=False)
              .select_related("file__granule").order_by("granule_id", "file_id"))
    rows = [{"path": f"{i.file.granule.granule_id}/{s.name}", "size": s.size,
             "checksum_type": s.checksum_type, "checksum": s.checksum,
             "granule": str(i.granule), **({"provenance": i.provenance} if s.cut else {})}
            for i, s in ((i, Served(i)) for i in pushed)]
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
            settle(Order.objects.select_for_update().get(pk=order.pk), timezone.now())
