"""A discrete-event simulator of the tape tier, driven by the scheduler.

It replays a workload (the shared `workloads/nas26.json` or `gsfc97.json`) on a virtual clock,
against the smart policy or the FIFO baseline, so a policy is judged by mounts, drive time,
bytes per mount and recall latency (Phobos's measures) before it runs on real drives. Nothing
moves but numbers: silos with a robot that does one cartridge exchange at a time, drives with
their model's rate, mount, unmount and locate times, data paths shared by the transferring
drives, and a RAID cache of the workload's size. Every choice of what to mount, serve or
dismount is the scheduler's. The same seed gives the same result.

Modelling choices the workloads leave open, and what this module assumes:
- Sizes are decimal (1 MB = 1e6 bytes, 1 TB = 1e12), as in the workloads' references.
- nas26: each file has a primary and a backup copy (the seed timed archiving both), in volume
  groups per user type, the primary in the first silo and the backup in the second. Each user
  alternates puts and gets of its job, back to back. A put moves the files into the cache one
  by one (ftp: a turnaround per file, then the client's rate); a get recalls all its files at
  once (a wildcard get) and copies them out once all are in. Gets read job sets archived
  before the run (four per user), laid out contiguously per user as NAStore did.
- gsfc97: a steady ingest stream paced at the daily rate, granules lognormal (median, p95),
  both copies in one primary and one backup group. Distribution orders of a few consecutive
  granules of one product (a time range), paced at the daily rate; a share comes from the
  cache, the rest is recalled from an archive of 60 days of earlier ingest, the age of the
  data ordered exponential (most of it recent, a tail of old).
- The cache holds dirty files until every copy is written and recalled files until their job
  or order is done; clean files are purged at once. Recalls wait while it is 90 % full.
- A dismount rewinds (locate time back to the start), then unloads.
"""
from __future__ import annotations

import heapq
import json
import math
import random
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from . import scheduler as sch

MB, GB, TB = 10**6, 10**9, 10**12
CACHE_FULL = 0.9
# Scratch volumes shown per silo beyond one per drive (the pool itself never runs out).
SCRATCH_SPARE = 2
# The storage manager looks at the queue this often; a drive that finishes its work asks at once.
POLL_S = 5.0
# A nas26 user moves each file between its client and the cache by ftp: a turnaround per file,
# then the C-90 file system's ceiling (seed 000: the Cray file systems gave 8-10 MB/s).
NAS26_FILE_S = 1.0
NAS26_CLIENT_RATE = 10 * MB
# Job sets each nas26 user archived before the run; its gets pick one at random.
NAS26_JOB_SETS = 4
# gsfc97: days of ingest on tape before the run, mean age of the data a recall asks for,
# mean granules per order, and the products sharing a volume group (so an order's granules lie
# every so many granules apart on tape).
GSFC97_HISTORY_DAYS = 60
GSFC97_RECALL_AGE_DAYS = 7.0
GSFC97_ORDER_GRANULES = 4
GSFC97_COLLECTIONS = 4
# A normal variate's 95th percentile: a lognormal's p95 is its median times exp(this x sigma).
Z95 = 1.6449


def load_workload(path):
    """Read a workload file (nas26 or gsfc97 format)."""
    return json.loads(Path(path).read_text())


@dataclass(frozen=True)
class Hardware:
    """The workload's hardware, in bytes and seconds."""

    silos: int
    drives: int
    model: str
    rate: float
    mount_s: tuple[float, float]
    unmount_s: float
    position_s_per_gb: float
    capacity: int
    data_paths: int
    path_rate: float
    cache: int
    robot_exchange_s: float

    @classmethod
    def of(cls, workload):
        hw = workload["hardware"]
        model = hw["drive_model"]
        lo, hi = model["mount_s"]
        return cls(
            silos=int(hw.get("silos", 1)), drives=int(hw["drives"]), model=model["name"],
            rate=model["rate_mb_s"] * MB, mount_s=(float(lo), float(hi)),
            unmount_s=float(model["unmount_s"]),
            position_s_per_gb=float(model["position_s_per_gb"]),
            capacity=int(model["capacity_gb"] * GB), data_paths=int(hw["data_paths"]),
            path_rate=hw["data_path_rate_mb_s"] * MB, cache=int(hw["cache_gb"] * GB),
            robot_exchange_s=float(hw.get("robot_exchange_s", 10.0)),
        )

    @property
    def bound(self):
        """The best the hardware can move: every drive streaming, within the data paths."""
        return min(self.drives * self.rate, self.data_paths * self.path_rate)

    def scheduler_config(self, **overrides):
        return sch.SchedulerConfig.for_drive(
            self.rate / MB, self.capacity / GB, sum(self.mount_s) / 2, self.unmount_s,
            **overrides,
        )


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
        self.config = config or self.hw.scheduler_config()
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
        self.latencies = []
        self.session_time = {sch.READ: 0.0, sch.WRITE: 0.0}
        self.session_bytes = {sch.READ: 0, sch.WRITE: 0}
        for silo in self.silos:
            self._top_up_scratch(silo)
        kind = "users" if "users" in workload else "load"
        self.load = Nas26Load(self) if kind == "users" else Gsfc97Load(self)

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
            for c in request.copies:
                self.read_refs[c.volume] = self.read_refs.get(c.volume, 0) + 1
        else:
            self.write_left[request.id] = request.size
            self.offered[sch.WRITE] += request.size
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
            "bytes_offered": dict(self.offered),
            "bytes_queued": queued,
            "scheduler_calls": self.asks,
        }
        result.update(self.load.report())
        return result


def _percentile(values, pct):
    """Nearest-rank percentile; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return round(ordered[rank - 1], 1)


class _Load:
    """What the workloads share: request ids, dirty files that leave the cache once every copy
    is on tape, and recalls that count as done once all of them are in the cache."""

    def __init__(self, sim):
        self.sim = sim
        self.dirty, self.recalling = {}, {}
        self._ids = 0

    def _next_id(self, prefix):
        self._ids += 1
        return f"{prefix}{self._ids}"

    def _dirty(self, size, copies):
        file_id = self._next_id("f")
        self.dirty[file_id] = [size, copies]
        return file_id

    def write_done(self, request_id):
        file_id = request_id.split(".")[0]
        entry = self.dirty[file_id]
        entry[1] -= 1
        if entry[1] == 0:
            del self.dirty[file_id]
            self.sim.free_cache(entry[0])

    def _recall_all(self, segments, when_done):
        """Recall every segment (each a tuple of copies); `when_done(bytes)` once all are in."""
        sim = self.sim
        batch = self._next_id("r")
        self.recalling[batch] = [len(segments), 0, when_done]
        for n, copies in enumerate(segments):
            sim.submit(sch.Request(f"{batch}.{n}", sch.READ, sch.USER, sim.now,
                                   copies=tuple(copies)))

    def read_done(self, request_id, length):
        self.sim.use_cache(length)
        batch = request_id.split(".")[0]
        entry = self.recalling[batch]
        entry[0] -= 1
        entry[1] += length
        if entry[0] == 0:
            del self.recalling[batch]
            entry[2](entry[1])


class Nas26Load(_Load):
    """The 26-user mix of seed 000, section 4.5: users alternate puts and gets of their job."""

    COPIES = ("primary", "backup")

    def __init__(self, sim):
        super().__init__(sim)
        self.users = []
        for spec in sim.workload["users"]:
            sizes = [int(f["size_mb"] * MB) for f in spec["files"] for _ in range(f["n"])]
            for _ in range(spec["count"]):
                self.users.append({"type": spec["type"], "sizes": sizes, "sets": []})
        self.jobs_done = 0
        self.waiting_puts = []
        for user in self.users:
            for _ in range(NAS26_JOB_SETS):
                placed = [sim.lay_out(*self._group(user, n), user["sizes"])
                          for n in range(len(self.COPIES))]
                user["sets"].append(list(zip(*placed, strict=True)))

    def _group(self, user, copy_number):
        silo = self.sim.silos[copy_number % len(self.sim.silos)]
        return f"type{user['type']}-{self.COPIES[copy_number]}", silo

    def start(self):
        for i, user in enumerate(self.users):
            self.sim.at(0.0, self._put if i % 2 == 0 else self._get, user)

    def _client_s(self, size):
        return NAS26_FILE_S + size / NAS26_CLIENT_RATE

    def _put(self, user, index=0):
        """Put the job's files one after the other, each once the cache has room for it."""
        self.waiting_puts.append((user, index))
        self.cache_freed()

    def cache_freed(self):
        sim = self.sim
        while self.waiting_puts:
            user, index = self.waiting_puts[0]
            size = user["sizes"][index]
            if not sim.cache_room(size):
                return
            self.waiting_puts.pop(0)
            sim.use_cache(size)
            sim.at(sim.now + self._client_s(size), self._put_done, user, index)

    def _put_done(self, user, index):
        sim = self.sim
        size = user["sizes"][index]
        file_id = self._dirty(size, len(self.COPIES))
        for copy_number in range(len(self.COPIES)):
            group, silo = self._group(user, copy_number)
            sim.submit(sch.Request(f"{file_id}.{copy_number}", sch.WRITE, sch.MIGRATION,
                                   sim.now, group=group, size=size, silo=silo))
        if index + 1 < len(user["sizes"]):
            self._put(user, index + 1)
        else:
            self.jobs_done += 1
            self._get(user)

    def _get(self, user):
        """Recall a job set archived before the run (all its files at once, as a wildcard get)
        and, once every file is in the cache, copy them out to the client."""
        chosen = self.sim.load_rng.choice(user["sets"])
        segments = [pair for file_pairs in chosen for pair in zip(*file_pairs, strict=True)]
        self._recall_all(segments, partial(self._copy_out, user))

    def _copy_out(self, user, nbytes):
        copy_out = sum(self._client_s(size) for size in user["sizes"])
        self.sim.at(self.sim.now + copy_out, self._got, user, nbytes)

    def _got(self, user, nbytes):
        self.jobs_done += 1
        self.sim.free_cache(nbytes)
        self._put(user)

    def report(self):
        return {"jobs_done": self.jobs_done}


class Gsfc97Load(_Load):
    """One DAAC silo's steady load: ingest written as primary and backup copies, distribution
    orders partly served from the cache and the rest recalled."""

    def __init__(self, sim):
        super().__init__(sim)
        load = sim.workload["load"]
        self.copies = int(load.get("copies", 2))
        self.ingest_rate = load["ingest_tb_per_day"] * TB / 86400
        self.dist_rate = load["distribution_tb_per_day"] * TB / 86400
        self.from_cache = float(load.get("distribution_from_cache_fraction", 0.0))
        sizes = load["granule_size_mb"]
        self.mu = math.log(sizes["median"] * MB)
        self.sigma = math.log(sizes["p95"] / sizes["median"]) / Z95
        names = ["primary", "backup"] + [f"copy{n + 1}" for n in range(2, self.copies)]
        self.groups = [(names[n], sim.silos[n % len(sim.silos)]) for n in range(self.copies)]
        self.mean_size = math.exp(self.mu + self.sigma**2 / 2)
        self.holdings = []
        self.volumes_per_day = load["ingest_tb_per_day"] * TB / sim.hw.capacity
        n_volumes = math.ceil(GSFC97_HISTORY_DAYS * self.volumes_per_day)
        for group, silo in self.groups:
            self.holdings.append([sim.new_volume(silo, group, sch.FULL, sim.hw.capacity)
                                  for _ in range(n_volumes)])
        self.waiting = []
        self.served = 0

    def _size(self):
        return max(1, int(self.sim.load_rng.lognormvariate(self.mu, self.sigma)))

    def start(self):
        self.sim.at(0.0, self._ingest)
        self.sim.at(0.0, self._order)

    def _ingest(self):
        size = self._size()
        self.waiting.append(size)
        self.cache_freed()
        self.sim.at(self.sim.now + size / self.ingest_rate, self._ingest)

    def cache_freed(self):
        sim = self.sim
        while self.waiting and sim.cache_room(self.waiting[0]):
            size = self.waiting.pop(0)
            sim.use_cache(size)
            granule = self._dirty(size, self.copies)
            for n, (group, silo) in enumerate(self.groups):
                sim.submit(sch.Request(f"{granule}.{n}", sch.WRITE, sch.MIGRATION, sim.now,
                                       group=group, size=size, silo=silo))

    def _order(self):
        """An order for consecutive granules of one product (every GSFC97_COLLECTIONS-th
        granule on tape), from the cache or recalled."""
        sim = self.sim
        rng = sim.load_rng
        count = 1 + int(rng.expovariate(1 / (GSFC97_ORDER_GRANULES - 1)))
        sizes = [self._size() for _ in range(count)]
        total = sum(sizes)
        if rng.random() < self.from_cache:
            self.served += total
        else:
            self._recall(sizes)
        sim.at(sim.now + total / self.dist_rate, self._order)

    def _recall(self, sizes):
        sim, rng = self.sim, self.sim.load_rng
        days = min(rng.expovariate(1 / GSFC97_RECALL_AGE_DAYS), GSFC97_HISTORY_DAYS - 1e-6)
        n_volumes = len(self.holdings[0])
        index = n_volumes - 1 - min(n_volumes - 1, int(days * self.volumes_per_day))
        position = rng.randrange(sim.hw.capacity)
        gap = (GSFC97_COLLECTIONS - 1) * self.mean_size
        segments = []
        for size in sizes:
            position += int(rng.expovariate(1 / gap))
            left = size
            while left > 0:
                while position >= sim.hw.capacity:
                    position -= sim.hw.capacity
                    index = min(index + 1, n_volumes - 1)
                part = min(left, sim.hw.capacity - position)
                segments.append([sch.Copy(labels[index], position, part)
                                 for labels in self.holdings])
                position += part
                left -= part
        self._recall_all(segments, self._delivered)

    def _delivered(self, nbytes):
        self.served += nbytes
        self.sim.free_cache(nbytes)

    def report(self):
        """The daily targets scaled to the simulated hours: copies written and bytes served.
        A target counts as met at 95 %: at the cut-off a batch may still be gathering in the
        cache (a write mount waits for `write_min_bytes` per group) or be on its way."""
        sim = self.sim
        days = sim.hours / 24
        load = sim.workload["load"]
        ingest_target = load["ingest_tb_per_day"] * TB * self.copies * days
        dist_target = load["distribution_tb_per_day"] * TB * days
        return {
            "targets": {
                "ingest_written_bytes": sim.bytes_written,
                "ingest_target_bytes": int(ingest_target),
                "distribution_served_bytes": self.served,
                "distribution_target_bytes": int(dist_target),
            },
            "targets_met": {
                "ingest": sim.bytes_written >= 0.95 * ingest_target,
                "distribution": self.served >= 0.95 * dist_target,
            },
        }


def simulate(workload, policy="smart", hours=24.0, seed=1, config=None):
    """Run one workload (a dict, or a path to its JSON) under one policy; the result dict."""
    if not isinstance(workload, dict):
        workload = load_workload(workload)
    return Simulator(workload, policy, hours, seed, config).run()
