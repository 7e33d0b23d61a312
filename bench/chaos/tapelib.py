"""The chaos run on SCSI tape (`--tape scsi`): the tape volumes are cartridges of tgt's virtual
tape library (scripts/tape-library.sh) on a loopback port of the run's own, one SSC drive per
logical drive of the layout (each logical drive bound to its own), started before the layout
labels its cartridges and stopped with the run (also by the outer process when the child dies).

Its faults: the target killed -9 while a drive writes (and started again on the same
cartridges), a byte flipped in a cartridge's backing file; its check reads each copy's bytes
from the cartridges' backing files without Granary (bench.tgt_media)."""
import os
import signal
import struct
import subprocess
import time
from pathlib import Path

from django.conf import settings

from bench import tgt_media

SCRIPT = Path(settings.BASE_DIR) / "scripts" / "tape-library.sh"
KINDS = ("emulator", "scsi")


def library_dir(run_dir):
    return Path(run_dir) / "vtl"


class TapeLibrary:
    """The run's library: start (drives, barcodes, size), kill -9 and start again, stop."""

    def __init__(self, run_dir, port):
        self.dir, self.port, self.env, self.args = library_dir(run_dir), port, {}, None

    def start(self, drives=None, barcodes=None, size_mb=None):
        if drives is not None:
            self.args = [str(self.port), str(drives), ",".join(barcodes), "A", str(size_mb)]
        out = subprocess.run([str(SCRIPT), "start", str(self.dir), *self.args], check=True,
                             capture_output=True, text=True, timeout=120).stdout
        self.env = dict(line.split("=", 1) for line in out.split() if "=" in line)
        return self

    @property
    def pid(self):
        return int(self.env["TGTD_PID"])

    @property
    def config(self):
        """settings.GRANARY_SCSI of this library."""
        return {"portal": self.env["GRANARY_SCSI_PORTAL"],
                "target": self.env["GRANARY_SCSI_TARGET"],
                "changer": self.env["GRANARY_SCSI_CHANGER_LUN"],
                "drives": self.env["GRANARY_SCSI_DRIVE_LUNS"].split(","),
                "lock_dir": str(self.dir / "locks")}

    def environment(self):
        """What Granary's processes need to reach it (the settings read them)."""
        return {"GRANARY_TAPE": "scsi", "GRANARY_SCSI_PORTAL": self.env["GRANARY_SCSI_PORTAL"],
                "GRANARY_SCSI_TARGET": self.env["GRANARY_SCSI_TARGET"],
                "GRANARY_SCSI_CHANGER": self.env["GRANARY_SCSI_CHANGER_LUN"],
                "GRANARY_SCSI_DRIVES": self.env["GRANARY_SCSI_DRIVE_LUNS"],
                "GRANARY_SCSI_LOCK_DIR": str(self.dir / "locks")}

    def kill(self):
        """kill -9 tgtd (by its PID) and wait until it is dead; its PID file goes too (a
        zombie nobody reaped yet would pass the script's `kill -0` for a running daemon)."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        while _alive(self.pid):
            time.sleep(0.05)
        (self.dir / "tgtd.pid").unlink(missing_ok=True)

    def sizes(self):
        """{cartridge: bytes of its backing file}: what grows while a drive writes."""
        return {p.name: p.stat().st_size for p in (self.dir / "media").iterdir()}

    def wait_for_a_write(self, patience_s, writing=None):
        """Until a cartridge's backing file grows or `writing()` names a drive writing (a
        batch of small files is written in less than one look at the files), at most
        patience_s; what was seen writing, or None."""
        deadline, before = time.monotonic() + patience_s, self.sizes()
        while time.monotonic() < deadline:
            time.sleep(0.02)
            now = self.sizes()
            grown = [name for name, size in now.items() if size > before.get(name, 0)]
            if grown:
                return grown[0]
            before = now
            seen = writing() if writing else None
            if seen:
                return seen
        return None

    def cartridge_file(self, label):
        return self.dir / "media" / label

    def stop(self):
        stop(self.dir.parent)


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def stop(run_dir):
    """Stop a run's library (by its PID: the script's stop), if it started one."""
    where = library_dir(run_dir)
    if (where / "tgtd.pid").exists():
        subprocess.run([str(SCRIPT), "stop", str(where)], check=False, timeout=60,
                       capture_output=True)


def barcodes(silos, per_silo):
    """The labels operations.install_layout gives: silo i's volumes PREFIX00001.. (A, B, ...)."""
    return [f"{chr(ord('A') + s)}{n:05d}" for s in range(silos) for n in range(1, per_silo + 1)]


class StreamFiles:
    """A cartridge's tar stream read from its backing file, the last few kept in memory."""

    def __init__(self, library, keep=2):
        self.library, self.keep, self.streams = library, keep, {}

    def read(self, label, offset, length):
        if label not in self.streams:
            if len(self.streams) >= self.keep:
                self.streams.pop(next(iter(self.streams)))
            try:
                self.streams[label] = tgt_media.first_file(self.library.cartridge_file(label))
            except (OSError, ValueError, struct.error):   # unreadable: no copy there
                self.streams[label] = b""
        return self.streams[label][offset:offset + length]


def flip(library, label, stream_offset):
    """Flip one byte of a cartridge's stream in its backing file."""
    path = library.cartridge_file(label)
    at = tgt_media.file_offset(path, stream_offset)
    with open(path, "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0xFF]))
