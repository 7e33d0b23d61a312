"""The policies: `decide`, the smart one, and `fifo`, the naive baseline (see the package)."""
from __future__ import annotations

from operator import attrgetter

from .snapshot import (
    AUDIT,
    DEFAULT_CONFIG,
    DISMOUNT,
    FILLING,
    IDLE,
    KEEP,
    MOUNT,
    OFFLINE,
    PRIORITY,
    READ,
    READABLE,
    RETIRED,
    SCRATCH,
    SUSPECT,
    WAIT,
    WRITE,
    Decision,
    SchedulerConfig,
    Serve,
    Snapshot,
)
from .view import View

LOWEST = PRIORITY[AUDIT]


def _wait(until=None, reason=""):
    return Decision(WAIT, wait_until=until, reason=reason)


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
    # sorted() is stable: ties keep their order in `requests`
    ordered = sorted(requests, key=lambda r: (PRIORITY.get(r.klass, LOWEST), r.submitted))
    serve, position = [], vol.end_of_data
    for r in ordered:
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
    view = View(snap, config)
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
    view = View(snap, config, index_requests=False)
    me = view.me
    if me.state != IDLE:
        return _wait(reason=f"drive is {me.state}")
    if me.volume:
        return Decision(DISMOUNT, me.volume, reason="one request per mount")
    # A stable sort on arrival alone keeps queue order among equal times (and is cheap on a
    # long queue that is nearly in order already).
    for r in sorted(snap.requests, key=attrgetter("submitted")):
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
