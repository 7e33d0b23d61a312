"""One snapshot indexed for the smart policy: reads assigned to copies, writes per group, the
mounts worth making and the drive caps that hold some back."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .snapshot import (
    AUDIT,
    FILLING,
    IDLE,
    OFFLINE,
    OPERATOR,
    PRIORITY,
    READ,
    READABLE,
    SCRATCH,
    UNLOADING,
    WRITE,
    Volume,
)


@dataclass
class Candidate:
    mode: str
    volume: Volume
    requests: list
    nbytes: int
    oldest: float
    priority: int
    group: str | None = None
    copies: dict = field(default_factory=dict)
    share_use: float = 0.0


def _best_priority(requests):
    return min(PRIORITY.get(k, PRIORITY[AUDIT]) for k in {r.klass for r in requests})


class View:
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
        # silos with a drive that can mount: a copy in any other silo can only wait
        self.silos_online = {d.silo for d in snap.drives if d.state != OFFLINE}
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
        readable = {}  # per volume, looked up once: a long queue names few volumes many times
        active, mine, cache_full = self.active, self.me.volume, self.snap.cache_full
        for r in reads:
            copies = []
            for c in r.copies:
                ok = readable.get(c.volume)
                if ok is None:
                    ok = readable[c.volume] = self._readable(c.volume)
                if ok:
                    copies.append(c)
            if not copies:
                continue
            if cache_full and r.klass != AUDIT:
                self.blocked.update(c.volume for c in copies)
                continue
            mounted = [c for c in copies if c.volume in active]
            if mounted:
                chosen = next((c for c in mounted if c.volume == mine), mounted[0])
                self.reads[chosen.volume].append((r, chosen))
                continue
            pending.append((r, copies))
            for c in copies:
                tally[c.volume] += c.length
        ranks = {label: self._copy_rank(label, tally) for label in tally}
        for r, copies in pending:
            best = copies[0] if len(copies) == 1 else min(copies, key=lambda c: ranks[c.volume])
            self.reads[best.volume].append((r, best))

    def _copy_rank(self, label, tally):
        """A copy in a silo with a drive online first (a silo whose drives are all offline, or
        whose storage manager is down, serves nothing until it is back), then a volume that
        can be mounted now, then the most queued; on a tie, one in the asking drive's silo (so
        each silo's drives see work), then by label."""
        vol = self.volumes[label]
        waits = label in self.busy or self.recently_dismounted(vol)
        return (vol.silo not in self.silos_online, waits, -tally[label],
                vol.silo != self.me.silo, label)

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
            found.append(Candidate(READ, vol, reqs, nbytes, oldest, priority,
                                    copies={r.id: c for r, c in pairs},
                                    share_use=self.share_use(reqs)))
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
                found.append(Candidate(WRITE, vol, reqs, nbytes, oldest, priority, group))
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

    def share_use(self, requests):
        """How much of its share the neediest kind among `requests` was served: reads served
        lately over its weight (a kind with no weight set weighs 1). 0 without weights."""
        weights = self.snap.weights
        if not weights:
            return 0.0
        served = self.snap.served or {}
        return min(served.get(k, 0) / weights.get(k, 1.0) for k in {r.share for r in requests})

    def rank(self, c):
        """Priority class first; within it the kind furthest below its fair share (weights
        set), then work past its age limit oldest first, then the mount that moves the most
        bytes."""
        limit = self.cfg.read_max_wait_s if c.mode == READ else self.cfg.write_max_wait_s
        if self.now - c.oldest >= limit:
            return (c.priority, c.share_use, 0, c.oldest, c.volume.label)
        return (c.priority, c.share_use, 1, -c.nbytes, c.volume.label)

    def next_wake(self):
        future = [t for t in self.wakes if t > self.now]
        return min(future) if future else None
