"""Emulated tape hardware: timings from the drive model, scaled; injected faults.

Bytes really move (see tape.py); only the mechanical delays are emulated. The time scale
(GRANARY_TIME_SCALE) turns them into real sleeps: 0 skips them, 1 is real time.
"""
import random
import time

from django.conf import settings

from .media import DriveError

# The drive failed an operation (mount, write, read): injected here, or reported by a SCSI drive
DriveFault = DriveError


def pause(seconds):
    scale = settings.GRANARY_TIME_SCALE
    if scale > 0 and seconds > 0:
        time.sleep(seconds * scale)


def mount_seconds(model, rng=random):
    return rng.uniform(model.mount_s_min, model.mount_s_max)


def position_seconds(model, distance_bytes):
    return model.position_s_per_gb * abs(distance_bytes) / 1e9


def transfer_seconds(model, nbytes):
    return nbytes / (model.rate_mb_s * 1e6)


def check_fault(drive, operation):
    """Raise DriveFault when a fault injected for `operation` on this drive is due.

    drive.fault maps an operation to the number of further calls that succeed first.
    """
    from .models import Drive

    remaining = (drive.fault or {}).get(operation)
    if remaining is None:
        return
    if int(remaining) <= 0:
        raise DriveFault(f"injected {operation} fault on drive {drive.name}")
    drive.fault = {**drive.fault, operation: int(remaining) - 1}
    Drive.objects.filter(pk=drive.pk).update(fault=drive.fault)
