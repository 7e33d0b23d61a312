"""The tape drive scheduler: what an idle drive should do next.

A pure policy over plain data, so the live storage manager (over a snapshot of database rows)
and the simulator (over its virtual state) run the same code. An idle drive *pulls* its next
piece of work, as in CERN CTA, by passing a `Snapshot` to a policy; the answer is a `Decision`:
keep the mounted volume and serve these requests, dismount it, mount a volume and serve these
requests, or wait (and ask again at `wait_until`, or when something changes).

Two policies share one interface, `policy(snapshot, config) -> Decision` (see POLICIES):
- `decide`, the smart one: batches per volume, elevator reads, dismount and remount delays,
  read/write drive caps, priorities, copy choice, write aggregation per volume group;
- `fifo`, the naive baseline: the oldest request first, one mount per request.

Sizes and positions are bytes; times are seconds on any clock the caller likes (the live
manager uses epoch seconds, the simulator its virtual clock). The thresholds live in
`SchedulerConfig`; `SchedulerConfig.for_drive` scales its byte thresholds to a drive model.
"""
from .policies import POLICIES, decide, fifo
from .snapshot import (
    AUDIT,
    DEFAULT_CONFIG,
    DISMOUNT,
    FILLING,
    FULL,
    GB,
    IDLE,
    KEEP,
    MIGRATION,
    MOUNT,
    MOUNTING,
    OFFLINE,
    OPERATOR,
    PRIORITY,
    READ,
    READ_ONLY,
    READABLE,
    READING,
    REPACK,
    RETIRED,
    SCRATCH,
    SUSPECT,
    UNLOADING,
    USER,
    WAIT,
    WRITE,
    WRITING,
    Copy,
    Decision,
    Drive,
    Request,
    SchedulerConfig,
    Serve,
    Snapshot,
    Volume,
)

__all__ = [
    "AUDIT", "DEFAULT_CONFIG", "DISMOUNT", "FILLING", "FULL", "GB", "IDLE", "KEEP", "MIGRATION",
    "MOUNT", "MOUNTING", "OFFLINE", "OPERATOR", "POLICIES", "PRIORITY", "READ", "READABLE",
    "READING", "READ_ONLY", "REPACK", "RETIRED", "SCRATCH", "SUSPECT", "UNLOADING", "USER",
    "WAIT", "WRITE", "WRITING", "Copy", "Decision", "Drive", "Request", "SchedulerConfig",
    "Serve", "Snapshot", "Volume", "decide", "fifo",
]
