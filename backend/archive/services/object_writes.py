"""The object movers' writes: a batch's migrations sent as objects (each large file one of its
own, small ones gathered in packs) by the mover's pool, and recorded by the mover once every
object of the batch is stored or has failed. The pool's threads only move bytes; what touches
the database runs in the mover's thread (objects.run_object_movers)."""
import os

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from backend.catalog import bulk, checksums

from .. import tape
from ..media import MediumError, Stored
from ..models import FileCopy
from .buckets import object_key, object_metadata, pack_key, store_for
from .completeness import complete_granules_if_archived
from .paths import cache_location, member_name
from .queueing import Req, requeue
from .recall import wait_for_recall
from .writing import (
    cached_file_changed,
    clean_complete_files,
    in_cache,
    record_moved,
    release_replaced,
    segment_numbers,
)


def settle_failures(failed, verb):
    """Requeue or fail what could not be moved; the ids of the buckets whose store failed as a
    whole (their work goes back uncharged)."""
    down = set()
    for request, exc in failed:
        if isinstance(exc, MediumError) and exc.whole:
            down.add(request.bucket_id)
            requeue([request], f"{verb}: {exc}"[:1000], charge=False)
        else:
            requeue([request], f"{verb}: {exc}"[:1000])
    return down


class _OnItsWay:
    """A batch's migrations sent to the pool: its futures, and what record_sent needs."""

    def __init__(self, futures, buckets, started):
        self.futures, self.buckets, self.started = futures, buckets, started

    def pending(self):
        return [f for f in self.futures if not f.done()]

    def done(self):
        return not self.pending()


def migrate(requests, buckets, pool):
    """Send a batch's files: each large one as an object of its own, the small ones (below
    GRANARY_S3_PACK_BELOW_BYTES) gathered into packs, a PUT per pack. Returns them on their
    way (None when no file is in the cache)."""
    requests = in_cache(requests)
    if not requests:
        return None
    started = timezone.now()
    below = settings.GRANARY_S3_PACK_BELOW_BYTES
    jobs = ([(False, [r]) for r in requests if r.file.size >= below]
            + [(True, pack) for pack in _packs([r for r in requests if r.file.size < below])])

    def send(job):
        packed, (request, *_) = job
        if packed:
            return _send_pack(job[1], buckets[request.bucket_id])
        f, bucket = request.file, buckets[request.bucket_id]
        try:
            stored = store_for(bucket).write(
                object_key(bucket, f), cache_location(f), f.size, f.checksum_type, f.checksum,
                object_metadata(f, request.copy_number))
            return [(request, stored, None)]
        except MediumError as exc:
            return [(request, None, exc)]
        except OSError as exc:   # the cached file went away under us
            return [(request, None, MediumError(f"cannot read the cached file: {exc}"))]

    return _OnItsWay([pool.submit(send, job) for job in jobs], buckets, started)


def record_sent(on_way):
    """Record a batch's migrations once every object of it is stored or has failed: (requests
    finished, ids of the buckets whose store failed as a whole)."""
    results = [item for future in on_way.futures for item in future.result()]
    buckets, started = on_way.buckets, on_way.started
    written = [(r, stored) for r, stored, exc in results if exc is None]
    failed = [(r, exc) for r, _, exc in results if exc is not None]
    gone = [r for r, exc in failed if not exc.whole and not os.path.exists(cache_location(r.file))]
    changed = [(r, exc) for r, exc in failed
               if not exc.whole and r not in gone and _cache_changed(r.file)]
    failed = [(r, exc) for r, exc in failed if (r, exc) not in changed and r not in gone]
    if written:
        _record_object_writes(written, buckets, started)
    for request, _ in changed:
        cached_file_changed(request)
    # the cached file left between the check and the send: recalled first, as in_cache does
    wait_for_recall(gone)
    return len(written), settle_failures(failed, "copy to the object store failed")


def _packs(requests):
    """Small files' requests cut into packs: one bucket each, at most GRANARY_S3_PACK_BYTES."""
    packs, size = [], 0
    for request in sorted(requests, key=lambda r: (r.bucket_id, r.pk)):
        fits = packs and packs[-1][0].bucket_id == request.bucket_id and (
            size + request.file.size <= settings.GRANARY_S3_PACK_BYTES)
        if not fits:
            packs.append([])
            size = 0
        packs[-1].append(request)
        size += request.file.size
    return packs


def _send_pack(requests, bucket):
    """Gather the requests' cached files into one tar and PUT it; [(request, Stored, None) or
    (request, None, MediumError)]. A file that cannot be read, or whose bytes are not the
    catalog's, stays out of the pack and fails alone."""
    pack, members, out = tape.Pack(), [], []
    for request in requests:
        f = request.file
        try:
            with open(cache_location(f), "rb") as source:
                data = source.read()
        except OSError as exc:
            out.append((request, None, MediumError(f"cannot read the cached file: {exc}")))
            continue
        if len(data) != f.size or not checksums.same(
                f.checksum_type, checksums.of_bytes(f.checksum_type, data), f.checksum):
            out.append((request, None, MediumError(
                f"the bytes read for {f.name} do not match the catalog checksum (the cached "
                "file changed?)")))
            continue
        where = pack.add(member_name(f), data, object_metadata(f, request.copy_number))
        members.append((request, where))
    if not members:
        return out
    key = pack_key(bucket, min(r.pk for r, _ in members))
    try:
        stored = store_for(bucket).put(key, pack.body(), {"pack-members": len(members)})
    except MediumError as exc:
        return out + [(r, None, exc) for r, _ in members]
    return out + [(r, Stored(key, r.file.size, stored.etag, stored.version_id, *where), None)
                  for r, where in members]


def _cache_changed(f):
    digest, size = checksums.of_file(f.checksum_type, cache_location(f))
    return size != f.size or not checksums.same(f.checksum_type, digest, f.checksum)



@transaction.atomic
def _record_object_writes(written, buckets, started):
    """Record the objects a batch stored: copies VERIFIED, requests done, cache entries clean
    where every copy is now verified, transfers, and the granules now archived."""
    now = timezone.now()
    requests = [r for r, _ in written]
    segments = segment_numbers(requests)
    copies, moved = [], {}
    for request, stored in written:
        f = request.file
        copies.append(bulk.new(
            FileCopy, file_id=f.pk, copy_number=request.copy_number,
            segment=segments.get((f.pk, request.copy_number), 0), file_offset=0,
            volume_id=None, bucket_id=request.bucket_id, key=stored.key, etag=stored.etag,
            version_id=stored.version_id, position=stored.position,
            data_offset=stored.data_offset, length=f.size,
            checksum_type=f.checksum_type, checksum=f.checksum,
            state=FileCopy.State.VERIFIED, verified_at=now))
        collection = f.granule.collection
        moved[collection.pk] = (collection, moved.get(collection.pk, (None, 0))[1] + f.size)
    bulk.insert(copies)
    Req.objects.filter(pk__in=[r.pk for r in requests], state=Req.State.RUNNING).update(
        state=Req.State.DONE, bytes_done=F("bytes_total"), error="", finished_at=now,
        lease_until=None)
    clean = clean_complete_files(requests)
    release_replaced(requests, now)
    complete_granules_if_archived(sorted({r.file.granule_id for r in requests
                                          if r.file_id in clean}), clean)
    record_moved(moved, started, now)
