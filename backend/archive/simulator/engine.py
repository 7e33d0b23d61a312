"""The event loop of the simulator: drives, robot, data paths and cache on a virtual clock,
every choice of what to mount, serve or dismount asked of the scheduler."""
from __future__ import annotations

import heapq
import math
import random
from dataclasses import replace

from .. import scheduler as sch
from .bound import allowed_utilisation
from .loads import Gsfc97Load, Lto9Load, Nas26Load, RecallsLoad
from .workload import GB, MB, TB, Hardware, load_workload

CACHE_FULL = 0.9  # recalls wait while the cache is this full
# Scratch volumes shown per silo beyond one per drive (the pool itself never runs out).
SCRATCH_SPARE = 2
# The storage manager looks at the queue this often; a drive that finishes its work asks at once.
POLL_S = 5.0


class _Drive:
    """A simulated drive: scheduler-visible state plus its plan and its time accounts."""

    def __init__(self, drive_id, silo, model):
        self.id, self.silo, self.model = drive_id, silo, model
        self.state, self.volume, self.mode, self.head = sch.IDLE, None, None, 0
        self.mounted_at = self.last_used = None
        self.plan = []
        self.activity, self.since = "idle", 0.0
        self.times = dict.fromkeys(("transfer", "mount", "position", "idle", "unmount"), 0.0)
        self.session, self.session_bytes = None, 0
        self.memo = None

    def snapshot(self):
        return sch.Drive(self.id, self.silo, self.model, self.state, self.volume, self.mode,
                         self.head, self.mounted_at, self.last_used)


class Simulator:
    """One run of one workload under one policy. `run()` returns the result dict."""

    def __init__(self, workload, policy="smart", hours=24.0, seed=1, config=None):
        if policy not in sch.POLICIES:
            raise ValueError(f"unknown policy {policy!r}; choose from {sorted(sch.POLICIES)}")
        self.workload, self.policy_name = workload, policy
        self.policy = sch.POLICIES[policy]
        self.hw = Hardware.of(workload)
        self.hours, self.end = float(hours), float(hours) * 3600.0
        self.seed = seed
        self.rng = random.Random(f"{seed}-drives")
        self.load_rng = random.Random(f"{seed}-load")
        self.now = 0.0
        self._events, self._seq = [], 0
        self.version = 0
        self.silos = [f"s{i}" for i in range(self.hw.silos)]
        self.drives = [_Drive(f"{silo}-d{i:02d}", silo, self.hw.model)
                       for i, silo in ((i, self.silos[i % self.hw.silos])
                                       for i in range(self.hw.drives))]
        self.robot_free = dict.fromkeys(self.silos, 0.0)
        self.volumes, self.filling = {}, set()
        self.scratch = {s: [] for s in self.silos}
        self._labels = 0
        self.queue = {}
        self.read_refs = {}
        self.write_left, self.read_submitted = {}, {}
        self.cache_used = 0
        self.flows, self.flow_rate, self.flow_clock = {}, self.hw.rate, 0.0
        self.mounts = self.asks = 0
        self.bytes_read = self.bytes_written = 0
        self.offered = {sch.READ: 0, sch.WRITE: 0}
        self.offered_recalls, self.offered_groups = [], {}
        self.latencies = []
        self.session_time = {sch.READ: 0.0, sch.WRITE: 0.0}
        self.session_bytes = {sch.READ: 0, sch.WRITE: 0}
        for silo in self.silos:
            self._top_up_scratch(silo)
        self.load = _load_class(workload)(self)
        self.config = config or self.hw.scheduler_config(**self.load.config_overrides())

    # --- events -----------------------------------------------------------------------------

    def at(self, when, fn, *args):
        self._seq += 1
        heapq.heappush(self._events, (when, self._seq, fn, args))

    def run(self):
        self.load.start()
        self.at(0.0, self._tick)
        while self._events:
            when, _, fn, args = heapq.heappop(self._events)
            if when > self.end:
                break
            self.now = when
            fn(*args)
        self.now = self.end
        return self._result()

    # --- volumes, queue and cache -------------------------------------------------------------

    def new_volume(self, silo, group=None, state=sch.SCRATCH, end_of_data=0):
        self._labels += 1
        label = f"V{self._labels:06d}"
        self.volumes[label] = sch.Volume(label, silo, group, state, self.hw.capacity, end_of_data)
        if state == sch.SCRATCH:
            self.scratch[silo].append(label)
        elif state == sch.FILLING:
            self.filling.add(label)
        return label

    def _top_up_scratch(self, silo):
        """An unlimited scratch pool, shown a few at a time."""
        per_silo = self.hw.drives // self.hw.silos + SCRATCH_SPARE
        while len(self.scratch[silo]) < per_silo:
            self.new_volume(silo)

    def lay_out(self, group, silo, sizes):
        """Append files to the group's volumes in the silo, as archived before the run;
        returns each file's segments (a file spans when it does not fit) as scheduler Copies."""
        placed = []
        for size in sizes:
            segments, left = [], size
            while left > 0:
                label = self._holding_tip(group, silo)
                vol = self.volumes[label]
                part = min(left, vol.free)
                segments.append(sch.Copy(label, vol.end_of_data, part))
                self._advance(label, vol.end_of_data + part)
                left -= part
            placed.append(segments)
        return placed

    def _holding_tip(self, group, silo):
        for label in sorted(self.filling):
            vol = self.volumes[label]
            if vol.group == group and vol.silo == silo and vol.free:
                return label
        return self.new_volume(silo, group, sch.FILLING)

    def _advance(self, label, end_of_data):
        vol = self.volumes[label]
        state = sch.FULL if end_of_data >= vol.capacity else vol.state
        self.volumes[label] = replace(vol, end_of_data=end_of_data, state=state)
        if state == sch.FULL:
            self.filling.discard(label)

    def submit(self, request):
        self.queue[request.id] = request
        if request.kind == sch.READ:
            self.read_submitted[request.id] = request.submitted
            self.offered[sch.READ] += request.copies[0].length
            self.offered_recalls.append(request.copies)
            for c in request.copies:
                self.read_refs[c.volume] = self.read_refs.get(c.volume, 0) + 1
        else:
            self.write_left[request.id] = request.size
            self.offered[sch.WRITE] += request.size
            self.offered_groups[request.group] = (self.offered_groups.get(request.group, 0)
                                                  + request.size)
        self.version += 1

    def cache_full(self):
        return self.cache_used >= CACHE_FULL * self.hw.cache

    def cache_room(self, nbytes):
        return self.cache_used + nbytes <= self.hw.cache

    def use_cache(self, nbytes):
        self.cache_used += nbytes
        self.version += 1

    def free_cache(self, nbytes):
        self.cache_used -= nbytes
        self.version += 1
        self.load.cache_freed()

    # --- asking the scheduler -------------------------------------------------------------------

    def _tick(self):
        self.at(self.now + POLL_S, self._tick)
        for silo in self.silos:
            self._round(silo)

    def _round(self, silo):
        """Each idle drive with a volume asks; empty idle drives ask in turn until one is told
        to wait (the others would be told the same). A drive told to wait asks again only once
        something changed or its wait is over: the policy's answer would be the same."""
        for d in self.drives:
            if d.silo == silo and d.state == sch.IDLE and d.volume and self._stale(d):
                self._ask(d)
        for d in self.drives:
            if d.silo == silo and d.state == sch.IDLE and not d.volume:
                if not self._stale(d) or self._ask(d) == sch.WAIT:
                    break

    def _stale(self, d):
        if d.memo is None:
            return True
        version, until = d.memo
        return version != self.version or (until is not None and self.now >= until)

    def _snapshot(self, d):
        labels = set(self.filling)
        labels.update(self.read_refs)
        for drive in self.drives:
            if drive.volume:
                labels.add(drive.volume)
        for silo in self.silos:
            labels.update(self.scratch[silo])
        vols = {label: self.volumes[label] for label in labels}
        return sch.Snapshot(d.id, [x.snapshot() for x in self.drives], vols,
                            list(self.queue.values()), self.now, self.cache_full())

    def _ask(self, d):
        self.asks += 1
        decision = self.policy(self._snapshot(d), self.config)
        action = decision.action
        d.memo = (self.version, decision.wait_until) if action == sch.WAIT else None
        if action == sch.KEEP:
            self._take(d, decision)
            d.mode = decision.mode
            self._next_item(d)
        elif action == sch.MOUNT:
            self._mount(d, decision)
        elif action == sch.DISMOUNT:
            self._dismount(d)
        return action

    def _take(self, d, decision):
        """Take the decided requests off the queue; a spanning write leaves its rest queued."""
        for item in decision.serve:
            r = self.queue[item.request]
            if r.kind == sch.WRITE and item.length < r.size:
                self.queue[r.id] = replace(r, size=r.size - item.length)
                continue
            del self.queue[r.id]
            for c in r.copies:
                self.read_refs[c.volume] -= 1
                if not self.read_refs[c.volume]:
                    del self.read_refs[c.volume]
        d.plan = list(decision.serve)
        self.version += 1

    # --- drive mechanics ----------------------------------------------------------------------

    def _account(self, d, activity):
        d.times[d.activity] += self.now - d.since
        d.activity, d.since = activity, self.now

    def _mount(self, d, decision):
        self.mounts += 1
        vol = self.volumes[decision.volume]
        if vol.state == sch.SCRATCH:
            self.scratch[vol.silo].remove(vol.label)
            self._top_up_scratch(vol.silo)
            vol = replace(vol, state=sch.FILLING, group=decision.group)
            self.volumes[vol.label] = vol
            self.filling.add(vol.label)
        self.version += 1
        d.state, d.volume, d.mode, d.head = sch.MOUNTING, vol.label, decision.mode, 0
        d.session = (self.now, decision.mode)
        self._take(d, decision)
        self._account(d, "mount")
        start = max(self.now, self.robot_free[d.silo])
        self.robot_free[d.silo] = start + self.hw.robot_exchange_s
        self.at(start + self.rng.uniform(*self.hw.mount_s), self._mounted, d)

    def _mounted(self, d):
        d.mounted_at = self.now
        self._next_item(d)

    def _next_item(self, d):
        if not d.plan:
            d.state, d.last_used = sch.IDLE, self.now
            self._account(d, "idle")
            self.version += 1
            self._ask(d)
            return
        d.state = sch.READING if d.mode == sch.READ else sch.WRITING
        distance = abs(d.plan[0].position - d.head)
        if distance:
            self._account(d, "position")
            self.at(self.now + self.hw.position_s_per_gb * distance / GB, self._transfer, d)
        else:
            self._transfer(d)

    def _transfer(self, d):
        item = d.plan[0]
        d.head = item.position
        self._account(d, "transfer")
        self._advance_flows()
        self.flows[d.id] = [float(item.length), 0, d]
        self._share(d.id)

    def _advance_flows(self):
        elapsed = self.now - self.flow_clock
        if elapsed:
            for flow in self.flows.values():
                flow[0] -= elapsed * self.flow_rate
        self.flow_clock = self.now

    def _share(self, new=None):
        """Data paths cap the aggregate rate: the transferring drives share it equally."""
        n = len(self.flows)
        rate = min(self.hw.rate, self.hw.data_paths * self.hw.path_rate / n) if n else self.hw.rate
        changed = rate != self.flow_rate
        self.flow_rate = rate
        for drive_id, flow in self.flows.items():
            if changed or drive_id == new:
                self._seq += 1
                flow[1] = self._seq
                self.at(self.now + max(flow[0], 0.0) / rate, self._flow_done, flow[2], flow[1])

    def _flow_done(self, d, token):
        flow = self.flows.get(d.id)
        if flow is None or flow[1] != token:
            return
        self._advance_flows()
        del self.flows[d.id]
        self._share()
        item = d.plan.pop(0)
        d.head = item.position + item.length
        if d.mode == d.session[1]:
            d.session_bytes += item.length
        if d.mode == sch.READ:
            self._read_done(item)
        else:
            self._write_done(d, item)
        self._next_item(d)

    def _read_done(self, item):
        self.bytes_read += item.length
        self.latencies.append(self.now - self.read_submitted.pop(item.request))
        self.load.read_done(item.request, item.length)

    def _write_done(self, d, item):
        self.bytes_written += item.length
        self._advance(d.volume, item.position + item.length)
        self.write_left[item.request] -= item.length
        if self.write_left[item.request] == 0:
            del self.write_left[item.request]
            self.load.write_done(item.request)

    def _dismount(self, d):
        self.version += 1
        d.state = sch.UNLOADING
        self._account(d, "position")
        self.at(self.now + self.hw.position_s_per_gb * d.head / GB, self._unload, d)

    def _unload(self, d):
        d.head = 0
        self._account(d, "unmount")
        self.at(self.now + self.hw.unmount_s, self._unloaded, d)

    def _unloaded(self, d):
        vol = self.volumes[d.volume]
        self.volumes[vol.label] = replace(vol, last_dismount=self.now)
        self._close_session(d)
        d.state, d.volume, d.mode = sch.IDLE, None, None
        d.mounted_at = None
        self._account(d, "idle")
        self.version += 1
        self._ask(d)

    def _utilisation(self, moved):
        """Transfer time over the drives' wall time, against the bound the offered load allows
        (bound.py): `of_allowed` is the share of that bound the run reached. Transfer time is
        the bytes moved at the drive's rate, as in the bound: a drive slowed by the data paths
        (nas26) is not busier for it (its slowed time is in `drive_time_s.transfer`)."""
        wall = self.hw.drives * self.end
        allowed = allowed_utilisation(self.offered_recalls, self.offered_groups, self.hw,
                                      self.end)
        measured = moved / self.hw.rate / wall if wall else 0.0
        return {"measured": round(measured, 4), **allowed,
                "of_allowed": round(measured / allowed["allowed"], 3)
                if allowed["allowed"] else 0.0}

    def _close_session(self, d):
        start, mode = d.session
        self.session_time[mode] += self.now - start
        self.session_bytes[mode] += d.session_bytes
        d.session, d.session_bytes = None, 0

    # --- results ------------------------------------------------------------------------------

    def _result(self):
        """The run's figures. `aggregate_mb_s` is the bytes read and written over the run,
        `bound_mb_s` the hardware's best (every drive streaming, within the data paths).
        `write_utilisation` is how well write mounts used their drives: the bytes written on
        drives mounted for writing, over what the drive's rate would have moved in all the time
        those mounts held the drive (robot wait, mount, locate, transfer, idle, rewind, unload).
        `bytes_queued` is what was offered and not yet done: offered = done + queued."""
        for d in self.drives:
            self._account(d, d.activity)
            if d.session:
                self._close_session(d)
        seconds = self.end or 1.0
        moved = self.bytes_read + self.bytes_written
        aggregate = moved / seconds
        times = {key: round(sum(d.times[key] for d in self.drives), 1)
                 for key in self.drives[0].times}
        queued = {sch.READ: 0, sch.WRITE: 0}
        for r in self.queue.values():
            queued[r.kind] += r.size if r.kind == sch.WRITE else r.copies[0].length
        for d in self.drives:
            for item in d.plan:
                queued[d.mode] += item.length
        write_time = self.session_time[sch.WRITE]
        result = {
            "policy": self.policy_name,
            "workload": self.workload.get("name", "?"),
            "hours": self.hours,
            "seed": self.seed,
            "aggregate_mb_s": round(aggregate / MB, 3),
            "bound_mb_s": round(self.hw.bound / MB, 3),
            "ratio_to_bound": round(aggregate / self.hw.bound, 3),
            "mounts": self.mounts,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "bytes_per_mount": round(moved / self.mounts) if self.mounts else 0,
            "drive_time_s": times,
            "recall_latency_s": {
                "p50": _percentile(self.latencies, 50),
                "p95": _percentile(self.latencies, 95),
                "count": len(self.latencies),
            },
            "write_utilisation": round(
                self.session_bytes[sch.WRITE] / (self.hw.rate * write_time), 3)
            if write_time else 0.0,
            "utilisation": self._utilisation(moved),
            "mounts_per_tb": round(self.mounts / (moved / TB), 3) if moved else 0.0,
            "recalls_waiting": {
                "count": len(self.read_submitted),
                "oldest_s": round(self.now - min(self.read_submitted.values()), 1)
                if self.read_submitted else 0.0,
            },
            "bytes_offered": dict(self.offered),
            "bytes_queued": queued,
            "scheduler_calls": self.asks,
        }
        result.update(self.load.report())
        return result


def _load_class(workload):
    """nas26 lists users; gsfc97 a steady load; lto9 also the cartridges already holding data;
    a bulk stage lists its recalls."""
    if "users" in workload:
        return Nas26Load
    if "recalls" in workload:
        return RecallsLoad
    return Lto9Load if "volumes_with_data" in workload["hardware"] else Gsfc97Load


def _percentile(values, pct):
    """Nearest-rank percentile; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return round(ordered[rank - 1], 1)


def simulate(workload, policy="smart", hours=24.0, seed=1, config=None):
    """Run one workload (a dict, or a path to its JSON) under one policy; the result dict."""
    if not isinstance(workload, dict):
        workload = load_workload(workload)
    return Simulator(workload, policy, hours, seed, config).run()
