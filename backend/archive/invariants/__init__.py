"""The archive's promises, written once: checks over the database and the bytes.

Each check returns a list of Violation (kind, the objects at fault, a sentence); an empty list
means the promise holds. Tests call `check_all()` after each step, and reconciliation
(`services.reconcile`) records what they find and repairs what can be repaired safely. A missing
copy whose migration or recall is under way carries extra["pending"]: the archive is repairing
it already (a check right after a step may leave those out).

Records (the database alone, `records`):
- every ARCHIVED granule's file has each copy its policy asks for, VERIFIED end to end, on
  readable volumes (not SUSPECT or RETIRED) of the copy's volume group, the copies on distinct
  volumes, and no copy number the policy does not ask for;
- no two live segments of one (file, copy number, segment), no copy covering more than its file;
- each volume's live_bytes and file_count equal the sum and count of its VERIFIED copies;
- no two queued or running requests for the same work;
- every running request (but a repack, which runs without a drive) is on a drive holding a live
  lease; every queued recall has a readable verified copy to read;
- a cached file of an ARCHIVING granule, and every DIRTY cached file, has a pending migration
  for each copy still missing;
- each cache entry's file exists with the entry's size;
- a repack that is DONE left its volume recycled (not read-only, nothing live from before).

Bytes (slower, `media`):
- a volume's file exists; one shorter than its end of data is never written again and holds no
  verified copy past its real end;
- each VERIFIED copy's bytes at its data offset hash to its checksum;
- a volume's members, as read from its tar headers, match the copies catalog (no orphan member
  below the end of data, no verified copy without its member, headers naming the right file);
- each cached file hashes to its catalog checksum;
- each bucket, listed, matches the catalog's object copies: every verified copy's object is
  there with its length and its bytes hash to its checksum, and no object lies in the bucket
  that no live copy (or migration under way) names.

Layers above the archive add their own promises with `register` when their app is ready (the
archive cannot import them): distribution's order outputs, for one.

Notes are not violations: what a check saw that breaks no promise but an operator should know,
recorded beside the discrepancies and never counted with them. Bytes past a volume's recorded
end of data (a write interrupted before it was recorded, or under way) are one: nothing is
lost, the next append cuts them off, and the note says how much lies there and what it is.
"""
from dataclasses import dataclass, field

# what a violation is about
COPY_MISSING = "copy_missing"
COPY_WRONG_GROUP = "copy_wrong_group"
COPY_EXTRA = "copy_extra"
COPIES_SHARE_VOLUME = "copies_share_volume"
COPY_DUPLICATE = "copy_duplicate"
VOLUME_COUNTS = "volume_counts"
REQUEST_DUPLICATE = "request_duplicate"
REQUEST_STUCK = "request_stuck"
RECALL_UNSERVABLE = "recall_unservable"
MIGRATION_MISSING = "migration_missing"
CACHE_FILE_MISSING = "cache_file_missing"
CACHE_FILE_SIZE = "cache_file_size"
REPACK_NOT_RECYCLED = "repack_not_recycled"
VOLUME_MISSING = "volume_missing"
VOLUME_TRUNCATED = "volume_truncated"
COPY_PAST_END = "copy_past_end"
COPY_BYTES = "copy_bytes_mismatch"
MEMBER_ORPHAN = "member_orphan"
MEMBER_MISSING = "member_missing"
MEMBER_MISMATCH = "member_mismatch"
CACHE_BYTES = "cache_bytes_mismatch"
OBJECT_MISSING = "object_missing"
OBJECT_SIZE = "object_size"
OBJECT_ORPHAN = "object_orphan"
BUCKET_UNREADABLE = "bucket_unreadable"
# what a note is about (not a violation: not in KINDS)
PAST_END_OF_DATA = "past_end_of_data"

KINDS = (
    COPY_MISSING, COPY_WRONG_GROUP, COPY_EXTRA, COPIES_SHARE_VOLUME, COPY_DUPLICATE,
    VOLUME_COUNTS, REQUEST_DUPLICATE, REQUEST_STUCK, RECALL_UNSERVABLE, MIGRATION_MISSING,
    CACHE_FILE_MISSING, CACHE_FILE_SIZE, REPACK_NOT_RECYCLED, VOLUME_MISSING, VOLUME_TRUNCATED,
    COPY_PAST_END, COPY_BYTES, MEMBER_ORPHAN, MEMBER_MISSING, MEMBER_MISMATCH, CACHE_BYTES,
    OBJECT_MISSING, OBJECT_SIZE, OBJECT_ORPHAN, BUCKET_UNREADABLE,
)


@dataclass(frozen=True)
class Violation:
    """One broken promise: its kind, the objects at fault (ids) and a sentence for operators.
    `extra` carries what a repair needs beyond the ids (a copy number, a position)."""

    kind: str
    message: str
    file_id: int | None = None
    copy_id: int | None = None
    volume_id: int | None = None
    request_id: int | None = None
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def objects(self):
        return {name: value for name, value in (
            ("file", self.file_id), ("copy", self.copy_id), ("volume", self.volume_id),
            ("request", self.request_id)) if value is not None}

    def __str__(self):
        return f"{self.kind}: {self.message}"


@dataclass
class Tally:
    """What a byte check read (volumes scanned, copies and cached files hashed), and the notes
    it took (dicts with a kind and a message)."""

    volumes: int = 0
    copies: int = 0
    cache_files: int = 0
    notes: list = field(default_factory=list)


@dataclass(frozen=True)
class Registered:
    """A check from a layer above: its kinds, and for each kind that has a safe repair, the
    sentence that says what it does and the function that does it (discrepancy -> sentence)."""

    check: object
    repairs: dict


_registered = {}


def register(name, check, repairs=None):
    """Add a records check (no arguments, returns Violations) under `name`; registering the
    same name again replaces it. `repairs`: {kind: (plan sentence, apply)}."""
    _registered[name] = Registered(check, dict(repairs or {}))


def registered_repair(kind):
    """(plan sentence, apply) of a kind a registered check reports, or None."""
    for entry in _registered.values():
        if kind in entry.repairs:
            return entry.repairs[kind]
    return None


def check_records():
    """Every database-only check, the registered ones too."""
    from . import records

    checks = list(records.CHECKS) + [entry.check for entry in _registered.values()]
    return [v for check in checks for v in check()]


def check_bytes(sample=None, tally=None):
    """Every byte check: all volumes, copies and cached files, or a random sample of copies and
    cached files (every volume's length is still checked: it costs a stat)."""
    from . import media

    return media.check_bytes(sample=sample, tally=tally)


def check_all(read_bytes=False, sample=None, tally=None):
    """Every promise, the bytes too when asked (all of them, or a sample)."""
    found = check_records()
    if read_bytes:
        found += check_bytes(sample=sample, tally=tally)
    return found
