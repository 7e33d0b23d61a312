"""What a scheduling policy reads and answers: the states, the thresholds (SchedulerConfig),
the snapshot of drives, volumes and queued requests, and the decision."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

GB = 10**9

READ, WRITE = "read", "write"
KEEP, MOUNT, DISMOUNT, WAIT = "keep", "mount", "dismount", "wait"

# Request classes and their priority, most urgent first (ArchiveRequest.Priority in models.py).
OPERATOR, USER, MIGRATION, REPACK, AUDIT = "operator", "user", "migration", "repack", "audit"
PRIORITY = {OPERATOR: 0, USER: 1, MIGRATION: 2, REPACK: 3, AUDIT: 3}

# Volume states (Volume.State in models.py, plus offline: out of its silo).
SCRATCH, FILLING, FULL, READ_ONLY = "scratch", "filling", "full", "read_only"
SUSPECT, RETIRED, OFFLINE = "suspect", "retired", "offline"
READABLE = frozenset({FILLING, FULL, READ_ONLY})

# Drive states (Drive.State in models.py).
IDLE, MOUNTING, READING, WRITING, UNLOADING = "idle", "mounting", "reading", "writing", "unloading"


@dataclass(frozen=True)
class SchedulerConfig:
    """Every threshold of the smart policy, in one place.

    The defaults suit a current drive (hundreds of MB/s, multi-TB media);
    `for_drive` scales the byte thresholds to another drive model.
    """

    # A read mount is worth it when the volume's queued recalls reach this many bytes or files...
    # (CTA's mount criteria: minimum bytes or files queued, or the oldest request's age.)
    read_min_bytes: int = 100 * GB
    read_min_files: int = 1000
    # ...or its oldest recall waited this long: someone is waiting for the data.
    read_max_wait_s: float = 900.0
    # While another drive of the silo stands idle, a recall waits only this long: long enough
    # to gather a burst for the same volume (ENDIT waits a while after the last request for a
    # tape), not so long that a user waits on an idle drive.
    read_idle_wait_s: float = 60.0
    # A write mount is worth it per volume group at this many bytes (ENDIT archives at 500 GB)...
    write_min_bytes: int = 500 * GB
    # (The file count bounds a group's queue, and so the work of each decision.)
    write_min_files: int = 10_000
    # ...or when its oldest file waited this long (ENDIT: 6 h); dirty data must reach tape.
    write_max_wait_s: float = 6 * 3600.0
    # An idle read mount stays mounted this long in case more recalls for it come (Enstore's
    # dismount delay); a couple of minutes covers a user's next request. Write mounts dismount
    # as soon as their group's queue is empty: waiting would only trickle single files, and the
    # next write mount aggregates afresh.
    dismount_delay_s: float = 120.0
    # Don't remount a volume dismounted less than this ago (ENDIT: 2 h; mounts wear tapes)...
    remount_delay_s: float = 2 * 3600.0
    # ...unless its oldest request has waited as long as a recall may (operator requests always
    # may): the delay gathers trickles into one mount, it must not starve a user.
    remount_override_age_s: float = 900.0
    # Drive caps per silo, so neither direction starves: at most this many drives writing
    # (None: no cap but the reserve below), and this many kept for the other direction whenever
    # it has work worth a mount (CTA caps read and write drives per tenant; Phobos keeps a
    # minimum and maximum per operation).
    max_write_drives: int | None = None
    min_read_drives: int = 1
    min_write_drives: int = 1
    # One decision serves at most this much, so a queued group can be shared by several drives
    # (CTA divides write queues by the mounts already serving them) and fresh urgent work is
    # looked at between batches.
    batch_max_bytes: int = 2000 * GB
    batch_max_files: int = 10_000
    # Don't start a file on a volume with less room than this: put it on the next volume
    # (services.writing.SPAN_MIN); smaller files that fit still go.
    span_min_bytes: int = 16 << 20
    # Ask again this soon when only the cache or a drive cap holds work back.
    recheck_s: float = 60.0

    @classmethod
    def for_drive(cls, rate_mb_s, capacity_gb, mount_s, unmount_s, **overrides):
        """Byte thresholds scaled to a drive model, the delays as in the defaults.

        A write mount should stream for 20x its fixed cost (mount + unmount), so at least 95 %
        of a write session moves bytes, but needs no more than a whole volume; a read mount for
        5x (it has a user waiting), or half a volume. A batch is at most one volume.
        """
        rate = rate_mb_s * 1e6
        overhead_s = mount_s + unmount_s
        capacity = int(capacity_gb * GB)
        scaled = {
            "write_min_bytes": int(min(capacity, 20 * overhead_s * rate)),
            "read_min_bytes": int(min(capacity / 2, 5 * overhead_s * rate)),
            "batch_max_bytes": capacity,
            "span_min_bytes": min(cls.span_min_bytes, capacity // 100),
        }
        return cls(**{**scaled, **overrides})


DEFAULT_CONFIG = SchedulerConfig()


@dataclass(frozen=True)
class Drive:
    """A drive as the scheduler sees it. `mode` says what its mounted volume is used for."""

    id: str
    silo: str
    model: str = ""
    state: str = IDLE
    volume: str | None = None
    mode: str | None = None
    position: int = 0
    mounted_at: float | None = None
    last_used: float | None = None


@dataclass(frozen=True)
class Volume:
    """A cartridge. `end_of_data` is the bytes used: the next write starts there."""

    label: str
    silo: str
    group: str | None = None
    state: str = SCRATCH
    capacity: int = 0
    end_of_data: int = 0
    last_dismount: float | None = None

    @property
    def free(self):
        return max(0, self.capacity - self.end_of_data)


@dataclass(frozen=True)
class Copy:
    """Where a recall can read its bytes: one segment of one copy of a file."""

    volume: str
    position: int
    length: int


@dataclass(frozen=True)
class Request:
    """A queued read (recall, audit) or write (one copy of a file, to one volume group).

    Reads list their candidate copies; writes name their group, the bytes still to write and,
    optionally, the silo their copy must go to (copies of a file go to different silos).
    `share` is the kind of work a recall serves (order, stage, subscription...) for the fair
    share of drives between kinds (Snapshot.weights).
    """

    id: object
    kind: str
    klass: str
    submitted: float
    copies: tuple[Copy, ...] = ()
    group: str | None = None
    size: int = 0
    silo: str | None = None
    share: str = ""

    @property
    def priority(self):
        return PRIORITY.get(self.klass, PRIORITY[AUDIT])


@dataclass(frozen=True)
class Snapshot:
    """Everything a policy looks at. `drive` is the id of the idle drive asking for work.

    `volumes` must hold at least every volume a drive or a request refers to, the filling
    volumes of the queued groups and a scratch volume per idle drive; more is harmless.

    Fair share: `weights` gives each kind of recall (Request.share) its weight, `served` the
    reads each kind was served lately; among mounts of one priority class the one for the kind
    furthest below its share goes first. Without weights, shares play no part.
    """

    drive: str
    drives: Sequence[Drive]
    volumes: Mapping[str, Volume]
    requests: Sequence[Request]
    now: float
    cache_full: bool = False
    weights: Mapping[str, float] | None = None
    served: Mapping[str, float] | None = None


@dataclass(frozen=True)
class Serve:
    """Serve one request on the decided volume: `length` bytes at `position`.

    A write of a file larger than the room left gets a shorter length: the rest stays queued
    and goes to the next volume (the file spans).
    """

    request: object
    position: int
    length: int


@dataclass(frozen=True)
class Decision:
    """What the asking drive does next. A scratch volume mounted for writing joins `group`."""

    action: str
    volume: str | None = None
    mode: str | None = None
    group: str | None = None
    serve: tuple[Serve, ...] = ()
    wait_until: float | None = None
    reason: str = ""
