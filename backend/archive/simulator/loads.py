"""The workloads' demand on the simulated tier: nas26's users and gsfc97's steady DAAC load."""
from __future__ import annotations

import math
from functools import partial

from .. import scheduler as sch
from .workload import MB, TB

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
# lto9: the share of a write mount's time spent streaming, when sizing the write reserve.
LTO9_WRITE_STREAMING = 0.85
# lto9: how long a recall waits for others on its cartridge before it is served oldest first.
LTO9_READ_WAIT_S = 2 * 3600.0
# A normal variate's 95th percentile: a lognormal's p95 is its median times exp(this x sigma).
Z95 = 1.6449


class _Load:
    """What the workloads share: request ids, dirty files that leave the cache once every copy
    is on tape, and recalls that count as done once all of them are in the cache."""

    def __init__(self, sim):
        self.sim = sim
        self.dirty, self.recalling = {}, {}
        self._ids = 0

    def config_overrides(self):
        """Scheduler settings the operator of this load would choose (none by default)."""
        return {}

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
        self.volumes_per_day = load["ingest_tb_per_day"] * TB / sim.hw.capacity
        n_volumes = self._history_volumes()
        self.holdings = [[sim.new_volume(silo, group, sch.FULL, sim.hw.capacity)
                          for _ in range(n_volumes)] for group, silo in self.groups]
        self.waiting = []
        self.served = 0

    def _history_volumes(self):
        """Full volumes per copy archived before the run: GSFC97_HISTORY_DAYS of ingest."""
        return math.ceil(GSFC97_HISTORY_DAYS * self.volumes_per_day)

    def _where(self):
        """Where a recall's first granule starts: the volume's index in the holdings (the age
        of the data, exponential: most of it recent) and a byte position on it."""
        rng, n_volumes = self.sim.load_rng, len(self.holdings[0])
        days = min(rng.expovariate(1 / GSFC97_RECALL_AGE_DAYS), GSFC97_HISTORY_DAYS - 1e-6)
        index = n_volumes - 1 - min(n_volumes - 1, int(days * self.volumes_per_day))
        return index, rng.randrange(self.sim.hw.capacity)

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
        n_volumes = len(self.holdings[0])
        index, position = self._where()
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


class Lto9Load(Gsfc97Load):
    """A present-day silo pair (lto9): gsfc97's steady load at 100x, recalls spread over years.

    The workload gives the cartridges holding data (`hardware.volumes_with_data`, shared
    equally by the copies, each copy in its own silo) and recalls of an age uniform over the
    last five years. Volume groups hold collections, and a collection's cartridge fills over
    years beside the others', so the age of the data says nothing about which cartridge holds
    it: every byte on tape is equally likely, that is a cartridge drawn uniformly and a
    position uniform along it. Both copies of a granule were written from the same stream, so
    the backup lies at the same position of the paired cartridge in the other silo.
    """

    def _history_volumes(self):
        return math.ceil(int(self.sim.workload["hardware"]["volumes_with_data"]) / self.copies)

    def _where(self):
        rng = self.sim.load_rng
        return rng.randrange(len(self.holdings[0])), rng.randrange(self.sim.hw.capacity)

    def config_overrides(self):
        """Keep, per silo, the drives the ingest needs for writing whenever it has work: with
        recalls ranked first and a reserve of one, 3 of the 8 drives a silo's ingest needs
        (100 TB/day x 2 copies / 2 silos at 400 MB/s, 85 % streaming) went to recalls.
        And let recalls gather longer per cartridge: a recall mount costs about four minutes
        of drive time (mount, locate, rewind, unload) for ten seconds of an order's transfer,
        so mounts are ranked by the bytes they move until a recall waited LTO9_READ_WAIT_S
        (measured over 3 virtual hours: 0.81 of the allowed utilisation against 0.75, twice
        the bytes recalled, p50 latency 5 min against 60, p95 2.5 h against 2.2 h)."""
        sim = self.sim
        need = self.ingest_rate * self.copies / sim.hw.silos / sim.hw.rate
        return {"min_write_drives": math.ceil(need / LTO9_WRITE_STREAMING),
                "read_max_wait_s": LTO9_READ_WAIT_S}


class RecallsLoad(_Load):
    """A fixed batch of recalls, all asked at the start (a bulk stage request): the workload's
    `recalls` lists the volumes (label: bytes on it) and each file's copy as (label, position,
    length), in the first silo. Reports when the last file was in the cache."""

    def __init__(self, sim):
        super().__init__(sim)
        spec = sim.workload["recalls"]
        for label, used in spec["volumes"].items():
            sim.volumes[label] = sch.Volume(label, sim.silos[0], "recalled", sch.FULL,
                                            max(sim.hw.capacity, used), used)
        self.files = [tuple(copy) for copy in spec["files"]]
        self.last_read_s = None

    def start(self):
        self._recall_all([[sch.Copy(*copy)] for copy in self.files], self._all_in)

    def _all_in(self, _nbytes):
        self.last_read_s = self.sim.now

    def cache_freed(self):
        pass

    def report(self):
        return {"last_read_s": self.last_read_s, "files": len(self.files)}
