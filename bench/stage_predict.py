"""What bench stage compares the live run with: the simulator's prediction of the time to last
file for the same layout and drives, and the live run's own time on the drives' emulated clock.

The live drives run in threads, each delay of the emulated hardware (robot, mount, transfer,
unmount) slept at GRANARY_TIME_SCALE and added to its drive's clock; the time to last file is
the busiest drive's clock (every recall was queued before the drives started). The simulator
replays the same recalls (file, volume, position, length) on the same number of drives of the
same model under the same scheduler settings, in virtual time."""
import threading
from collections import defaultdict
from contextlib import contextmanager


@contextmanager
def emulated_clock(scale):
    """Drive id -> emulated seconds spent, while the block runs (drives in threads)."""
    from django.conf import settings

    from backend.archive import hardware
    from backend.archive.services import manager

    clocks, local = defaultdict(float), threading.local()
    original_pause, original_run = hardware.pause, manager.run_drive

    def pause(seconds):
        clocks[getattr(local, "drive", None)] += max(0.0, seconds)
        original_pause(seconds)

    def run_drive(drive_id, *args, **kwargs):
        local.drive = drive_id
        try:
            return original_run(drive_id, *args, **kwargs)
        finally:
            local.drive = None

    saved_scale = settings.GRANARY_TIME_SCALE
    settings.GRANARY_TIME_SCALE = scale
    hardware.pause, manager.run_drive = pause, run_drive
    try:
        yield clocks
    finally:
        hardware.pause, manager.run_drive = original_pause, original_run
        settings.GRANARY_TIME_SCALE = saved_scale


def workload(files, drives):
    """The simulator's workload for `files` (their first verified tape copy) on `drives`
    drives of the layout's model; robot time is part of each mount, as the live mount has it."""
    from backend.archive.models import Drive, FileCopy

    drive = Drive.objects.select_related("model", "silo").first()
    model, robot = drive.model, drive.silo.robot_exchange_s
    copies = (FileCopy.objects.filter(file_id__in=[f.pk for f in files], copy_number=1,
                                      state=FileCopy.State.VERIFIED)
              .select_related("volume").order_by("volume__label", "data_offset"))
    volumes, recalls = {}, []
    for c in copies:
        volumes[c.volume.label] = max(volumes.get(c.volume.label, 0), c.data_offset + c.length)
        recalls.append([c.volume.label, c.data_offset, c.length])
    return {
        "name": "bench-stage",
        "hardware": {
            "silos": 1, "drives": drives, "data_paths": drives,
            "data_path_rate_mb_s": model.rate_mb_s, "cache_gb": 10**6, "robot_exchange_s": 0.0,
            "drive_model": {"name": model.name, "rate_mb_s": model.rate_mb_s,
                            "mount_s": [robot + model.mount_s_min, robot + model.mount_s_max],
                            "unmount_s": model.unmount_s,
                            "position_s_per_gb": model.position_s_per_gb,
                            "capacity_gb": model.capacity_bytes / 1e9},
        },
        "recalls": {"volumes": volumes, "files": recalls},
    }


def predicted_s(files, drives):
    """The simulator's time to last file, under the scheduler settings the live drives use."""
    from backend.archive.models import Drive
    from backend.archive.services.manager import scheduler_config
    from backend.archive.simulator import Simulator

    model = Drive.objects.select_related("model").first().model
    result = Simulator(workload(files, drives), hours=24, config=scheduler_config(model)).run()
    return result["last_read_s"], result["mounts"]
