"""A workload file and the hardware it describes, in bytes and seconds."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .. import scheduler as sch

MB, GB, TB = 10**6, 10**9, 10**12


def load_workload(path):
    """Read a workload file (nas26 or gsfc97 format)."""
    return json.loads(Path(path).read_text())


@dataclass(frozen=True)
class Hardware:
    """The workload's hardware, in bytes and seconds."""

    silos: int
    drives: int
    model: str
    rate: float
    mount_s: tuple[float, float]
    unmount_s: float
    position_s_per_gb: float
    capacity: int
    data_paths: int
    path_rate: float
    cache: int
    robot_exchange_s: float

    @classmethod
    def of(cls, workload):
        hw = workload["hardware"]
        model = hw["drive_model"]
        lo, hi = model["mount_s"]
        return cls(
            silos=int(hw.get("silos", 1)), drives=int(hw["drives"]), model=model["name"],
            rate=model["rate_mb_s"] * MB, mount_s=(float(lo), float(hi)),
            unmount_s=float(model["unmount_s"]),
            position_s_per_gb=float(model["position_s_per_gb"]),
            capacity=int(model["capacity_gb"] * GB), data_paths=int(hw["data_paths"]),
            path_rate=hw["data_path_rate_mb_s"] * MB, cache=int(hw["cache_gb"] * GB),
            robot_exchange_s=float(hw.get("robot_exchange_s", 10.0)),
        )

    @property
    def bound(self):
        """The best the hardware can move: every drive streaming, within the data paths."""
        return min(self.drives * self.rate, self.data_paths * self.path_rate)

    def scheduler_config(self, **overrides):
        return sch.SchedulerConfig.for_drive(
            self.rate / MB, self.capacity / GB, sum(self.mount_s) / 2, self.unmount_s,
            **overrides,
        )
