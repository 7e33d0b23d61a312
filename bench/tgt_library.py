"""tgt's virtual tape library on loopback (scripts/tape-library.sh): empty SSC drives and an SMC
changer holding labelled cartridges. One handle for all that start one: `bench tape`, the chaos
run on SCSI tape (bench/chaos/tapelib.py) and the tests (tests/tape_fixtures.py). It starts the
daemon, kills it -9 and starts it again on the same cartridges, stops it by its PID, and finds
the cartridges' backing files (read without Granary by bench.tgt_media). No Django: the tests'
plugin imports it before the settings are configured."""
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from bench import tgt_media

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "tape-library.sh"


# tgtd takes the iSCSI port as its control socket's number too (scripts/tape-library.sh: one per
# library), and refuses a number above this: a library's port is below 32768, never one the
# kernel hands out for "any free port" (32768-60999 here).
PORT_MAX = 32767


def free_port(first, span=10):
    """The first port of first..first + span - 1 no one listens on, for a library; one left in
    TIME_WAIT by the last library is free to tgtd (it binds with SO_REUSEADDR), so the probe
    binds so too."""
    for port in range(first, min(first + span, PORT_MAX + 1)):
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free iSCSI port in {first}..{min(first + span, PORT_MAX + 1) - 1}")


def barcodes(silos, per_silo):
    """The labels operations.install_layout gives: silo i's volumes PREFIX00001.. (A, B, ...)."""
    return [f"{chr(ord('A') + s)}{n:05d}" for s in range(silos) for n in range(1, per_silo + 1)]


class VirtualLibrary:
    """tgt in folder `root` on 127.0.0.1:port with `drives` drives and the cartridges
    `barcodes` of size_mb each; start() again after kill() finds the same cartridges."""

    def __init__(self, root, port, drives, barcodes, size_mb):
        if not 0 < port <= PORT_MAX:
            raise ValueError(f"a library's iSCSI port is 1..{PORT_MAX} (tgtd's control number "
                             f"is the same), not {port}")
        self.dir, self.port, self.drives = Path(root), port, drives
        self.barcodes, self.size_mb, self.env = list(barcodes), size_mb, {}

    def start(self):
        out = subprocess.run(
            [str(SCRIPT), "start", str(self.dir), str(self.port), str(self.drives),
             ",".join(self.barcodes), "A", str(self.size_mb)],
            check=True, capture_output=True, text=True, timeout=120).stdout
        self.env = dict(line.split("=", 1) for line in out.split() if "=" in line)
        return self

    def stop(self):
        stop(self.dir)

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

    def adm(self, *args):
        """tgtadm on this library's control port (to change its drives or slots for a fault)."""
        subprocess.run(["tgtadm", "-C", str(self.port), "--lld", "iscsi", *args], check=True,
                       capture_output=True, timeout=30)

    def cartridge_file(self, label):
        return self.dir / "media" / label

    def sizes(self):
        """{cartridge: bytes of its backing file}: what grows while a drive writes."""
        return {p.name: p.stat().st_size for p in (self.dir / "media").iterdir()}

    def flip(self, label, stream_offset):
        """Flip one byte of a cartridge's tar stream, in its backing file."""
        path = self.cartridge_file(label)
        flip_byte(path, tgt_media.file_offset(path, stream_offset))


def stop(root):
    """Stop the library in folder `root` (by its PID: the script's stop), if it started one."""
    if (Path(root) / "tgtd.pid").exists():
        subprocess.run([str(SCRIPT), "stop", str(root)], check=False, timeout=60,
                       capture_output=True)


def flip_byte(path, at):
    """Damage a file's byte at `at` (a cartridge's backing file, a tape, cache or object
    file)."""
    with open(path, "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0xFF]))


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False
