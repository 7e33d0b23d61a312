"""Reading copies: recalls into the cache and fixity audits, from the mounted volume."""
import contextlib
import logging
import os

from django.utils import timezone

from backend.catalog import checksums

from .. import hardware, tape
from ..media import CopyMissing, MediumError
from ..models import Drive, FileCopy
from .arrivals import Arrivals
from .completeness import readable_copies
from .damage import mark_bad, volume_unreadable
from .drives import drive_error, drive_ok, set_drive
from .landing import Landing
from .paths import cache_location, medium_of
from .queueing import Req, requeue
from .recall import fail_unrecallable
from .serving import BlockMap, hash_path

log = logging.getLogger(__name__)


class _DamagedCopy(Exception):
    """One copy of the file failed its check; another copy may serve."""


def read_copies(drive, volume, requests):
    """Recall files from the mounted volume into the cache; verify each against the catalog.

    A member that fails its check is marked bad and its recall goes back to read another copy
    (uncharged: the copy failed, not the request); only a volume that cannot be opened at all
    is suspect, and the rest of the batch is requeued. The verified recalls are committed
    together (arrivals), whatever ends the batch."""
    set_drive(drive, state=Drive.State.READING)
    with medium_of(volume, drive).held(), Arrivals() as arrivals:   # one mount for the batch
        return _read_batch(drive, volume, requests, arrivals)


def _read_batch(drive, volume, requests, arrivals):
    done, folders = [], set()     # the cache's folders this batch has made sure of
    segments = _segments_on(volume, [r for r in requests if r.kind == Req.Kind.RECALL])
    for request in requests:
        f = request.file
        arrivals.commit_if_due(f.size)
        try:
            hardware.check_fault(drive, "read")
        except hardware.DriveFault as exc:
            drive_error(drive, exc, [r for r in requests if r not in done])
            return done
        if request.kind == Req.Kind.AUDIT:
            try:
                _audit(drive, volume, request)
            except hardware.DriveFault as exc:
                drive_error(drive, exc, [r for r in requests if r not in done])
                return done
            done.append(request)
            continue
        if not segments.get(f.pk):
            requeue([request], f"no usable copy of {f.name} on {volume.label}")
            continue
        try:
            if _recall_from(drive, volume, request, segments[f.pk], arrivals, folders):
                done.append(request)
        except _DamagedCopy as exc:
            requeue([request], str(exc), charge=False)
            fail_unrecallable([request.pk])
        except hardware.DriveFault as exc:
            # the drive failed (a SCSI drive, or the path to it): the drive is charged
            drive_error(drive, exc, [r for r in requests if r not in done])
            return done
        except (MediumError, _MediaError) as exc:
            volume_unreadable(volume, str(exc))
            requeue([r for r in requests if r not in done], f"volume {volume.label}: {exc}",
                    charge=False)
            return done
    drive_ok(drive)
    set_drive(drive, state=Drive.State.IDLE, last_used_at=timezone.now())
    return done


def _segments_on(volume, recalls):
    """{file id: [its segments on `volume` that can serve]} for a batch's recalls, by copy and
    offset (recall_candidates' for each file, in one query)."""
    out = {}
    for c in (readable_copies().filter(file_id__in=[r.file_id for r in recalls], volume=volume)
              .order_by("file_id", "copy_number", "file_offset")):
        out.setdefault(c.file_id, []).append(c)
    return out


class _MediaError(tape.VolumeError):
    """The whole cartridge fails to read (an injected media fault)."""


def _recall_from(drive, volume, request, segments, arrivals, folders):
    f = request.file
    if not arrivals.reserve(f.size):
        # a full cache is a reason to wait, never to fail: no attempt is counted
        Req.objects.filter(pk=request.pk, state=Req.State.RUNNING).update(
            state=Req.State.QUEUED, drive=None, error="waiting for cache space")
        return False
    target = cache_location(f)
    partial = target + ".recall"
    folder = os.path.dirname(target)
    if folder not in folders:     # a small-file batch lands hundreds of files in one folder
        os.makedirs(folder, exist_ok=True)
        folders.add(folder)
    started = timezone.now()
    if volume.fault == "bad":
        raise _MediaError("media error (injected)")
    mode = "r+b" if request.bytes_done and os.path.exists(partial) else "wb"
    tee = _Tee(f, segments) if mode == "wb" else None
    mapped = bool(tee and tee.mapped)
    with open(partial, mode) as out:
        landing = Landing(out.fileno(), f.size, tee.update if tee else None,
                          path=partial if mode == "wb" else None)
        try:
            for segment in segments:
                _read_segment(drive, volume, segment, landing.sink(segment.file_offset),
                              check=not mapped)
                request.bytes_done += segment.length
            landing.close()
        except BaseException:
            landing.abandon()
            raise
        if request.bytes_done < f.size:     # resumed from another volume: kept as it is
            os.fsync(out.fileno())          # (a whole file is synced by its commit)
    if request.bytes_done < f.size:
        Req.objects.filter(pk=request.pk).update(bytes_done=request.bytes_done,
                                                 state=Req.State.QUEUED, drive=None)
        return False
    problem = None
    if tee and tee.whole:
        digest, size, blocks = tee.result()
        if mapped and blocks != bytes(segments[0].blocks):
            problem = "the block map recorded when the copy was verified"
    else:
        digest, size, blocks = hash_path(f.checksum_type, partial)
    if size != f.size or not checksums.same(f.checksum_type, digest, f.checksum):
        problem = "its catalog checksum"
    if problem:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
        Req.objects.filter(pk=request.pk).update(bytes_done=0)
        mark_bad(segments, f"the file read from it does not match {problem}")
        raise _DamagedCopy(f"recalled {f.name} does not match {problem}")
    arrivals.land(request, partial, started, blocks)
    return True


class _Tee:
    """A recall written in one pass from its start: its block map (and the file's checksum,
    unless its one segment's, checked on the way, is the file's) taken as the bytes go to the
    file, so the file is not read again to be checked. `whole` once every byte went through.

    `mapped`: the one segment is a whole file with the block map its write's read-back took
    from bytes that matched the catalog checksum. Its bytes are then checked against that map
    (XXH3, what every download of a cached file is checked with) and not hashed with the
    catalog's type again: SHA-256 was most of a large recall's CPU, beside the drive's own
    (bench tape, alternated: 0.49-0.53 -> 0.60-0.61 of the plain SSC read). The fixity audits
    still hash a copy with the catalog's type."""

    def __init__(self, file, segments):
        self.file, self.map, self.size = file, BlockMap(), 0
        one = (len(segments) == 1 and segments[0].length == file.size
               and checksums.normalise(segments[0].checksum_type)
               == checksums.normalise(file.checksum_type)
               and checksums.same(file.checksum_type, segments[0].checksum, file.checksum))
        self.digest = None if one else checksums.hasher(file.checksum_type)
        self.mapped = one and bool(segments[0].blocks)

    def update(self, offset, piece):
        """Bytes written at `offset` of the file (the landing calls it in order)."""
        if offset != self.size:
            self.size = -1          # not in file order: hash_path checks the file instead
            return
        self.size += len(piece)
        self.map.update(piece)
        if self.digest:
            self.digest.update(piece)

    @property
    def whole(self):
        return self.size == self.file.size

    def result(self):
        """(checksum, size, block map) as hash_path would find them; the checksum of a
        one-segment file is the catalog's, which its segment's read matched."""
        digest = self.digest.hexdigest() if self.digest else self.file.checksum
        return digest, self.size, self.map.digest()


class _Unhashed:
    """The hasher of a segment whose bytes are checked by their block map instead."""

    def update(self, data):
        pass

    def hexdigest(self):
        return ""


def _read_segment(drive, volume, segment, out, check=True):
    """Copy one segment from the volume into the recall file (`out` takes the bytes), checked
    on the way (unless `check` is false: the caller checks the bytes by their block map); a
    member that fails (short, or other bytes) is marked bad and the caller reads another
    copy."""
    try:
        digest = medium_of(volume, drive).read(segment.data_offset, segment.length,
                                              segment.checksum_type if check else _Unhashed,
                                              sink=out)
    except CopyMissing as exc:
        mark_bad([segment], str(exc))
        raise _DamagedCopy(f"copy {segment.copy_number} on {volume.label}: {exc}") from exc
    hardware.pause(hardware.transfer_seconds(drive.model, segment.length))
    if check and not checksums.same(segment.checksum_type, digest, segment.checksum):
        mark_bad([segment], "checksum mismatch on read")
        raise _DamagedCopy(f"copy {segment.copy_number} on {volume.label} fails its checksum; "
                           "reading another copy")


def _audit(drive, volume, request):
    """Re-read one copy's segments on this volume and check them; a bad one is marked for repair."""
    segments = FileCopy.objects.filter(file=request.file, copy_number=request.copy_number,
                                       volume=volume, state=FileCopy.State.VERIFIED)
    now, bad = timezone.now(), []
    for segment in segments:
        try:
            if volume.fault == "bad":
                raise tape.VolumeError("media error (injected)")
            digest = medium_of(volume, drive).read(segment.data_offset, segment.length,
                                                  segment.checksum_type)
            hardware.pause(hardware.transfer_seconds(drive.model, segment.length))
            ok = checksums.same(segment.checksum_type, digest, segment.checksum)
        except (tape.VolumeError, MediumError) as exc:
            ok, digest = False, str(exc)
        if ok:
            FileCopy.objects.filter(pk=segment.pk).update(verified_at=now)
        else:
            bad.append(segment)
    mark_bad(bad, f"fixity audit on {volume.label}")
    error = f"bad copy on {volume.label}; repair queued" if bad else ""
    Req.objects.filter(pk=request.pk).update(
        state=Req.State.DONE, bytes_done=request.bytes_total, finished_at=now, error=error)
    return not bad
