"""Downloads: who may fetch a file, and its bytes streamed from the cache as they are."""
import base64
import hashlib
import io
import logging
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from backend.archive import services as archive
from backend.catalog import checksums
from backend.catalog.models import File
from backend.catalog.retired import RETIRED, refuse_if_retired
from backend.catalog.services import visible_collections, visible_granules
from backend.errors import Conflict, DomainError, Forbidden, Gone, NotLoggedIn, Unavailable
from backend.metrics.models import TransferRecord
from backend.metrics.services import record_transfer

from .. import streaming
from ..matching import RangeNotSatisfiable, parse_range, range_validator_matches
from ..models import Delivery, Order, OrderItem, Served
from .notify import order_event
from .orders import delivered, queue_refresh
from .signed_links import sign
from .transforms import open_output

CHUNK = archive.CHECK_BLOCK   # a whole file is read in checked blocks of this size
RETRY_MIN_S, RETRY_MAX_S = 5, 600

_AGAIN = {"Retry-After": str(RETRY_MIN_S * 2)}

log = logging.getLogger(__name__)


class RangeError(DomainError):
    """A Range beyond the file: the 416 answer tells the client the file's size."""

    status = 416

    def __init__(self, size):
        super().__init__(f"The range asked for lies beyond the file's {size} bytes.",
                         headers={"Content-Range": f"bytes */{size}"})
        self.size = size


@dataclass
class Download:
    file: File
    item: OrderItem | None

    @property
    def served(self):
        """What is sent: the item's output when it was cut to a subset, else the file."""
        return Served(self.item) if self.item is not None else Served.of_file(self.file)


def authorize_download(user, file_id, params):
    """The file to send: by a signed link (any client), else to a user who may see it."""
    if params.get("sig") is not None:
        return _authorize_signed(file_id, params)
    file = File.objects.select_related("granule__collection").filter(pk=file_id).first()
    # Browse images are shown to every visitor who may see the granule, logged in or not.
    browse = file is not None and file.role == File.Role.BROWSE
    if file is not None and file.granule.state in RETIRED and (
            browse or user.is_authenticated) and visible_collections(user).filter(
            pk=file.granule.collection_id).exists():
        refuse_if_retired(file.granule)  # a 410 with the reason to whoever could see it
    visible = (browse or user.is_authenticated) and file is not None and \
        visible_granules(user).filter(pk=file.granule_id).exists()
    if not user.is_authenticated and not visible:
        raise NotLoggedIn("Log in, or use the signed link of an order, to download.")
    if not visible:
        raise Forbidden("You may not download this file.")
    return Download(file, None)


def _authorize_signed(file_id, params):
    """A signed link names its order and file: one query reads the item, its order and file.

    The link stays valid while its item is live (the database says so, not a time in the URL):
    a link handed out while the order was staging, or before its expiry moved, keeps working
    until the order expires, is cancelled or the item fails. A waiting item answers 503 with
    Retry-After (its recall's estimate), so a client polls the link itself; a failed one 410
    with the reason."""
    try:
        order_id = int(params.get("order", ""))
        expires = int(params["expires"]) if "expires" in params else None
    except ValueError as exc:
        raise Forbidden("This download link is malformed.") from exc
    if not constant_time_compare(params["sig"], sign(file_id, order_id, expires)):
        raise Forbidden("This download link's signature is not valid.")
    now = timezone.now()
    if expires is not None and expires < now.timestamp():
        raise Gone("This download link has expired; order the granule again.")
    item = (OrderItem.objects.select_related("order", "file__granule__collection")
            .filter(order_id=order_id, file_id=file_id).first())
    if item is None:
        raise Forbidden("This download link's signature is not valid.")
    refuse_if_retired(item.file.granule)
    if item.state in (OrderItem.State.EXPIRED, OrderItem.State.CANCELLED) or \
            item.order.state in (Order.State.CANCELLED, Order.State.EXPIRED) or \
            (item.state == OrderItem.State.READY and item.expires_at is not None
             and item.expires_at <= now):
        raise Gone(f"Order {order_id} is {item.order.state}; its links no longer work.")
    if item.state == OrderItem.State.FAILED:
        raise Gone(f"{item.file.name} cannot be delivered: {item.error or 'it failed'}.")
    if item.state == OrderItem.State.EMPTY:
        raise Gone(f"{item.file.name} has nothing inside the order's subset: {item.error}.")
    if item.state != OrderItem.State.READY:
        doing = ("being cut to the order's subset" if item.in_cache
                 else "being staged from tape")
        raise Unavailable(f"{item.file.name} is not ready yet: it is {doing}.",
                          headers={"Retry-After": str(retry_after(item.eta_s))})
    return Download(item.file, item)


def retry_after(eta_s):
    """Seconds a client should wait before asking again for a file still being staged: its
    recall's estimate, at least RETRY_MIN_S (no tight polling) and at most RETRY_MAX_S (an
    estimate may be long, and the file may come sooner)."""
    if eta_s is None:
        return RETRY_MIN_S * 2
    return int(min(max(eta_s, RETRY_MIN_S), RETRY_MAX_S))


def etag(file):
    """The file's strong entity tag: it changes whenever the catalog's bytes of the file do
    (its checksum names them), so a client resuming with If-Range never splices two files.
    `file` is a catalog File or what an item serves (transforms.Served)."""
    seed = f"{file.pk}:{file.checksum_type}:{file.checksum}".lower()
    return '"' + hashlib.sha256(seed.encode()).hexdigest()[:32] + '"'


def open_download(download, range_header, sock=None, if_range=None):
    """(body, span): the bytes to send (a DownloadBody, which records the transfer when it
    is closed), span (start, end) for a range or None for all; a Range under an If-Range that
    is not the file's entity tag is ignored (see matching). `sock`, the client's socket
    where the server tells it, lets a large download leave the page cache behind it (see
    streaming).

    A whole file is checked block by block as it is sent (archive.open_checked): a block that
    fails cuts the response short (the client sees fewer bytes than Content-Length, never a
    whole wrong file), and the copy is dropped and recalled. A range is sent as it is (by
    sendfile) from a file read in full and matched to the catalog within
    GRANARY_CACHE_SCRUB_S, which the cache scrub keeps; an older one is hashed first.
    Re-hashing the whole file for every range would make resumable downloads quadratic.
    """
    file = download.file
    served = download.served
    if not range_validator_matches(if_range, etag(served)):
        range_header = None
    try:
        span = parse_range(range_header, served.size)
    except RangeNotSatisfiable as exc:
        raise RangeError(served.size) from exc
    start, end = span if span else (0, served.size - 1)
    if served.cut:
        return _open_output(download, start, end, span), span
    try:
        handle = (archive.open_for_serving(file, settings.GRANARY_CACHE_SCRUB_S) if span
                  else archive.open_checked(file))
    except archive.CacheDamaged as exc:
        if download.item is not None:
            back_to_waiting(download.item)
        raise Unavailable(str(exc), headers=_AGAIN) from exc
    except archive.ArchiveError as exc:
        if download.item is not None:
            back_to_waiting(download.item)
            raise Unavailable(f"{file.name} left the cache; it is being recalled.",
                              headers=_AGAIN) from exc
        body = DownloadBody(_not_cached(file, start, end), download, start, end,
                            ranged=span is not None)
        return body, span
    body = DownloadBody(handle, download, start, end, ranged=span is not None)
    if span is None and streaming.can_send_directly(sock):
        body.sock = sock
    if sock is not None and streaming.streams_through(end + 1 - start,
                                                      settings.GRANARY_DROP_BEHIND_BYTES):
        body.followed = streaming.drop_behind.follow(handle.fileno(), sock, start, end)
    return body, span


def _open_output(download, start, end, span):
    """A subset's output from the order's folder, sent by sendfile(2) (its size is checked
    before: one lost or cut short is cut again, and the client told to come back)."""
    try:
        handle = open_output(download.item)
    except archive.ArchiveError as exc:
        raise Unavailable(str(exc), headers=_AGAIN) from exc
    return DownloadBody(handle, download, start, end, ranged=True, whole=span is None)


def _not_cached(file, start, end):
    """A direct download of a file not in the cache: from its object copy (no recall needed),
    else a 409 that says to order it. A browse image (shown on every granule page, so kept in
    the cache: see the archive's purge) that left the cache anyway is recalled meanwhile."""
    try:
        reader = archive.open_object_for_serving(file, start, end)
    except archive.ArchiveError as exc:
        raise Unavailable(str(exc), headers=_AGAIN) from exc
    if reader is not None:
        return reader
    if file.role == File.Role.BROWSE:
        wait = archive.make_available([file])[0]
        if wait.error:
            raise Conflict(f"The browse image {file.name} cannot be shown: {wait.error}.")
        raise Unavailable(f"The browse image {file.name} is being brought back from tape.",
                          headers={"Retry-After": str(retry_after(wait.eta_s))})
    raise Conflict(f"{file.name} is on tape only; order it to have it recalled.")


def back_to_waiting(item):
    """An order item whose file left the cache (or whose cached copy was damaged) waits for
    its recall again; the order's refresh asks for it afresh, within the order's share of
    the cache. One transaction: nobody (the beat's sweep included, which refreshes staging
    orders only) sees the item waiting in an order still marked ready. Only a ready item goes
    back: one the refresh failed meanwhile keeps its reason."""
    with transaction.atomic():
        moved = OrderItem.objects.filter(pk=item.pk, state=OrderItem.State.READY).update(
            state=OrderItem.State.WAITING, in_cache=False, recall_request_id=None)
        if moved:
            Order.objects.filter(pk=item.order_id).update(state=Order.State.STAGING)
            queue_refresh(item.order_id)


class DownloadBody:
    """Bytes start..end of an open file, as a file object. A range: a WSGI server with a file
    wrapper (gunicorn) sends it with sendfile(2), from the page cache to the socket without
    copies through Python. A whole file (a CheckedReader) has no fileno: given gunicorn's
    socket (`sock`), the view iterates it, and each block goes by sendfile(2) once checked;
    other servers read it in checked blocks. A block that fails its check raises
    CacheDamaged, and the server cuts the connection. Never read whole into memory.

    Closing it records the transfer, counting the bytes that left: reads advance the
    position, and socket.sendfile() seeks past what it sent, also when the client goes away.
    """

    def __init__(self, handle, download, start, end, ranged=False, whole=None):
        self.handle, self.download, self.start, self.end = handle, download, start, end
        self.ranged = ranged
        self.whole = not ranged if whole is None else whole
        self.started, self.closed, self.followed, self.sock = timezone.now(), False, None, None
        self.served, self.marked = download.served, False
        self.position = handle.seek(start) if ranged else start

    def fileno(self):
        if not self.ranged:
            raise io.UnsupportedOperation("a whole file is read to be checked, not sent by fd")
        return self.handle.fileno()

    def read(self, size=-1):
        left = self.end + 1 - self.position
        size = left if size is None or size < 0 else min(size, left)
        with self._damage():
            block = self.handle.read(size) if size > 0 else b""
        self._before_it_leaves(self.position, len(block))
        self.position += len(block)
        return block

    def __iter__(self):
        """With `sock` (gunicorn's, see streaming.send_checked): the whole file, each block
        checked and then sent by sendfile(2) straight to the socket, the next one checked
        while it goes; yields nothing but lets the server send the headers first."""
        yield b""
        with self._damage():
            for offset, length in streaming.send_checked(self.sock, self.handle,
                                                         self._before_it_leaves):
                self.position = offset + length
                yield b""

    def _before_it_leaves(self, offset, length):
        """The block that ends the file is about to leave: its item is marked delivered first.
        Marked in close() only, a server killed or a database gone once the client had every
        byte lost the mark, and an order staged in parts waited for a delivery that had
        happened (its share of the cache held: the chaos run). A mark that fails raises here:
        the body is cut short and the client asks again."""
        if length and offset + length >= self.served.size:
            self._mark()

    def _mark(self):
        if not self.marked and self.download.item is not None:
            _mark_delivered(self.download.item)
            self.marked = True

    @contextmanager
    def _damage(self):
        try:
            yield
        except archive.CacheDamaged:
            if self.download.item is not None:
                back_to_waiting(self.download.item)
            raise

    def seek(self, offset, whence=os.SEEK_SET):
        if not self.ranged:     # socket.sendfile's fallback seeks to where it stopped
            if (offset, whence) != (self.position, os.SEEK_SET):
                raise io.UnsupportedOperation("a checked whole file is read in order")
            return self.position
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
        item = self.download.item
        size = self.served.size
        log.info("download of %s (file %s%s): bytes %d-%d of %d asked (%s), %d sent",
                 self.served.name, self.download.file.pk,
                 f", order {item.order_id}" if item else "", self.start, self.end,
                 size, "whole" if self.whole else "range", sent)
        if self.start + sent >= size:     # marked already, unless sent from fileno()
            _again_while_the_database_is_away(self._mark)
        if sent:
            _again_while_the_database_is_away(lambda: record_transfer(
                TransferRecord.Direction.DISTRIBUTION, sent, self.started, timezone.now(),
                self.download.file.granule.collection))


def _again_while_the_database_is_away(work, attempts=5):
    """Run `work` again while the database is unreachable (restarted, failed over), with a
    fresh connection each time, for about 15 s: what a finished download records must not be
    lost to an outage the client never saw."""
    for attempt in range(attempts):
        try:
            return work()
        except (OperationalError, InterfaceError):
            if attempt == attempts - 1:
                raise
            log.warning("the database is away; recording the download again", exc_info=True)
            connection.close()
            time.sleep(2 ** attempt)


def _mark_delivered(item):
    """The item's file was delivered in full: marked once, its cache released and the next
    part of an order staged in parts asked for, together; the order completed once every
    ready item was downloaded."""
    with transaction.atomic():
        if OrderItem.objects.filter(pk=item.pk, downloaded_at__isnull=True).update(
                downloaded_at=timezone.now()):
            delivered(item)
    order = item.order
    if (order.subscription_id is None and order.delivery == Delivery.HTTPS
            and order.state in (Order.State.READY, Order.State.PARTIALLY_READY)
            and not order.items.filter(state=OrderItem.State.READY,
                                       downloaded_at__isnull=True).exists()):
        with transaction.atomic():
            if Order.objects.filter(pk=order.pk, state=order.state).update(
                    state=Order.State.COMPLETED, updated_at=timezone.now()):
                order_event(order, "order.completed")


def digest_headers(file):
    """Checksum headers: RFC 3230 `Digest` where the type has a name there, and X-Checksum-*."""
    kind = checksums.normalise(file.checksum_type)
    headers = {f"X-Checksum-{kind.capitalize()}": file.checksum}
    names = {"MD5": "md5", "SHA256": "sha-256"}
    if kind in names:
        raw = base64.b64encode(bytes.fromhex(file.checksum)).decode()
        headers["Digest"] = f"{names[kind]}={raw}"
    elif kind == "ADLER32":
        headers["Digest"] = f"adler32={file.checksum}"
    return headers
