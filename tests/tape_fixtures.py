"""The tape backends the archive tests run on: the emulator (tar files) and a SCSI library
(tgt's virtual tape library on loopback, started once per session by scripts/tape-library.sh
and stopped by its PID). A test takes `tape_kind` through its layout fixture; parametrised
indirectly with ["emulator", "scsi"] it runs on both."""
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "tape-library.sh"
BOTH = pytest.mark.parametrize("tape_kind", ["emulator", "scsi"], indirect=True)
# the cartridges: the labels small_layout gives its volumes (silo1 A..., silo2 B...)
BARCODES = [f"{p}{n:05d}" for p in "AB" for n in range(1, 7)]


def _free_port(first, span=10):
    for port in range(first, first + span):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free iSCSI port in {first}..{first + span - 1}")


class VirtualLibrary:
    """tgt on 127.0.0.1:port with `drives` drives and the cartridges `barcodes`."""

    def __init__(self, root, port, drives=2, barcodes=BARCODES, size_mb=256):
        self.root, self.port, self.drives, self.barcodes = Path(root), port, drives, barcodes
        self.size_mb = size_mb
        self.env = {}

    def start(self):
        out = subprocess.run(
            [str(SCRIPT), "start", str(self.root), str(self.port), str(self.drives),
             ",".join(self.barcodes), "X", str(self.size_mb)],
            check=True, capture_output=True, text=True, timeout=60).stdout
        self.env = dict(line.split("=", 1) for line in out.split() if "=" in line)
        return self

    def stop(self):
        subprocess.run([str(SCRIPT), "stop", str(self.root)], check=False, timeout=60)

    @property
    def pid(self):
        return int(self.env["TGTD_PID"])

    @property
    def config(self):
        return {"portal": self.env["GRANARY_SCSI_PORTAL"],
                "target": self.env["GRANARY_SCSI_TARGET"],
                "changer": self.env["GRANARY_SCSI_CHANGER_LUN"],
                "drives": self.env["GRANARY_SCSI_DRIVE_LUNS"].split(","),
                "lock_dir": str(self.root / "locks")}

    def cartridge_file(self, barcode):
        return Path(self.env["GRANARY_SCSI_MEDIA"]) / barcode

    def adm(self, *args):
        """tgtadm on this library's control port (to change its drives for a fault)."""
        subprocess.run(["tgtadm", "-C", str(self.port), "--lld", "iscsi", *args], check=True,
                       capture_output=True, timeout=30)


def start_library(root, first_port, span=5, **kwargs):
    """A library on the first free port of first_port.. (GRANARY_TEST_ISCSI_PORT moves the
    range: the session's library takes the first five, a test's own the next five)."""
    if shutil.which("tgtd") is None:
        pytest.skip("tgt is not installed: scripts/system-deps.sh installs it")
    if os.geteuid() != 0:
        pytest.skip("tgtd runs as root here (its control socket lives in /var/run/tgtd)")
    base = int(os.environ.get("GRANARY_TEST_ISCSI_PORT", 3270))
    port = _free_port(base + first_port - 3270, span)
    return VirtualLibrary(root, port, **kwargs).start()


@pytest.fixture(scope="session")
def virtual_library(tmp_path_factory):
    library = start_library(tmp_path_factory.mktemp("vtl"), 3270)
    yield library
    library.stop()


@pytest.fixture
def tape_kind(request, settings):
    """'emulator' unless the test is parametrised with 'scsi': then the volumes are the
    session library's cartridges (relabelled by each test's layout)."""
    kind = getattr(request, "param", "emulator")
    ACTIVE.clear()
    ACTIVE["kind"] = kind
    if kind == "scsi":
        library = request.getfixturevalue("virtual_library")
        settings.GRANARY_TAPE = "scsi"
        settings.GRANARY_SCSI = library.config
        ACTIVE["library"] = library
    yield kind
    ACTIVE.clear()


ACTIVE = {}


def member_file(volume):
    """Where a volume's bytes lie as files: the emulator's tar file, or the cartridge's tgt
    backing file (with tgt's block headers among them)."""
    from django.conf import settings

    from backend.archive.services import paths

    if settings.GRANARY_TAPE == "scsi":
        return ACTIVE["library"].cartridge_file(volume.label)
    return Path(paths.volume_path(volume))


def volume_bytes(volume):
    """The volume's tar stream read without Granary: the file, or the cartridge's data records
    up to its filemark (bench.tgt_media)."""
    from bench import tgt_media

    path = member_file(volume)
    if ACTIVE.get("kind") == "scsi":
        return tgt_media.first_file(path)
    return path.read_bytes()


def flip_byte(volume, offset):
    """Damage one byte of the volume's stream at `offset`, on the medium itself."""
    from bench import tgt_media

    path, at = member_file(volume), offset
    if ACTIVE.get("kind") == "scsi":
        at = tgt_media.file_offset(path, offset)
    with open(path, "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0xFF]))
