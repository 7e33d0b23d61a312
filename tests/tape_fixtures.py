"""The tape backends the archive tests run on: the emulator (tar files) and a SCSI library
(tgt's virtual tape library on loopback, bench.tgt_library, started once per session and
stopped by its PID). A test takes `tape_kind` through its layout fixture; parametrised
indirectly with ["emulator", "scsi"] it runs on both. A test that spoils its library's drives
or its daemon starts its own (`own_library`)."""
import hashlib
import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from backend.archive.media.scsi import commands
from backend.archive.media.scsi.library import Library
from backend.archive.models import FileCopy, Volume
from backend.archive.services import paths
from bench import tgt_library, tgt_media

BOTH = pytest.mark.parametrize("tape_kind", ["emulator", "scsi"], indirect=True)
# the cartridges: the labels small_layout gives its volumes (silo1 A..., silo2 B...)
BARCODES = tgt_library.barcodes(2, 6)


def iscsi_port(first_port, span=5):
    """The first free port of first_port.. (GRANARY_TEST_ISCSI_PORT moves the range: the
    session's library takes the first five, a test's own the next five); the test skips where
    tgtd cannot run."""
    if shutil.which("tgtd") is None:
        pytest.skip("tgt is not installed: scripts/system-deps.sh installs it")
    if os.geteuid() != 0:
        pytest.skip("tgtd runs as root here (its control socket lives in /var/run/tgtd)")
    base = int(os.environ.get("GRANARY_TEST_ISCSI_PORT", 3270))
    return tgt_library.free_port(base + first_port - 3270, span)


def start_library(root, first_port, span=5, drives=2, barcodes=BARCODES, size_mb=256):
    """A library of its own in `root` on the first free port of first_port.. (iscsi_port)."""
    return tgt_library.VirtualLibrary(root, iscsi_port(first_port, span), drives, barcodes,
                                      size_mb).start()


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


@pytest.fixture
def own_library(settings, tmp_path):
    """Starts a test's own library (four cartridges a silo: the first volumes small_layout
    labels, size_mb each) and points the settings at it; it is stopped after the test."""
    started = []

    def start(size_mb=256):
        library = start_library(tmp_path / "vtl", 3275, barcodes=BARCODES[:4] + BARCODES[6:10],
                                size_mb=size_mb)
        started.append(library)
        settings.GRANARY_TAPE, settings.GRANARY_SCSI = "scsi", library.config
        ACTIVE.update(kind="scsi", library=library)
        return library

    yield start
    for library in started:
        library.stop()


@pytest.fixture
def unloaded_library(virtual_library):
    """The session library with every drive empty, before the test and after it."""
    empty_drives(virtual_library)
    yield virtual_library
    empty_drives(virtual_library)


@contextmanager
def _changer(library):
    lib = Library(library.config)
    try:
        yield lib
    finally:
        lib.close()


def cartridge_at(library, barcode):
    """(element kind, address) where the changer says the cartridge is."""
    with _changer(library) as lib:
        element, _ = lib.where_is(barcode)
        return element.kind, element.address


def home(library, barcode):
    """The cartridge back in a storage slot (the changer moves it out of a drive); its slot."""
    with _changer(library) as lib:
        element, elements = lib.where_is(barcode)
        if element.kind == commands.Changer.DRIVE:
            return _to_a_slot(lib, element, _free_slots(elements))
        return element.address


def empty_drives(library):
    """Every cartridge in a drive back to a free slot (what other tests left mounted)."""
    with _changer(library) as lib:
        elements = lib.changer.elements()
        free = _free_slots(elements)
        for e in elements:
            if e.kind == commands.Changer.DRIVE and e.full:
                _to_a_slot(lib, e, free)


def _free_slots(elements):
    return [e.address for e in elements if e.kind == commands.Changer.SLOT and not e.full]


def _to_a_slot(lib, drive, free):
    """The drive's cartridge to the slot it came from if that is free, else the first free."""
    target = drive.source if drive.source in free else free[0]
    free.remove(target)
    lib.changer.move(drive.address, target)
    return target


def copies_read_back(library, originals):
    """Every verified copy's bytes, read from tgt's backing files (not by Granary), hash with
    hashlib's MD5 to originals[file id]."""
    for volume in Volume.objects.filter(file_count__gt=0):
        stream = tgt_media.first_file(library.cartridge_file(volume.label))
        for copy in FileCopy.objects.filter(volume=volume, state="verified"):
            data = stream[copy.data_offset:copy.data_offset + copy.length]
            assert hashlib.md5(data).hexdigest() == originals[copy.file_id]


def member_file(volume):
    """Where a volume's bytes lie as files: the emulator's tar file, or the cartridge's tgt
    backing file (with tgt's block headers among them)."""
    if django_settings.GRANARY_TAPE == "scsi":
        return ACTIVE["library"].cartridge_file(volume.label)
    return Path(paths.volume_path(volume))


def volume_bytes(volume):
    """The volume's tar stream read without Granary: the file, or the cartridge's data records
    up to its filemark (bench.tgt_media)."""
    path = member_file(volume)
    if ACTIVE.get("kind") == "scsi":
        return tgt_media.first_file(path)
    return path.read_bytes()


def flip_byte(volume, offset):
    """Damage one byte of the volume's stream at `offset`, on the medium itself."""
    if ACTIVE.get("kind") == "scsi":
        ACTIVE["library"].flip(volume.label, offset)
    else:
        tgt_library.flip_byte(member_file(volume), offset)
