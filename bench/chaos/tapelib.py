"""The chaos run on SCSI tape (`--tape scsi`): the tape volumes are cartridges of tgt's virtual
tape library (bench.tgt_library) in the run's folder on a loopback port of the run's own, one
SSC drive per logical drive of the layout (each logical drive bound to its own), started before
the layout labels its cartridges and stopped with the run (also by the outer process when the
child dies).

Its faults: the target killed -9 while a drive writes (and started again on the same
cartridges), a byte flipped in a cartridge's backing file; its check reads each copy's bytes
from the cartridges' backing files without Granary (bench.tgt_media)."""
import struct
import time
from pathlib import Path

from bench import tgt_library, tgt_media

KINDS = ("emulator", "scsi")


def library_dir(run_dir):
    return Path(run_dir) / "vtl"


class TapeLibrary(tgt_library.VirtualLibrary):
    """The run's library, in its folder; it also tells when a drive writes (to kill it then)."""

    def __init__(self, run_dir, port, drives, barcodes, size_mb):
        super().__init__(library_dir(run_dir), port, drives, barcodes, size_mb)

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


def stop(run_dir):
    """Stop a run's library (by its PID), if it started one."""
    tgt_library.stop(library_dir(run_dir))


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

