"""The storage seam: the kinds of storage a copy can live on, behind one small interface.

A *medium* writes a copy (streamed, its checksum proven on the way), reads a copy or a byte
range of it, verifies it, deletes it, lists what it holds (for reconciliation) and says whether
it is healthy. The emulated tape (tar-file volumes, driven by the drives and the scheduler, whose
batching, mounts and positions are tape's own business), a SCSI tape library (the same tar
volumes on cartridges, GRANARY_TAPE=scsi) and an S3-compatible object store are its kinds
here; each raises MediumError with a reason an operator can act on.

Nothing here imports Django models: a medium is given where a copy lies (a volume's path and
offsets, a bucket's store, name and key) and answers in plain values.
"""
from dataclasses import dataclass, field


class MediumError(OSError):
    """The medium could not do what was asked. `whole` is true when the medium itself fails
    (unreachable, refused credentials, no such bucket): no other copy on it can be read or
    written now, so movers stop and wait instead of charging each request."""

    def __init__(self, reason, whole=False):
        super().__init__(reason)
        self.reason, self.whole = reason, whole

    def __str__(self):
        return self.reason


class WriteProtected(MediumError):
    """The cartridge refuses writes: it stays readable and takes no more copies."""


class DriveError(IOError):
    """The drive (or the path to it) failed, not the medium: the drive is charged, the work
    goes back uncharged and the cartridge stays in service. hardware.DriveFault is this."""


class CopyMissing(MediumError):
    """The copy is not where the catalog says (object deleted, member past the end)."""


@dataclass
class Stored:
    """What a write left on the medium: where, how long, and the medium's own fingerprint."""

    key: str
    length: int
    etag: str = ""
    version_id: str = ""
    position: int = 0      # where a pack's member starts (its header), 0 for a whole object
    data_offset: int = 0   # where a pack's member's bytes start, 0 for a whole object


@dataclass
class Listed:
    """One thing a medium holds, as its listing says."""

    key: str
    length: int
    etag: str = ""
    extra: dict = field(default_factory=dict)


@dataclass
class Health:
    ok: bool
    reason: str = ""
