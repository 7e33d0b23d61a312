"""A SCSI tape library: an SMC changer and its SSC drives, each cartridge known by its barcode
(the volume's label). A cartridge is mounted by MOVE MEDIUM from wherever READ ELEMENT STATUS
finds it into a free drive (unloading an idle one when none is free), and its label is read
and checked at every mount.

Processes share the library through lock files: one per cartridge (held while it is read or
written), one per drive (held while it is used) and one for the changer (held while elements
are read and moved), so two workers never use one drive, nor move a cartridge in use.
"""
import fcntl
import os
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from .commands import Changer, NotReady, TapeDrive
from .transport import Iscsi, SgIo


class CartridgeMissing(OSError):
    """The cartridge is in no slot, port or drive of the library."""


class NoDriveFree(OSError):
    """Every drive stayed busy for longer than the mount waits."""


class LabelMismatch(OSError):
    """The cartridge in the drive does not carry the label asked for."""


def transport_for(config, unit):
    """A device node (/dev/sgN) goes through SG_IO; a number is a LUN of the iSCSI target."""
    if isinstance(unit, str) and unit.startswith("/dev/"):
        return SgIo(unit)
    return Iscsi(config["portal"], config["target"], int(unit))


@dataclass
class Mounted:
    """A cartridge in a drive, for the time of one operation. `position` is the record the
    head is before (None when unknown); `locate` is False once the drive refused LOCATE."""

    drive: TapeDrive
    index: int
    barcode: str
    moved: bool
    position: int | None = None
    state: dict = field(default_factory=dict)
    cache: dict = field(default_factory=dict)    # the last record read, while mounted


class Library:
    """`config`: portal and target (iSCSI) and changer/drives as LUNs or /dev/sg paths."""

    def __init__(self, config, mount_wait_s=120):
        self.config, self.mount_wait_s = config, mount_wait_s
        self.changer = Changer(transport_for(config, config["changer"]))
        self.drives = [TapeDrive(transport_for(config, unit)) for unit in config["drives"]]
        self.drive_state = [{} for _ in self.drives]   # per drive: what it refused
        key = f"{config.get('portal', '')}-{config.get('target', '')}".replace("/", "_")
        self.lock_dir = config.get("lock_dir") or os.path.join(
            tempfile.gettempdir(), f"granary-scsi-{key.replace(':', '_')}")
        os.makedirs(self.lock_dir, exist_ok=True)
        self._addresses = None
        self._held = threading.local()

    def where(self):
        return self.config.get("portal") or self.config["changer"]

    # -- locks -------------------------------------------------------------------------------

    def _lock(self, name, wait=True):
        fd = os.open(os.path.join(self.lock_dir, name), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return None
        return fd

    @staticmethod
    def _unlock(fd):
        if fd is not None:
            os.close(fd)

    # -- elements ----------------------------------------------------------------------------

    def drive_addresses(self):
        """The drives' element addresses, in the order of config['drives']."""
        if self._addresses is None:
            self._addresses = sorted(e.address for e in self.changer.elements(
                (Changer.DRIVE,)))
        return self._addresses

    def where_is(self, barcode):
        """(element, all elements) of the cartridge, element None when it is not there."""
        elements = self.changer.elements()
        for e in elements:
            if e.full and e.barcode == barcode:
                return e, elements
        return None, elements

    # -- mounting ----------------------------------------------------------------------------

    @contextmanager
    def held(self, barcode):
        """Keep the cartridge mounted (once it is) for this thread's operations on it until
        the end of the block: a batch of recalls shares one mount, position and last record."""
        held = self._held.__dict__.setdefault("map", {})
        if barcode in held:
            yield
            return
        held[barcode] = None
        try:
            yield
        finally:
            entry = held.pop(barcode, None)
            if entry is not None:
                entry[1].close()

    @contextmanager
    def mounted(self, barcode, drive=None):
        """The cartridge in a drive (any free one, or the drive of index `drive` in
        config['drives']: the one a logical drive is bound to), locked for this operation (or
        the thread's held mount); label checking is the caller's (it knows the format)."""
        held = getattr(self._held, "map", {})
        if barcode not in held:
            with self._mounted(barcode, drive) as m:
                yield m
            return
        if held[barcode] is None:
            stack = ExitStack()
            held[barcode] = (stack.enter_context(self._mounted(barcode, drive)), stack)
        m = held[barcode][0]
        m.moved = False           # its label was checked when it was mounted
        yield m

    @contextmanager
    def _mounted(self, barcode, drive=None):
        cartridge = self._lock(f"cartridge-{barcode}")
        try:
            index, drive_lock, moved = self._mount(barcode, drive)
            try:
                m = Mounted(self.drives[index], index, barcode, moved,
                            state=self.drive_state[index])
                self._ready(m.drive)
                yield m
            finally:
                self._unlock(drive_lock)
        finally:
            self._unlock(cartridge)

    def _mount(self, barcode, drive=None):
        deadline = time.monotonic() + self.mount_wait_s
        while True:
            changer = self._lock("changer")
            try:
                got = self._try_mount(barcode, drive)
            finally:
                self._unlock(changer)
            if got:
                return got
            if time.monotonic() > deadline:
                which = "no drive" if drive is None else f"drive {self.config['drives'][drive]}"
                raise NoDriveFree(f"{which} of library {self.where()} came free for "
                                  f"cartridge {barcode} in {self.mount_wait_s} s")
            time.sleep(0.2)

    def _try_mount(self, barcode, drive=None):
        """(drive index, its lock, moved) once the cartridge (whose lock the caller holds) is
        in a drive this caller holds: `drive`, or any when None; None: try again."""
        element, elements = self.where_is(barcode)
        if element is None:
            raise CartridgeMissing(f"cartridge {barcode} is not in library {self.where()} "
                                   "(no slot, port or drive holds it)")
        addresses = self.drive_addresses()
        if element.kind == Changer.DRIVE:
            index = addresses.index(element.address)
            if drive is None or index == drive:
                lock = self._lock(f"drive-{index}", wait=False)
                return (index, lock, False) if lock is not None else None
            if not self._out_of(index, element, elements):   # in another drive: home first
                return None
            element, elements = self.where_is(barcode)
        drives = {e.address: e for e in elements if e.kind == Changer.DRIVE}
        for index, address in enumerate(addresses):
            if drive is not None and index != drive:
                continue
            lock = self._lock(f"drive-{index}", wait=False)
            if lock is None:
                continue
            try:
                if drives[address].full and not self._unload(drives[address], elements):
                    self._unlock(lock)
                    continue
                self.changer.move(element.address, address)
            except BaseException:     # a failed move leaves the drive free for the next try
                self._unlock(lock)
                raise
            return index, lock, True
        return None

    def _unload(self, held, elements):
        """Put an idle drive's cartridge back in its home slot (or any empty slot)."""
        other = self._lock(f"cartridge-{held.barcode}", wait=False)
        if other is None:
            return False
        try:
            return self._to_slot(held, elements)
        finally:
            self._unlock(other)

    def _out_of(self, index, element, elements):
        """The caller's cartridge out of drive `index` (not the one it is bound to) into its
        slot, once no one holds that drive; False: that drive is busy."""
        lock = self._lock(f"drive-{index}", wait=False)
        if lock is None:
            return False
        try:
            return self._to_slot(element, elements)
        finally:
            self._unlock(lock)

    def _to_slot(self, held, elements):
        empty = [e.address for e in elements if e.kind == Changer.SLOT and not e.full]
        home = held.source if held.source in empty else (empty or [None])[0]
        if home is None:
            return False
        self.changer.move(held.address, home)
        return True

    @staticmethod
    def _ready(drive, tries=50):
        for _ in range(tries):
            try:
                drive.test_unit_ready()
                return
            except NotReady as exc:
                if exc.asc == 0x3A:   # medium not present: it will not come by waiting
                    raise
                time.sleep(0.1)
        drive.test_unit_ready()

    def reset(self):
        """Drop every session to the library: after one failed (a target restarted, a link
        lost), the others are as dead, and each would cost a failure to find out."""
        for device in [self.changer, *self.drives]:
            device.transport.reset()

    def close(self):
        for device in [self.changer, *self.drives]:
            device.close()


_libraries, _libraries_lock = {}, threading.Lock()


def library_for(config):
    """One Library per configuration and process (its iSCSI sessions are the process's)."""
    key = (os.getpid(), repr(sorted(config.items())))
    with _libraries_lock:
        if key not in _libraries:
            _libraries[key] = Library(config)
        return _libraries[key]
