"""The simulator's bulk-recall load (what bench stage compares the live drives with): a batch
of recalls asked at once, and when the last one is in the cache, against a hand count."""
from backend.archive.scheduler import SchedulerConfig
from backend.archive.simulator import Simulator

MOUNT, UNMOUNT, RATE_MB_S = 30.0, 15.0, 100


def workload(drives, volumes, files_per_volume, size):
    return {
        "name": "recalls", "hardware": {
            "silos": 1, "drives": drives, "data_paths": drives, "data_path_rate_mb_s": RATE_MB_S,
            "cache_gb": 1000, "robot_exchange_s": 0.0,
            "drive_model": {"name": "m", "rate_mb_s": RATE_MB_S, "mount_s": [MOUNT, MOUNT],
                            "unmount_s": UNMOUNT, "position_s_per_gb": 0.0,
                            "capacity_gb": 100}},
        "recalls": {
            "volumes": {f"V{v}": files_per_volume * size for v in range(volumes)},
            "files": [[f"V{v}", n * size, size] for v in range(volumes)
                      for n in range(files_per_volume)]},
    }


CONFIG = SchedulerConfig(read_max_wait_s=0, read_idle_wait_s=0, dismount_delay_s=0,
                         remount_delay_s=0)


def test_one_drive_reads_volume_after_volume():
    size = 10**8  # 1 s at 100 MB/s
    result = Simulator(workload(1, 3, 5, size), hours=1, config=CONFIG).run()
    # by hand: each volume is mounted, read (5 s) and, but the last, unmounted
    assert result["mounts"] == 3
    assert result["last_read_s"] == 3 * (MOUNT + 5) + 2 * UNMOUNT


def test_drives_share_the_volumes():
    size = 10**8
    result = Simulator(workload(2, 4, 5, size), hours=1, config=CONFIG).run()
    assert result["mounts"] == 4
    assert result["last_read_s"] == 2 * (MOUNT + 5) + UNMOUNT
