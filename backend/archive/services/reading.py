"""Reading copies: recalls into the cache and fixity audits, from the mounted volume."""
import logging
import os

from django.db import transaction
from django.utils import timezone

from backend.catalog import checksums
from backend.catalog.models import File
from backend.metrics.services import record_transfer

from .. import hardware, tape
from ..models import CacheEntry, Drive, FileCopy, Volume
from ..signals import file_recalled
from .cache import reserve_cache
from .drives import drive_error, drive_ok, set_drive
from .paths import cache_path, volume_path
from .queueing import Req, requeue

log = logging.getLogger(__name__)


def recall_candidates(file):
    """[(copy_number, FileCopy of the next segment needed)] per copy that can still serve."""
    out = []
    copies = (FileCopy.objects.filter(file=file, state=FileCopy.State.VERIFIED)
              .select_related("volume").order_by("copy_number", "file_offset"))
    by_copy = {}
    for c in copies:
        by_copy.setdefault(c.copy_number, []).append(c)
    for number, segments in by_copy.items():
        if any(s.volume.state in (Volume.State.SUSPECT, Volume.State.RETIRED) for s in segments):
            continue
        out.append((number, segments))
    return out


def read_copies(drive, volume, requests):
    """Recall files from the mounted volume into the cache; verify each against the catalog."""
    set_drive(drive, state=Drive.State.READING)
    done = []
    for request in requests:
        f = request.file
        try:
            hardware.check_fault(drive, "read")
        except hardware.DriveFault as exc:
            drive_error(drive, exc, [r for r in requests if r not in done])
            return done
        if request.kind == Req.Kind.AUDIT:
            _audit(drive, volume, request)
            done.append(request)
            continue
        segments = [s for _, segs in recall_candidates(f) for s in segs if s.volume_id == volume.pk]
        if not segments:
            requeue([request], f"no usable copy of {f.name} on {volume.label}")
            continue
        try:
            if _recall_from(drive, volume, request, segments):
                done.append(request)
        except tape.VolumeError as exc:
            _volume_suspect(volume, str(exc))
            requeue([request], f"volume {volume.label}: {exc}")
            return done
    drive_ok(drive)
    set_drive(drive, state=Drive.State.IDLE, last_used_at=timezone.now())
    return done


def _recall_from(drive, volume, request, segments):
    f = request.file
    if not reserve_cache(f.size):
        # a full cache is a reason to wait, never to fail: no attempt is counted
        Req.objects.filter(pk=request.pk, state=Req.State.RUNNING).update(
            state=Req.State.QUEUED, drive=None, error="waiting for cache space")
        return False
    target = cache_path(f)
    partial = target.with_name(target.name + ".recall")
    partial.parent.mkdir(parents=True, exist_ok=True)
    started = timezone.now()
    if volume.fault == "bad":
        raise tape.VolumeError("media error (injected)")
    mode = "r+b" if partial.exists() and request.bytes_done else "wb"
    with open(partial, mode) as out:
        for segment in segments:
            out.seek(segment.file_offset)
            digest = tape.read(volume_path(volume), segment.data_offset, segment.length,
                               segment.checksum_type, sink=out.write)
            hardware.pause(hardware.transfer_seconds(drive.model, segment.length))
            if not checksums.same(segment.checksum_type, digest, segment.checksum):
                FileCopy.objects.filter(pk=segment.pk).update(state=FileCopy.State.BAD)
                raise tape.VolumeError(f"checksum mismatch reading {f.name}")
            request.bytes_done += segment.length
        out.flush()
        os.fsync(out.fileno())
    if request.bytes_done < f.size:
        Req.objects.filter(pk=request.pk).update(bytes_done=request.bytes_done,
                                                 state=Req.State.QUEUED, drive=None)
        return False
    digest, size = checksums.of_file(f.checksum_type, partial)
    if size != f.size or not checksums.same(f.checksum_type, digest, f.checksum):
        partial.unlink(missing_ok=True)
        raise tape.VolumeError(f"recalled {f.name} does not match its catalog checksum")
    os.replace(partial, target)
    now = timezone.now()
    with transaction.atomic():
        CacheEntry.objects.update_or_create(file=f, defaults={
            "state": CacheEntry.State.CLEAN, "size": f.size, "last_access": now})
        Req.objects.filter(pk=request.pk).update(
            state=Req.State.DONE, bytes_done=f.size, finished_at=now, error="")
        record_transfer("recall", f.size, started, now, f.granule.collection)
        transaction.on_commit(lambda: file_recalled.send(sender=File, file_id=f.pk))
    return True


def _audit(drive, volume, request):
    """Re-read one copy's segments on this volume and check them; a bad one is marked for repair."""
    segments = FileCopy.objects.filter(file=request.file, copy_number=request.copy_number,
                                       volume=volume, state=FileCopy.State.VERIFIED)
    now, bad = timezone.now(), []
    for segment in segments:
        try:
            if volume.fault == "bad":
                raise tape.VolumeError("media error (injected)")
            digest = tape.read(volume_path(volume), segment.data_offset, segment.length,
                               segment.checksum_type)
            hardware.pause(hardware.transfer_seconds(drive.model, segment.length))
            ok = checksums.same(segment.checksum_type, digest, segment.checksum)
        except tape.VolumeError as exc:
            ok, digest = False, str(exc)
        if ok:
            FileCopy.objects.filter(pk=segment.pk).update(verified_at=now)
        else:
            FileCopy.objects.filter(pk=segment.pk).update(state=FileCopy.State.BAD)
            bad.append(segment)
    error = f"bad copy on {volume.label}; repair queued" if bad else ""
    Req.objects.filter(pk=request.pk).update(
        state=Req.State.DONE, bytes_done=request.bytes_total, finished_at=now, error=error)
    return not bad


def _volume_suspect(volume, reason):
    log.error("volume %s marked suspect: %s", volume.label, reason)
    Volume.objects.filter(pk=volume.pk).update(state=Volume.State.SUSPECT)
    volume.state = Volume.State.SUSPECT
