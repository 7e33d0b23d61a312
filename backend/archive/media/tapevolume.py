"""One emulated tape volume (a tar file) as a medium. What only tape has stays tape's own: the
drives mount it and the scheduler batches and orders the work, and writes are appended by the
mover through a VolumeWriter, a batch at a time, then read back. A copy on it is a member: it
lies at a data offset, for a length; deleting one only releases it in the catalog, and a repack
reclaims its room."""
import contextlib
import os

from backend.catalog import checksums

from .. import tape
from . import CopyMissing, Health, Listed, MediumError


class TapeVolume:
    medium = "tape"

    def __init__(self, path, label=""):
        self.path, self.label = path, label or os.path.basename(path)

    def held(self):
        """Nothing to keep between operations on a file."""
        return contextlib.nullcontext()

    def writer(self, end_of_data):
        """A writer appending members after `end_of_data` (tape.VolumeWriter)."""
        return tape.VolumeWriter(self.path, end_of_data)

    def read(self, data_offset, length, checksum_type, sink=None, drop_cache=False):
        """Stream a member's bytes to sink; their checksum. A member past the volume's end is
        a CopyMissing; a volume file that cannot be opened a MediumError of the whole volume."""
        try:
            return tape.read(self.path, data_offset, length, checksum_type, sink=sink,
                             drop_cache=drop_cache)
        except tape.VolumeMissing as exc:
            raise MediumError(f"volume {self.label}: {exc}", whole=True) from exc
        except tape.VolumeError as exc:
            raise CopyMissing(f"volume {self.label}: {exc}") from exc

    def read_many(self, members, drop_cache=False):
        """Checksums of [(data_offset, length, checksum_type)], in one pass (tape.read_many)."""
        return tape.read_many(self.path, members, drop_cache=drop_cache)

    def scan(self):
        """Every member its tar headers list, the label first (tape.scan)."""
        return tape.scan(self.path)

    def size(self):
        """How many bytes the volume holds (FileNotFoundError when its file is gone)."""
        return os.path.getsize(self.path)

    def format(self, headers):
        """A fresh volume holding only its label; its end of data."""
        return tape.label(self.path, self.label, headers)

    def cut(self, end_of_data):
        """End the volume at `end_of_data` (the members past it are gone)."""
        tape.cut(self.path, end_of_data)

    def verify(self, data_offset, length, checksum_type, checksum):
        return checksums.same(checksum_type, self.read(data_offset, length, checksum_type),
                              checksum)

    def listing(self):
        """The members its tar headers list (not the label), for reconciliation."""
        try:
            members = tape.scan(self.path)
        except (FileNotFoundError, tape.VolumeError) as exc:
            raise MediumError(f"volume {self.label}: {exc}", whole=True) from exc
        for m in members:
            if not m.is_label:
                yield Listed(m.name, m.size, extra={"position": m.position,
                                                    "data_offset": m.data_offset,
                                                    "headers": m.headers})

    def delete(self, data_offset=None):
        """Nothing to do on the medium: a released member's room is reclaimed by a repack."""

    def health(self):
        if not os.path.exists(self.path):
            return Health(False, f"the file of volume {self.label} is missing")
        return Health(True)
