"""The object movers: migrations to buckets and recalls from them. An object store needs no
drive, mount or scheduler: a mover claims queued work under a lease, sends or fetches a few
objects at once, and records what it did in one transaction per batch, as a tape write does.

A failure of the store itself (unreachable, credentials refused, no such bucket) puts the
batch back uncharged with the store's reason and stops the mover until the next tick: nothing
fails for the store's outage, and nothing spins. A recall that finds its object missing or
changed marks that copy BAD (background repair rewrites it) and reads another copy: tape when
the file has one.
"""
import logging
import os
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from django.conf import settings
from django.utils import timezone

from backend.catalog import checksums
from backend.leases import Keeper, until
from backend.nudges import send

from ..media import CopyMissing, MediumError
from ..models import Bucket, FileCopy
from .arrivals import Arrivals
from .buckets import store_for
from .cache import reserve_cache
from .completeness import object_copy_for, readable_copies
from .damage import mark_bad
from .object_writes import migrate, record_sent, settle_failures
from .queueing import WAITING_FOR_CACHE, Req, claim_leased, requeue
from .recall import fail_unrecallable

log = logging.getLogger(__name__)


def queued_work():
    """Queued object work the movers can take now (a migration waiting for its recall cannot;
    a request without a file is none: a claim takes a file's work, and would leave it queued
    for the mover to find again and again)."""
    return (Req.objects.filter(state=Req.State.QUEUED, bucket__isnull=False,
                               file__isnull=False)
            .exclude(kind=Req.Kind.MIGRATE, error=WAITING_FOR_CACHE))


def run_object_movers(max_seconds=None):
    """Work queued object requests in this process until none is left, the store fails, or
    `max_seconds` (GRANARY_OBJECT_SLICE_S; 0: no limit) have passed: then the mover sends
    itself again behind the work queued meanwhile, so a worker's slots are not held from the
    drives' tasks. Returns how many requests were finished (a Celery task, and run_until_idle
    in tests and bench).

    Objects are sent while the next work is claimed: a batch's uploads run in the pool while
    the mover takes what was queued since, as long as the pool has a free thread, so files
    that reach the cache one by one (large granules, each checked by an ingest worker) go out
    side by side instead of waiting for the batch before them. Every database write stays in
    this thread; the pool's threads only move bytes."""
    limit = settings.GRANARY_OBJECT_SLICE_S if max_seconds is None else max_seconds
    started, finished, down = time.monotonic(), 0, set()
    # the lease on the batches a mover holds is renewed while it works, so a mover killed -9
    # frees its work soon and a long upload never outlives its lease
    keeper = Keeper(settings.GRANARY_OBJECT_LEASE_S, _renew, "object-lease")
    keeper.start()
    sending, out_of_time, took = [], False, False
    try:
        with _pool() as pool:
            try:
                while True:
                    for batch, on_way in [item for item in sending if item[1].done()]:
                        sending.remove((batch, on_way))
                        done, failed_buckets = _settled(batch, record_sent, on_way)
                        keeper.drop(r.pk for r in batch)
                        finished, down = finished + done, down | failed_buckets
                    # at least one batch per call, however short the slice
                    out_of_time = out_of_time or bool(
                        limit and took and time.monotonic() - started > limit)
                    busy = sum(len(on_way.pending()) for _, on_way in sending)
                    batch = ([] if out_of_time or busy >= settings.GRANARY_OBJECT_CONCURRENCY
                             else _claim(down))
                    if batch:
                        took = True
                        keeper.add(r.pk for r in batch)
                        done, failed_buckets, on_way = _settled(batch, _work, batch, pool)
                        finished, down = finished + done, down | failed_buckets
                        if on_way is not None:
                            sending.append((batch, on_way))
                        else:
                            keeper.drop(r.pk for r in batch)
                        continue
                    if not sending:
                        break
                    wait([f for _, on_way in sending for f in on_way.pending()],
                         timeout=0.5, return_when=FIRST_COMPLETED)
            except BaseException as exc:
                # what is still on its way goes back to the queue uncharged once its threads
                # are done (the pool's exit waits for them): nothing is left to a lease
                wait([f for _, on_way in sending for f in on_way.futures])
                for batch, _ in sending:
                    requeue(batch, f"the object mover stopped: {exc}"[:500], charge=False)
                raise
        if out_of_time and queued_work().exists():
            send("backend.archive.run_objects")
    finally:
        keeper.stop()
    return finished


def _claim(down):
    """A batch of queued object work claimed under a lease ([] when none is left); a bucket
    whose store failed as a whole waits, the others' work goes on."""
    while True:
        ids = _within_bytes(queued_work().exclude(bucket_id__in=down).order_by(
            "priority", "created_at").values_list("pk", "file__size")[:BATCH])
        if not ids:
            return []
        batch = claim_leased(ids, until(settings.GRANARY_OBJECT_LEASE_S))
        if batch:
            return batch
        # another mover took them: look again


def _settled(batch, step, *args):
    """Run step(*args) for a batch; a failure puts the batch back (charged) and is raised."""
    try:
        return step(*args)
    except Exception as exc:   # noqa: BLE001 - the batch must be left claimable
        log.exception("object mover failed")
        requeue(batch, f"the object mover failed: {exc}"[:500])
        raise


def _within_bytes(rows):
    """The ids of the first (id, size) rows holding at most BATCH_BYTES (the first always)."""
    ids, total = [], 0
    for pk, size in rows:
        total += size
        if ids and total > BATCH_BYTES:
            break
        ids.append(pk)
    return ids


# Requests claimed at once: large enough that a batch of small objects costs one claim and one
# recording transaction per thousand (against 256: 6 % less CPU a granule in bench
# ingest-small's object-store-first run), small enough that a lease keeper renews them in one
# statement. Its bytes are bounded too: a batch is recorded once every object of it is stored,
# so a batch of large files would keep its granules from ARCHIVED until the last was sent.
BATCH = 1024
BATCH_BYTES = 1 << 30


def _renew(ids):
    """Renew the rows no transaction holds: one the mover is recording is finished by it, and
    a keeper waiting on the mover's lock would hold up the mover's stop() (its join)."""
    free = list(Req.objects.select_for_update(skip_locked=True).filter(
        pk__in=ids, state=Req.State.RUNNING).values_list("pk", flat=True))
    Req.objects.filter(pk__in=free).update(
        lease_until=until(settings.GRANARY_OBJECT_LEASE_S))


def _work(batch, pool):
    """(requests finished, ids of the buckets whose store failed as a whole, the batch's
    migrations on their way or None): audits and recalls are done here, migrations are sent
    and recorded by record_sent once their objects are stored."""
    by_kind = {kind: [] for kind in (Req.Kind.MIGRATE, Req.Kind.RECALL, Req.Kind.AUDIT)}
    others = []
    for request in batch:
        by_kind.get(request.kind, others).append(request)
    migrations, recalls, audits = by_kind.values()
    if others:
        requeue(others, "not object-store work", charge=True)
    buckets = Bucket.objects.in_bulk({r.bucket_id for r in batch})
    done, down, on_way = 0, set(), None
    if audits:
        d, dn = _audit(audits, buckets, pool)
        done, down = done + d, down | dn
    if migrations:
        on_way = migrate(migrations, buckets, pool)
    if recalls:
        d, dn = _recall(recalls, buckets, pool)
        done, down = done + d, down | dn
    return done, down, on_way


def _pool():
    return ThreadPoolExecutor(max(settings.GRANARY_OBJECT_CONCURRENCY, 1),
                              thread_name_prefix="object-mover")


# -- recalls -------------------------------------------------------------------------------------

def _recall(requests, buckets, pool):
    """Fetch recalls' files from their first readable object copy, a few at once. The copies
    are looked up here, not in the threads, which touch no database."""
    started = timezone.now()
    todo, elsewhere = [], []
    for request in requests:
        copy = object_copy_for(request.file)
        if copy is None:
            elsewhere.append(request)
        elif not reserve_cache(request.file.size):
            # a full cache is a reason to wait, never to fail: no attempt is counted
            Req.objects.filter(pk=request.pk, state=Req.State.RUNNING).update(
                state=Req.State.QUEUED, error="waiting for cache space", lease_until=None)
        else:
            copy.bucket = buckets.get(copy.bucket_id) or copy.bucket
            todo.append((request, copy))

    def fetch(item):
        request, copy = item
        try:
            return request, copy, _fetch(request.file, copy, store_for(copy.bucket))
        except MediumError as exc:
            return request, copy, exc

    results = list(pool.map(fetch, todo))
    done, failed = 0, []
    with Arrivals() as arrivals:
        for request, copy, outcome in results:
            if isinstance(outcome, (CopyMissing, _Changed)):
                mark_bad([copy], str(outcome))
                elsewhere.append(request)
            elif isinstance(outcome, MediumError):
                failed.append((request, outcome))
            else:
                arrivals.land(request, outcome, started)
                done += 1
    for request in elsewhere:
        _read_elsewhere(request, "the object copy failed its check; reading another copy")
    down = set()
    for request, exc in failed:
        if exc.whole and _tape_can_serve(request.file):
            down.add(request.bucket_id)
            _read_elsewhere(request, f"{exc}; reading the tape copy instead", tape_only=True)
        else:
            down |= settle_failures([(request, exc)], "recall from the object store failed")
    fail_unrecallable([r.pk for r in elsewhere])
    return done, down


# -- audits --------------------------------------------------------------------------------------

def _audit(requests, buckets, pool):
    """Re-read each audited object copy and check it; a bad one is marked for repair."""
    copies = {}
    for c in FileCopy.objects.filter(
            file_id__in=[r.file_id for r in requests], bucket_id__in=list(buckets),
            state=FileCopy.State.VERIFIED).select_related("bucket"):
        copies[(c.file_id, c.copy_number, c.bucket_id)] = c

    def check(request):
        copy = copies.get((request.file_id, request.copy_number, request.bucket_id))
        if copy is None:
            return request, None, None
        try:
            return request, copy, store_for(copy.bucket).verify(
                copy.key, copy.length, copy.checksum_type, copy.checksum, copy.version_id,
                copy.data_offset)
        except CopyMissing:
            return request, copy, False
        except MediumError as exc:
            return request, copy, exc

    results = list(pool.map(check, requests))
    now, done, failed = timezone.now(), 0, []
    for request, copy, outcome in results:
        if isinstance(outcome, MediumError):
            failed.append((request, outcome))
            continue
        error = ""
        if outcome is True:
            FileCopy.objects.filter(pk=copy.pk).update(verified_at=now)
        elif copy is not None:
            mark_bad([copy], f"fixity audit of {copy.where}")
            error = f"bad copy in {copy.bucket.name}; repair queued"
        Req.objects.filter(pk=request.pk, state=Req.State.RUNNING).update(
            state=Req.State.DONE, bytes_done=request.bytes_total, finished_at=now, error=error,
            lease_until=None)
        done += 1
    return done, settle_failures(failed, "audit in the object store failed")


class _Changed(MediumError):
    """The object's bytes are not the catalog's."""


def _fetch(file, copy, store):
    """GET the object into the cache's partial file, hashed on the way; returns the partial
    path when the bytes are the catalog's, raises _Changed (removing it) when not."""
    from .paths import cache_path

    target = cache_path(file)
    partial = target.with_name(target.name + ".recall")
    partial.parent.mkdir(parents=True, exist_ok=True)
    with open(partial, "wb") as out:
        digest, count = store.read(copy.key, file.checksum_type, out.write,
                                   version_id=copy.version_id, offset=copy.data_offset,
                                   length=copy.length if copy.data_offset else None)
        out.flush()
        os.fsync(out.fileno())
    if count != file.size or not checksums.same(file.checksum_type, digest, file.checksum):
        partial.unlink(missing_ok=True)
        raise _Changed(f"object {copy.key} in {copy.bucket.name} does not match the catalog "
                       f"checksum ({count} of {file.size} bytes read)")
    return partial



def _tape_can_serve(file):
    return readable_copies().filter(file=file, volume__isnull=False).exists()


def _read_elsewhere(request, reason, tape_only=False):
    """Send a recall to the next readable copy: another bucket, else tape (the scheduler)."""
    nxt = None if tape_only else object_copy_for(request.file)
    Req.objects.filter(pk=request.pk, state=Req.State.RUNNING).update(
        state=Req.State.QUEUED, drive=None, lease_until=None, error=reason[:1000],
        bucket_id=nxt.bucket_id if nxt else None)
