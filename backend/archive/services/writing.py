"""Writing copies (migration): a batch written to the mounted volume, read back, recorded."""
import logging
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import transaction
from django.db.models import Case, F, Max, Value, When
from django.utils import timezone

from backend.catalog import bulk, checksums
from backend.catalog.models import Granule
from backend.metrics.services import record_transfer

from .. import hardware, tape
from ..media import MediumError, WriteProtected
from ..models import CacheEntry, Drive, FileCopy, Volume
from . import buckets
from .completeness import complete_granules_if_archived, files_copies_complete
from .damage import volume_truncated, volume_unreadable, volume_write_protected
from .drives import drive_error, drive_ok, set_drive
from .paths import cache_location, medium_of, member_name, present
from .queueing import Req, requeue
from .recall import drop_damaged_cache, wait_for_recall
from .remedies import CACHE_CHANGED
from .serving import MappedDigest

log = logging.getLogger(__name__)

SPAN_MIN = 16 << 20      # don't start a file on a volume with less room than this: span instead
HEADER_ROOM = 16 << 10   # room kept for a member's pax header and padding


def segment_numbers(requests):
    """{(file id, copy number): the next free segment number} for the requests' copies: past
    every segment still recorded (bad ones too, which keep their numbers until released)."""
    rows = (FileCopy.objects.filter(file_id__in=[r.file_id for r in requests])
            .exclude(state=FileCopy.State.RELEASED).order_by()
            .values_list("file_id", "copy_number").annotate(top=Max("segment")))
    return {(file_id, n): top + 1 for file_id, n, top in rows}


def write_copies(drive, volume, requests):
    """Write migrations onto the mounted volume, verify each by reading it back, record them.

    A copy is recorded (and counts) only after the volume is synced and the bytes read back
    match. A file larger than the room left is written in part (a segment) and the rest stays
    queued for the next volume of the group.
    """
    volume.refresh_from_db()
    if volume.state not in (Volume.State.SCRATCH, Volume.State.FILLING):
        # it changed since the scheduler looked (a repack, a truncation found): not theirs
        requeue(requests, f"volume {volume.label} became {volume.state}", charge=False)
        return set()
    requests = in_cache(requests)
    if not requests:
        return set()
    set_drive(drive, state=Drive.State.WRITING)
    try:
        writer = medium_of(volume, drive).writer(volume.end_of_data)
    except (tape.VolumeError, MediumError) as exc:
        _volume_cannot_take_writes(drive, volume, requests, exc)
        return set()
    except hardware.DriveFault as exc:
        drive_error(drive, exc, requests)
        return set()
    started = timezone.now()
    segments = segment_numbers(requests)
    checking = _ReadBack(volume, drive)
    try:
        written = _write_batch(drive, volume, writer, requests, segments, checking)
    except Exception as exc:
        writer.abandon()
        checking.finish([])
        _batch_failed(drive, volume, requests, exc)
        return set()
    verified = checking.finish(written)
    done = {r.pk for r, _, _ in written}
    unwritten = [r for r in requests if r.pk not in done]
    kept, rejected = _cut_at_first_mismatch(written, verified)
    end_of_data = writer.end_of_data
    if rejected:
        # the volume's end only moves past bytes the catalog keeps: cut at the first member
        # that did not read back, and write the members after it again
        end_of_data = rejected[0][1].position
        medium_of(volume, drive).cut(end_of_data)
    _record_writes(drive, volume, kept, checking.maps(verified), end_of_data, unwritten,
                   started, again=[r for r, _, _ in rejected[1:]])
    if rejected:
        _read_back_failed(rejected[0][0], volume)
    else:
        drive_ok(drive)
    return verified & {r.pk for r, _, _ in kept}


def _batch_failed(drive, volume, requests, error):
    """A write batch stopped by the drive (charged to it) or by the cartridge (write
    protected, a medium error, gone: out of service with its reason); either way the batch
    goes back uncharged. Anything else is raised."""
    if isinstance(error, hardware.DriveFault):
        drive_error(drive, error, requests)
    elif isinstance(error, MediumError):
        _volume_cannot_take_writes(drive, volume, requests, error)
    else:
        raise error


def in_cache(requests):
    """The requests whose file is in the cache. Each of the others waits, unscheduled, for a
    recall from a readable copy (the recall clears the wait), or fails when there is none."""
    where = [cache_location(r.file) for r in requests]
    there = present(where)
    kept, missing = [], []
    for request, path in zip(requests, where, strict=True):
        (kept if path in there else missing).append(request)
    if missing:
        wait_for_recall(missing)
    return kept


def _cut_at_first_mismatch(written, verified):
    """(kept, rejected): the members before the first that did not read back, and the rest."""
    for i, (request, _, _) in enumerate(written):
        if request.pk not in verified:
            return written[:i], written[i:]
    return written, []


def _volume_cannot_take_writes(drive, volume, requests, error):
    """The volume is not what the catalog says (truncated, missing): judge it, and send the
    batch to another volume without charging its requests."""
    if isinstance(error, tape.VolumeTruncated):
        volume_truncated(volume)
    elif isinstance(error, WriteProtected):
        volume_write_protected(volume, str(error))
    else:
        volume_unreadable(volume, str(error))
    requeue(requests, f"volume {volume.label}: {error}", charge=False)
    set_drive(drive, state=Drive.State.IDLE)


def _read_back_failed(request, volume):
    """Charge a failed read-back to what failed: the cached file when it no longer matches its
    catalog checksum (cached_file_changed), else the volume or drive: the request is charged an
    attempt, so the retries are bounded."""
    f = request.file
    digest, size = checksums.of_file(f.checksum_type, cache_location(f))
    if size == f.size and checksums.same(f.checksum_type, digest, f.checksum):
        requeue([request], f"read-back from {volume.label} does not match the catalog "
                           "checksum; will be written again")
        return
    cached_file_changed(request)


def cached_file_changed(request):
    """A cached file that no longer matches its catalog checksum (changed after ingest) is the
    file's fault: writing it again cannot help, so its migration fails with the reason, and
    when a good copy exists elsewhere the damaged cache copy is dropped and recalled from it."""
    f = request.file
    error = f"the cached copy of {f.name} {CACHE_CHANGED}, so no copy of it can be written"
    if drop_damaged_cache(f):
        error += "; it is being recalled from a good copy: retry this request once it is cached"
    Req.objects.filter(pk=request.pk, state=Req.State.RUNNING).update(
        state=Req.State.FAILED, error=error, drive=None, finished_at=timezone.now(),
        attempts=F("attempts") + 1)


def _write_batch(drive, volume, writer, requests, segments, checking):
    """Append the requests' members until the volume is full, then sync it; a large member's
    read-back starts as soon as it is on disk. Returns [(request, result, segment)] written."""
    written = []
    for request in requests:
        f = request.file
        room = volume.capacity_bytes - writer.end_of_data - HEADER_ROOM
        remaining = f.size - request.bytes_done
        length = min(remaining, max(room, 0))
        if length < remaining and length < SPAN_MIN:
            break  # volume is full: the rest waits for the next volume
        hardware.check_fault(drive, "write")
        try:
            result, segment = _write_member(writer, request, length,
                                            segments.get((f.pk, request.copy_number), 0))
        except tape.VolumeFull:
            break  # the cartridge's end of medium: this member was taken back, the rest waits
        hardware.pause(hardware.transfer_seconds(drive.model, length))
        written.append((request, result, segment))
        if length >= READ_BACK_AHEAD:
            writer.sync()
            checking.start(request, result)
    writer.close(sync=True)
    return written


def _write_member(writer, request, length, segment):
    """Write `length` bytes of the request's file, from where its copy stands, as one member:
    the whole file, or a numbered segment of a file that spans volumes. `segment`: the first
    number the copy's recorded segments leave free (0 when there are none).
    Returns (result, segment)."""
    f = request.file
    spanning = length < f.size
    expected = _expected_checksum(f, request.bytes_done, length, spanning)
    headers = {
        "granule_id": f.granule.granule_id, "collection": f.granule.collection.key,
        "granule_version": f.granule.version, "file": f.name, "file_size": f.size,
        "checksum_type": f.checksum_type, "checksum": expected,
        "file_checksum": f.checksum, "copy": request.copy_number,
        "segment": segment, "file_offset": request.bytes_done,
    }
    with open(cache_location(f), "rb") as source:
        source.seek(request.bytes_done)
        result = writer.add(member_name(f, segment if spanning else None), source,
                            length, None, headers)
    result.checksum = expected   # proven, or disproven, by the read-back
    return result, segment


def release_replaced(requests, now):
    """New copies are verified: release what they replace, every segment of the same (file,
    copy) older than the request that wrote them: bad ones, the ones on a volume being
    repacked, and the good segments of a copy that spanned volumes and was written again whole.
    Runs in the transaction that records the copies (all created at `now` or later), so a copy
    is never counted twice nor missing; a first migration, nearly every one, finds nothing."""
    by_pair = {(r.file_id, r.copy_number): r.pk for r in requests}
    if not by_pair:
        return
    older = [row for row in FileCopy.objects.filter(
        file_id__in={f for f, _ in by_pair}, copy_number__in={n for _, n in by_pair},
        created_at__lt=now).exclude(
        state=FileCopy.State.RELEASED).order_by().values_list(
        "pk", "file_id", "copy_number", "state", "volume_id", "length", "created_at")
        if (row[1], row[2]) in by_pair]
    if not older:
        return
    queued_at = dict(Req.objects.filter(pk__in={by_pair[row[1:3]] for row in older})
                     .values_list("pk", "created_at"))
    old = [row for row in older if row[6] < queued_at[by_pair[row[1:3]]]]
    for _, _, _, state, volume_id, length, _ in old:
        if state == FileCopy.State.VERIFIED and volume_id:
            Volume.objects.filter(pk=volume_id).update(
                live_bytes=F("live_bytes") - length, file_count=F("file_count") - 1)
    FileCopy.objects.filter(pk__in=[row[0] for row in old]).update(
        state=FileCopy.State.RELEASED)
    # objects replaced by a copy elsewhere (a move off the bucket) leave it once committed
    buckets.remove_on_commit(list(FileCopy.objects.filter(
        pk__in=[row[0] for row in old], bucket__isnull=False).values_list(
        "bucket_id", "key", "version_id")))


def _expected_checksum(file, offset, length, spanning):
    if not spanning:
        return file.checksum
    digest = checksums.hasher(file.checksum_type)
    with open(cache_location(file), "rb") as source:
        source.seek(offset)
        remaining = length
        while remaining:
            chunk = source.read(min(tape.BLOCK, remaining))
            digest.update(chunk)
            remaining -= len(chunk)
    return digest.hexdigest()


# A member at least this large is synced on its own and read back while the next is written,
# as a drive's read-after-write head does: the disk reads one while it writes the other.
READ_BACK_AHEAD = 64 << 20


class _ReadBack:
    """The read-back of a write batch: large members checked in a thread as soon as they are
    on disk, the rest after the batch is synced. finish() -> ids of requests whose bytes match
    the catalog checksum; maps() -> the block maps of those that are whole files."""

    def __init__(self, volume, drive=None):
        self.volume, self.pool, self.early, self.mapped = volume, None, {}, {}
        self.medium = medium_of(volume, drive)

    def start(self, request, result):
        if self.pool is None:
            self.pool = ThreadPoolExecutor(1, thread_name_prefix="read-back")
        self.early[request.pk] = self.pool.submit(self._matches, request, result)

    def _kind(self, request, result):
        """What the member is hashed with: the catalog's checksum type, and for a whole file
        (not a segment) its block map too, kept on the copy for the recalls that read it."""
        f = request.file
        if request.bytes_done or result.length != f.size:
            return f.checksum_type

        def mapped():
            self.mapped[request.pk] = MappedDigest(f.checksum_type)
            return self.mapped[request.pk]
        return mapped

    def maps(self, verified):
        """{request id: block map} of the verified whole files."""
        return {pk: m.map.digest() for pk, m in self.mapped.items() if pk in verified}

    def finish(self, written):
        try:
            rest = [(request, result) for request, result, _ in written
                    if request.pk not in self.early]
            digests = self.medium.read_many(
                [(result.data_offset, result.length, self._kind(request, result))
                 for request, result in rest],
                drop_cache=settings.GRANARY_VERIFY_FROM_DISK)
            good = {request.pk for (request, result), digest in zip(rest, digests, strict=True)
                    if self._same(request, result, digest)}
            return good | {request.pk for request, _, _ in written
                           if request.pk in self.early and self.early[request.pk].result()}
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True)

    def _matches(self, request, result):
        readback = self.medium.read(result.data_offset, result.length,
                                    self._kind(request, result),
                                    drop_cache=settings.GRANARY_VERIFY_FROM_DISK)
        return self._same(request, result, readback)

    def _same(self, request, result, readback):
        if checksums.same(request.file.checksum_type, readback, result.checksum):
            return True
        log.error("read-back of %s on %s does not match the catalog checksum",
                  request.file.name, self.volume.label)
        return False


@transaction.atomic
def _record_writes(drive, volume, written, maps, end_of_data, unwritten, started, again=()):
    """Record a write batch in bulk: its copies (with the block maps in `maps` by request),
    its requests, the cache entries made clean, one transfer record per collection and the
    granules now archived. `again`: requests whose members were cut off behind a failed one,
    back in the queue uncharged."""
    now = timezone.now()
    volume = Volume.objects.select_for_update().get(pk=volume.pk)
    copies, done, moved = _settle_requests(volume, written, maps, now)
    bulk.insert(copies)
    Req.objects.filter(pk__in=[r.pk for r in done]).update(
        state=Req.State.DONE, bytes_done=F("bytes_total"), error="", finished_at=now)
    Req.objects.bulk_update([r for r, _, _ in written if r.state != Req.State.DONE],
                            ["bytes_done", "error", "state", "drive", "attempts"])
    clean = clean_complete_files(done)
    _advance_volume(volume, written, copies, len(copies), end_of_data, unwritten)
    # after the volume is saved: a replaced segment on this same volume is taken off its counts
    # (released first, the save of the volume read before would count it again)
    release_replaced(done, now)
    Req.objects.filter(pk__in=[r.pk for r in [*unwritten, *again]],
                       state=Req.State.RUNNING).update(state=Req.State.QUEUED, drive=None)
    elapsed = max((now - started).total_seconds(), 1e-6)
    set_drive(drive, state=Drive.State.IDLE, last_used_at=now,
              current_rate_b_s=sum(r.length for _, r, _ in written) / elapsed)
    complete_granules_if_archived(sorted({r.file.granule_id for r in done
                                          if r.file_id in clean}), clean)
    record_moved(moved, started, now)


def record_moved(moved, started, now):
    """A write batch's transfer records, one per collection: the last statements of its
    transaction, as the roll-up rows they add to are shared by every mover and each is held
    locked until commit (taken earlier, the other drive waited out the rest of the batch)."""
    for collection, nbytes in moved.values():
        record_transfer("migrate", nbytes, started, now, collection)


def _settle_requests(volume, written, maps, now):
    """The copies a write batch leaves on `volume` (every member in `written` read back
    good; a whole file's with its block map from `maps`), the requests it finished and the
    bytes it moved per collection. Each request is settled in memory: done, or queued with the
    rest of a spanning file."""
    copies, done, moved = [], [], {}
    for request, result, segment in written:
        f = request.file
        copies.append(bulk.new(
            FileCopy, file_id=f.pk, copy_number=request.copy_number, segment=segment,
            file_offset=request.bytes_done, volume_id=volume.pk, position=result.position,
            data_offset=result.data_offset, length=result.length,
            checksum_type=f.checksum_type, checksum=result.checksum,
            state=FileCopy.State.VERIFIED, verified_at=now, blocks=maps.get(request.pk),
        ))
        request.bytes_done += result.length
        request.error = ""
        if request.bytes_done >= f.size:
            request.state, request.finished_at = Req.State.DONE, now
            done.append(request)
        else:
            request.state, request.drive = Req.State.QUEUED, None
        collection = f.granule.collection
        moved[collection.pk] = (collection, moved.get(collection.pk, (None, 0))[1] + result.length)
    return copies, done, moved


def clean_complete_files(done):
    """The files of the finished requests whose every copy is now verified: their dirty cache
    entries become clean (or stay pinned). Returns their ids."""
    # Lock the granules first: a mover recording another copy of the same files waits here, so
    # whichever commits second sees both copies (and cleans the files, completes the granules).
    granule_ids = sorted({r.file.granule_id for r in done})
    list(Granule.objects.select_for_update().filter(pk__in=granule_ids).order_by("pk")
         .values_list("pk", flat=True))
    clean = files_copies_complete([r.file for r in done])
    if clean:
        CacheEntry.objects.filter(file_id__in=clean, state=CacheEntry.State.DIRTY).update(
            state=Case(When(pinned=True, then=Value(CacheEntry.State.PINNED)),
                       default=Value(CacheEntry.State.CLEAN)))
    return clean


def _advance_volume(volume, written, copies, files, end_of_data, unwritten):
    """Save the volume past a write batch: its end of data, live bytes and file count; a scratch
    volume joins the batch's group and is filling; full when the rest did not fit."""
    volume.end_of_data = end_of_data
    volume.live_bytes += sum(c.length for c in copies)
    volume.file_count += files
    if volume.group_id is None:
        volume.group_id = written[0][0].volume_group_id if written else None
    if volume.state == Volume.State.SCRATCH:
        volume.state = Volume.State.FILLING
    if unwritten or volume.capacity_bytes - end_of_data - HEADER_ROOM < SPAN_MIN:
        volume.state = Volume.State.FULL
    volume.save()
