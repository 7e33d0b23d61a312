"""Drives: mount, dismount, and the faults that count against a drive."""
import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from backend.events import services as events

from .. import hardware
from ..models import Drive, Volume
from .policy import ArchiveError
from .queueing import requeue

log = logging.getLogger(__name__)


class VolumeBusy(ArchiveError):
    """Another drive took the volume first (two movers decided on the same snapshot)."""


def mount(drive, volume):
    """Put `volume` in `drive` (robot exchange + load), honouring injected mount faults.

    The volume is claimed for this drive first, atomically: the loser of a race gets VolumeBusy.
    """
    if drive.mounted_volume_id == volume.pk:
        return
    if drive.mounted_volume_id:
        dismount(drive)
    try:
        with transaction.atomic():
            Drive.objects.filter(pk=drive.pk).update(mounted_volume=volume,
                                                      state=Drive.State.MOUNTING)
    except IntegrityError as exc:
        raise VolumeBusy(f"volume {volume.label} is in another drive") from exc
    drive.mounted_volume, drive.state = volume, Drive.State.MOUNTING
    try:
        hardware.check_fault(drive, "mount")
    except hardware.DriveFault:
        set_drive(drive, mounted_volume=None)
        raise
    hardware.pause(volume.silo.robot_exchange_s + hardware.mount_seconds(drive.model))
    now = timezone.now()
    Volume.objects.filter(pk=volume.pk).update(mount_count=F("mount_count") + 1)
    set_drive(drive, state=Drive.State.IDLE, mounted_at=now, last_used_at=now)


def dismount(drive):
    volume = drive.mounted_volume
    if volume is None:
        return
    set_drive(drive, state=Drive.State.UNLOADING)
    hardware.pause(drive.model.unmount_s)
    Volume.objects.filter(pk=volume.pk).update(last_dismounted_at=timezone.now())
    set_drive(drive, state=Drive.State.IDLE, mounted_volume=None, mounted_at=None,
              mode="", current_rate_b_s=0)


def set_drive(drive, **fields):
    for key, value in fields.items():
        setattr(drive, key, value)
    drive.save(update_fields=[*fields, "updated_at"])


def drive_error(drive, error, requests=()):
    """Count an error against the drive (varying it off at the limit) and requeue its work.

    The error is the drive's: its requests go back without spending an attempt, so a faulty
    drive never fails the work another drive of the silo can do."""
    drive.refresh_from_db()
    drive.consecutive_errors += 1
    drive.error_count += 1
    drive.last_error = str(error)
    fields = ["consecutive_errors", "error_count", "last_error", "state", "updated_at"]
    drive.state = Drive.State.IDLE
    if drive.consecutive_errors >= settings.GRANARY_DRIVE_ERROR_LIMIT:
        drive.state = Drive.State.OFFLINE
        drive.offline_reason = (f"varied off after {drive.consecutive_errors} consecutive "
                                f"errors; last: {error}")
        drive.mounted_volume = None
        fields += ["offline_reason", "mounted_volume"]
        log.warning("drive %s varied off: %s", drive.name, error)
    with transaction.atomic():
        drive.save(update_fields=fields)
        if drive.state == Drive.State.OFFLINE:
            events.emit("drive.offline", f"drives/{drive.name}", {
                "drive": drive.name, "errors": drive.consecutive_errors,
                "links": {"drive": events.link(f"archive/drives/{drive.name}/")}})
    requeue(requests, f"drive {drive.name}: {error}", charge=False)


def drive_ok(drive):
    if drive.consecutive_errors:
        Drive.objects.filter(pk=drive.pk).update(consecutive_errors=0)
        drive.consecutive_errors = 0
