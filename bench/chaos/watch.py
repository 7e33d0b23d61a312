"""What the run watches in the database: work done twice (sampled every few seconds, from a
thread of its own), whether the archive is quiet, and what is left stuck at the end. Every
query survives the database restarting under it."""
import threading
import time

from django.db import OperationalError, close_old_connections, connection
from django.db.models import Count, Exists, OuterRef, Q
from django.db.utils import InterfaceError

ACTIVE = ("queued", "running")
# A request's work: two active requests with the same key do the same thing twice.
WORK_KEYS = {"migrate": ("file_id", "copy_number"), "recall": ("file_id",),
             "audit": ("file_id", "copy_number", "volume_id"), "repack": ("volume_id",)}


def with_db(fn, patience_s=180):
    """fn() with the database possibly restarting: retry on a lost connection."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            return fn()
        except (OperationalError, InterfaceError):
            if time.monotonic() > deadline:
                raise
            connection.close()
            time.sleep(1)


def duplicated_work():
    """Keys of work seen twice right now: two active requests for one piece of work, or two
    rows that count (written or verified) for one segment of one copy of a file once no
    migration of that copy is under way. A copy being written again (repair, repack) keeps
    its old rows, by design, until the new copy is whole; they are released in the
    transaction that records its last segment. One statement, so a migration finishing
    between two reads is never taken for a duplicate."""
    from backend.archive.models import ArchiveRequest, FileCopy

    found = set()
    for kind, fields in WORK_KEYS.items():
        rows = (ArchiveRequest.objects.filter(kind=kind, state__in=ACTIVE).values(*fields)
                .annotate(n=Count("id")).filter(n__gt=1))
        found |= {(kind, *(row[f] for f in fields)) for row in rows}
    moving = ArchiveRequest.objects.filter(kind="migrate", state__in=ACTIVE,
                                           file_id=OuterRef("file_id"),
                                           copy_number=OuterRef("copy_number"))
    rows = (FileCopy.objects.filter(state__in=[FileCopy.State.WRITTEN, FileCopy.State.VERIFIED])
            .exclude(Exists(moving))
            .values("file_id", "copy_number", "file_offset").annotate(n=Count("id"))
            .filter(n__gt=1))
    found |= {("copy", r["file_id"], r["copy_number"], r["file_offset"]) for r in rows}
    return found


class Sampler(threading.Thread):
    """Samples duplicated work every `every` seconds until stopped; remembers every key seen."""

    def __init__(self, every=3.0):
        super().__init__(daemon=True, name="chaos-sampler")
        self.every, self.stopped = every, threading.Event()
        self.seen, self.samples, self.errors = {}, 0, 0

    def run(self):
        try:
            while not self.stopped.wait(self.every):
                try:
                    close_old_connections()
                    for key in duplicated_work():
                        self.seen.setdefault(key, time.time())
                    self.samples += 1
                except (OperationalError, InterfaceError):
                    self.errors += 1  # the database is restarting: the next sample sees it
                    connection.close()
        finally:
            connection.close()

    def stop(self):
        self.stopped.set()
        self.join()


def _unfinished_work():
    """{what: queryset} of work not in a final state: archive requests, ingest granules and
    requests, orders and their items still being staged."""
    from backend.archive.models import ArchiveRequest
    from distribution.models import Order, OrderItem
    from ingest.models import IngestGranule, IngestRequest

    return {
        "archive_requests": ArchiveRequest.objects.filter(state__in=ACTIVE),
        "ingest_granules": IngestGranule.objects.exclude(
            state__in=[IngestGranule.State.ARCHIVED, IngestGranule.State.FAILED]),
        "ingest_requests": IngestRequest.objects.filter(
            state__in=[IngestRequest.State.RECEIVED, IngestRequest.State.RUNNING]),
        "orders": Order.objects.filter(state__in=[Order.State.SUBMITTED, Order.State.STAGING]),
        "order_items": OrderItem.objects.filter(
            Q(state=OrderItem.State.WAITING)
            & ~Q(order__state__in=[Order.State.CANCELLED, Order.State.EXPIRED])),
    }


def unfinished():
    """{what: count} of the work not in a final state (_unfinished_work), the nonzero ones."""
    counts = {what: rows.count() for what, rows in _unfinished_work().items()}
    return {what: n for what, n in counts.items() if n}


def stuck_examples(limit=5, kinds=("archive_requests", "order_items", "undelivered_items")):
    """The first rows of unfinished archive requests and order items, every column of each (a
    value JSON lacks as text): what a failed run's verdict shows, so a stuck piece of work can
    be told from the log alone. With them the ready items not downloaded of orders still
    staging: what holds an order staged in parts back from its next part."""
    from distribution.models import Order, OrderItem

    work = {**_unfinished_work(), "undelivered_items": OrderItem.objects.filter(
        state=OrderItem.State.READY, downloaded_at__isnull=True,
        order__state__in=[Order.State.SUBMITTED, Order.State.STAGING])}
    out = {what: [{k: v if v is None or isinstance(v, bool | int | float | str) else str(v)
                   for k, v in row.items()}
                  for row in work[what].order_by("pk")[:limit].values()]
           for what in kinds}
    return {what: rows for what, rows in out.items() if rows}


def wait_quiet(timeout_s, settle_s=12.0, on_tick=None):
    """Wait until nothing is unfinished for `settle_s` on end (longer than a beat tick, so
    repairs the beat queues are seen); returns (quiet at (epoch s) or None, what remained)."""
    deadline = time.monotonic() + timeout_s
    quiet_since, left = None, {}
    while time.monotonic() < deadline:
        close_old_connections()
        left = with_db(unfinished)
        if left:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.time()
        elif time.time() - quiet_since >= settle_s:
            return quiet_since, {}
        if on_tick:
            on_tick()
        time.sleep(1)
    return None, left
