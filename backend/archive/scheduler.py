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
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

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
    # (services.SPAN_MIN); smaller files that fit still go.
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
    """

    id: object
    kind: str
    klass: str
    submitted: float
    copies: tuple[Copy, ...] = ()
    group: str | None = None
    size: int = 0
    silo: str | None = None

    @property
    def priority(self):
        return PRIORITY.get(self.klass, PRIORITY[AUDIT])


@dataclass(frozen=True)
class Snapshot:
    """Everything a policy looks at. `drive` is the id of the idle drive asking for work.

    `volumes` must hold at least every volume a drive or a request refers to, the filling
    volumes of the queued groups and a scratch volume per idle drive; more is harmless.
    """

    drive: str
    drives: Sequence[Drive]
    volumes: Mapping[str, Volume]
    requests: Sequence[Request]
    now: float
    cache_full: bool = False


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


@dataclass
class _Candidate:
    mode: str
    volume: Volume
    requests: list
    nbytes: int
    oldest: float
    priority: int
    group: str | None = None
    copies: dict = field(default_factory=dict)


def _best_priority(requests):
    return min(PRIORITY.get(k, PRIORITY[AUDIT]) for k in {r.klass for r in requests})


def _wait(until=None, reason=""):
    return Decision(WAIT, wait_until=until, reason=reason)


class _View:
    """Indices over one snapshot, built once per decision (the queue's only when asked)."""

    def __init__(self, snap, config, index_requests=True):
        self.snap, self.cfg, self.now = snap, config, snap.now
        self.volumes = snap.volumes
        by_id = {d.id: d for d in snap.drives}
        if snap.drive not in by_id:
            raise ValueError(f"drive {snap.drive!r} is not in the snapshot")
        self.me = me = by_id[snap.drive]
        self.wakes = []
        self.busy = {d.volume: d for d in snap.drives if d.volume}
        self.active = {v: d for v, d in self.busy.items() if d.state not in (UNLOADING, OFFLINE)}
        peers = [d for d in snap.drives
                 if d.silo == me.silo and d.id != me.id and d.state != OFFLINE]
        self.online = len(peers) + 1
        working = [d for d in peers if d.volume and d.state != UNLOADING]
        self.reading = sum(1 for d in working if d.mode == READ)
        self.writing = sum(1 for d in working if d.mode == WRITE)
        self.idle_drives = sum(1 for d in peers if d.state == IDLE)
        self.free_drives = sum(1 for d in peers if d.state == IDLE and not d.volume)
        self.group_mounts = defaultdict(int)
        for label, d in self.active.items():
            vol = self.volumes.get(label)
            if vol is not None and d.mode == WRITE and vol.group:
                self.group_mounts[vol.group] += 1
        self._targets = None
        if not index_requests:
            return
        reads, self.writes = [], defaultdict(list)
        for r in snap.requests:
            if r.kind == READ:
                reads.append(r)
            elif r.size > 0 and (r.silo is None or r.silo == me.silo):
                self.writes[r.group].append(r)
        self._assign_reads(reads)

    def _assign_reads(self, reads):
        """Pick a copy for every read: a mounted one, else the one whose volume has most queued.

        Recalls wait while the cache is full (audits need no cache room); `blocked` remembers
        the volumes that have such waiting recalls.
        """
        self.reads = defaultdict(list)
        self.blocked = set()
        tally = defaultdict(int)
        pending = []
        for r in reads:
            copies = [c for c in r.copies if self._readable(c.volume)]
            if not copies:
                continue
            if self.snap.cache_full and r.klass != AUDIT:
                self.blocked.update(c.volume for c in copies)
                continue
            mounted = [c for c in copies if c.volume in self.active]
            if mounted:
                mine = [c for c in mounted if c.volume == self.me.volume]
                self.reads[(mine or mounted)[0].volume].append((r, (mine or mounted)[0]))
                continue
            pending.append((r, copies))
            for c in copies:
                tally[c.volume] += c.length
        for r, copies in pending:
            best = min(copies, key=lambda c: self._copy_rank(c, tally))
            self.reads[best.volume].append((r, best))

    def _copy_rank(self, copy, tally):
        """A volume that can be mounted now first, then the most queued; on a tie, one in the
        asking drive's silo (so each silo's drives see work), then by label."""
        vol = self.volumes[copy.volume]
        waits = copy.volume in self.busy or self.recently_dismounted(vol)
        return (waits, -tally[copy.volume], vol.silo != self.me.silo, copy.volume)

    def _readable(self, label):
        vol = self.volumes.get(label)
        return vol is not None and vol.state in READABLE

    def recently_dismounted(self, vol):
        return (vol.last_dismount is not None
                and self.now - vol.last_dismount < self.cfg.remount_delay_s)

    def write_target(self, group, urgent, remount_delay=True):
        """A volume of `group` to write in the drive's silo: the fullest filling volume not
        dismounted lately, else a scratch volume (which joins the group), else, when the work
        is urgent or old, a filling volume dismounted lately."""
        if self._targets is None:
            filling, scratch = defaultdict(list), []
            for vol in self.volumes.values():
                if vol.silo != self.me.silo or vol.label in self.busy:
                    continue
                if vol.state == SCRATCH and vol.capacity > 0:
                    scratch.append(vol)
                elif vol.state == FILLING and vol.free >= self.cfg.span_min_bytes:
                    filling[vol.group].append(vol)
            scratch.sort(key=lambda v: v.label)
            self._targets = filling, scratch
        filling, scratch = self._targets
        ranked = sorted(filling.get(group, ()), key=lambda v: (-v.end_of_data, v.label))
        fresh = [v for v in ranked if not (remount_delay and self.recently_dismounted(v))]
        if fresh:
            return fresh[0]
        if scratch:
            return scratch[0]
        if ranked and urgent:
            return ranked[0]
        if ranked:
            self.wakes.append(min(v.last_dismount for v in ranked) + self.cfg.remount_delay_s)
        return None

    def candidates(self):
        """Mounts worth making now from this drive's silo, before drive caps."""
        cfg, now = self.cfg, self.now
        found = []
        for label, pairs in self.reads.items():
            vol = self.volumes[label]
            if vol.silo != self.me.silo or label in self.busy:
                continue
            reqs = [r for r, _ in pairs]
            nbytes = sum(c.length for _, c in pairs)
            oldest = min(r.submitted for r in reqs)
            priority = _best_priority(reqs)
            urgent = priority == PRIORITY[OPERATOR]
            wait_s = cfg.read_idle_wait_s if self.idle_drives else cfg.read_max_wait_s
            if not (urgent or now - oldest >= wait_s
                    or nbytes >= cfg.read_min_bytes or len(reqs) >= cfg.read_min_files):
                self.wakes.append(oldest + wait_s)
                continue
            if (self.recently_dismounted(vol) and not urgent
                    and now - oldest < cfg.remount_override_age_s):
                self.wakes.append(min(vol.last_dismount + cfg.remount_delay_s,
                                      oldest + cfg.remount_override_age_s))
                continue
            found.append(_Candidate(READ, vol, reqs, nbytes, oldest, priority,
                                    copies={r.id: c for r, c in pairs}))
        for group, reqs in self.writes.items():
            mounts = self.group_mounts[group]
            nbytes = sum(r.size for r in reqs)
            oldest = min(r.submitted for r in reqs)
            priority = _best_priority(reqs)
            urgent = priority == PRIORITY[OPERATOR]
            aged = mounts == 0 and now - oldest >= cfg.write_max_wait_s
            if not (urgent or aged or nbytes >= cfg.write_min_bytes * (mounts + 1)
                    or len(reqs) >= cfg.write_min_files * (mounts + 1)):
                if mounts == 0:
                    self.wakes.append(oldest + cfg.write_max_wait_s)
                continue
            vol = self.write_target(group, urgent or aged)
            if vol is not None:
                found.append(_Candidate(WRITE, vol, reqs, nbytes, oldest, priority, group))
        return found

    def allowed(self, candidates):
        """Drop the candidates that would break a drive cap. When a silo has too few drives
        for both reserves and they shut out each other, only the hard write cap holds."""
        cfg = self.cfg
        reads_waiting = any(c.mode == READ for c in candidates)
        writes_waiting = any(c.mode == WRITE for c in candidates)
        capped = cfg.max_write_drives is not None and self.writing >= cfg.max_write_drives
        uncapped = [c for c in candidates if c.mode == READ or not capped]

        def reserved(c):
            if c.mode == WRITE:
                return reads_waiting and self.writing + 1 > self.online - cfg.min_read_drives
            return writes_waiting and self.reading + 1 > self.online - cfg.min_write_drives

        kept = [c for c in uncapped if not reserved(c)] or uncapped
        if len(kept) < len(candidates):
            self.wakes.append(self.now + cfg.recheck_s)
        return kept

    def rank(self, c):
        """Priority class first; within it, work past its age limit oldest first, then the
        mount that moves the most bytes."""
        limit = self.cfg.read_max_wait_s if c.mode == READ else self.cfg.write_max_wait_s
        if self.now - c.oldest >= limit:
            return (c.priority, 0, c.oldest, c.volume.label)
        return (c.priority, 1, -c.nbytes, c.volume.label)

    def next_wake(self):
        future = [t for t in self.wakes if t > self.now]
        return min(future) if future else None


def _elevator(pairs, head, cfg):
    """Reads in position order from the head: up to the end, then back down (Enstore)."""
    ahead = sorted((p for p in pairs if p[1].position >= head), key=lambda p: p[1].position)
    behind = sorted((p for p in pairs if p[1].position < head), key=lambda p: -p[1].position)
    serve, nbytes = [], 0
    for r, c in ahead + behind:
        if serve and (len(serve) >= cfg.batch_max_files or nbytes >= cfg.batch_max_bytes):
            break
        serve.append(Serve(r.id, c.position, c.length))
        nbytes += c.length
    return tuple(serve)


def _appends(requests, vol, cfg):
    """Writes in priority then arrival order, appended at the end of data until the volume or
    the batch is full. A file larger than the room left spans if the room is worth starting."""
    ordered = sorted(enumerate(requests), key=lambda p: (p[1].priority, p[1].submitted, p[0]))
    serve, position = [], vol.end_of_data
    for _, r in ordered:
        done = position - vol.end_of_data
        if serve and (len(serve) >= cfg.batch_max_files or done >= cfg.batch_max_bytes):
            break
        room = vol.capacity - position
        if r.size <= room:
            serve.append(Serve(r.id, position, r.size))
            position += r.size
        elif room >= cfg.span_min_bytes:
            serve.append(Serve(r.id, position, room))
            break
    return tuple(serve)


def _keep(view, vol):
    """Work for the drive's own mounted volume: its current mode first, then the other."""
    me = view.me
    modes = (WRITE, READ) if me.mode == WRITE else (READ, WRITE)
    for mode in modes:
        if mode == READ and view.reads.get(vol.label):
            serve = _elevator(view.reads[vol.label], me.position, view.cfg)
            return Decision(KEEP, vol.label, READ, serve=serve, reason="recalls for this volume")
        writable = vol.state in (SCRATCH, FILLING) and vol.group
        if mode == WRITE and writable and view.writes.get(vol.group):
            serve = _appends(view.writes[vol.group], vol, view.cfg)
            if serve:
                return Decision(KEEP, vol.label, WRITE, vol.group, serve,
                                reason="writes for this volume group")
    return None


def _mount(view, c):
    if c.mode == READ:
        pairs = [(r, c.copies[r.id]) for r in c.requests]
        serve = _elevator(pairs, 0, view.cfg)
        return Decision(MOUNT, c.volume.label, READ, serve=serve,
                        reason=f"{len(pairs)} recalls, {c.nbytes} bytes")
    serve = _appends(c.requests, c.volume, view.cfg)
    return Decision(MOUNT, c.volume.label, WRITE, c.group, serve,
                    reason=f"{len(c.requests)} writes, {c.nbytes} bytes for {c.group}")


def decide(snap: Snapshot, config: SchedulerConfig = DEFAULT_CONFIG) -> Decision:
    """The smart policy (see the module docstring and SchedulerConfig)."""
    view = _View(snap, config)
    me = view.me
    if me.state != IDLE:
        return _wait(reason=f"drive is {me.state}")
    if me.volume:
        vol = view.volumes.get(me.volume)
        if vol is None:
            return Decision(DISMOUNT, me.volume, reason="volume unknown")
        kept = _keep(view, vol) if vol.state not in (SUSPECT, RETIRED, OFFLINE) else None
        return kept or _leave(view, vol)
    for candidate in sorted(view.allowed(view.candidates()), key=view.rank):
        decision = _mount(view, candidate)
        if decision.serve:
            return decision
    if snap.cache_full and view.blocked:
        view.wakes.append(view.now + config.recheck_s)
    return _wait(view.next_wake(), "nothing worth a mount yet")


def _leave(view, vol):
    """The mounted volume has nothing to serve: dismount now, or stay a while for more."""
    cfg, me = view.cfg, view.me
    elsewhere = view.allowed(view.candidates())
    if elsewhere and view.free_drives == 0:
        return Decision(DISMOUNT, vol.label, reason="other work needs this drive")
    if vol.label in view.blocked:
        view.wakes.append(view.now + cfg.recheck_s)
        return _wait(view.next_wake(), "recalls for this volume wait for cache room")
    if me.mode == WRITE or vol.state not in READABLE:
        return Decision(DISMOUNT, vol.label, reason="write queue empty")
    until = (me.last_used or me.mounted_at or view.now) + cfg.dismount_delay_s
    if view.now >= until:
        return Decision(DISMOUNT, vol.label, reason="dismount delay over")
    view.wakes.append(until)
    return _wait(view.next_wake(), "dismount delay")


def fifo(snap: Snapshot, config: SchedulerConfig = DEFAULT_CONFIG) -> Decision:
    """The naive baseline: the oldest request this drive can serve, alone, on its own mount;
    dismount after it. Reads take their first usable copy; recalls still wait for cache room.
    Only `span_min_bytes` of the config applies."""
    view = _View(snap, config, index_requests=False)
    me = view.me
    if me.state != IDLE:
        return _wait(reason=f"drive is {me.state}")
    if me.volume:
        return Decision(DISMOUNT, me.volume, reason="one request per mount")
    ordered = sorted(enumerate(snap.requests), key=lambda p: (p[1].submitted, p[0]))
    for _, r in ordered:
        if r.kind == READ:
            if snap.cache_full and r.klass != AUDIT:
                continue
            copy = next((c for c in r.copies if view._readable(c.volume)
                         and view.volumes[c.volume].silo == me.silo
                         and c.volume not in view.busy), None)
            if copy is not None:
                return Decision(MOUNT, copy.volume, READ,
                                serve=(Serve(r.id, copy.position, copy.length),), reason="fifo")
        elif r.size > 0 and r.silo in (None, me.silo):
            vol = view.write_target(r.group, urgent=True, remount_delay=False)
            if vol is None:
                continue
            length = min(r.size, vol.free)
            if length < r.size and length < config.span_min_bytes:
                continue
            return Decision(MOUNT, vol.label, WRITE, r.group,
                            (Serve(r.id, vol.end_of_data, length),), reason="fifo")
    return _wait(reason="nothing this drive can serve")


POLICIES = {"smart": decide, "fifo": fifo}
