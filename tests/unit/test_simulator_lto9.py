"""The simulator's silo pair (lto9): copies in different silos, conservation, a schedule worked
out by hand, and the utilisation bound checked by hand and against brute force."""
import itertools
import math
import random
from collections import Counter

import pytest

from backend.archive import scheduler as sch
from backend.archive.simulator import GB, MB, Hardware, Lto9Load, Simulator, simulate
from backend.archive.simulator.bound import allowed_utilisation, recall_mounts, write_mounts

# The shared workloads/lto9.json without its prose.
LTO9 = {
    "name": "lto9",
    "hardware": {
        "silos": 2, "drives": 16, "data_paths": 16, "data_path_rate_mb_s": 1000,
        "cache_gb": 500000, "volumes_with_data": 6000,
        "drive_model": {"name": "LTO-9 (emulated)", "rate_mb_s": 400, "mount_s": [15, 40],
                        "unmount_s": 25, "position_s_per_gb": 0.01, "capacity_gb": 18000},
    },
    "load": {
        "ingest_tb_per_day": 100.0, "copies": 2, "distribution_tb_per_day": 200.0,
        "distribution_from_cache_fraction": 0.7,
        "granule_size_mb": {"distribution": "lognormal", "median": 200, "p95": 4000},
        "recall_age": "uniform over the last 5 years of ingest",
    },
}
# The same pair at a fifth of the ingest and a tenth of the distribution on 4 drives, so
# a run takes a second or two.
SMALL = {
    **LTO9,
    "hardware": {**LTO9["hardware"], "drives": 4, "volumes_with_data": 40},
    "load": {**LTO9["load"], "ingest_tb_per_day": 20.0, "distribution_tb_per_day": 20.0},
}
# Hand-sized hardware: one drive per silo, 100 MB/s, a fixed 20 s mount, 1 s of locate per GB.
TINY = {
    "name": "tiny",
    "hardware": {
        "silos": 2, "drives": 2, "data_paths": 2, "data_path_rate_mb_s": 1000, "cache_gb": 100,
        "volumes_with_data": 2, "robot_exchange_s": 10,
        "drive_model": {"name": "hand", "rate_mb_s": 100, "mount_s": [20, 20], "unmount_s": 10,
                        "position_s_per_gb": 1, "capacity_gb": 10},
    },
    "load": {"ingest_tb_per_day": 1e-9, "copies": 2, "distribution_tb_per_day": 1e-9,
             "granule_size_mb": {"distribution": "lognormal", "median": 1, "p95": 2}},
}


def _watched(workload, policy, hours):
    """A run whose every submitted request and every served read is recorded."""
    sim = Simulator(workload, policy, hours=hours)
    submitted, served = [], Counter()
    submit, read_done = sim.submit, sim._read_done

    def record_submit(request):
        submitted.append(request)
        submit(request)

    def record_read(item):
        served[item.request] += 1
        read_done(item)

    sim.submit, sim._read_done = record_submit, record_read
    return sim, sim.run(), submitted, served


@pytest.fixture(scope="module", params=["smart", "fifo"])
def small_run(request):
    return _watched(SMALL, request.param, hours=1.5)


def test_history_is_shared_by_the_copies_each_in_its_own_silo():
    sim = Simulator(SMALL, "smart", hours=0.01)
    primary, backup = sim.load.holdings
    assert len(primary) == len(backup) == 20
    assert {sim.volumes[v].silo for v in primary} == {"s0"}
    assert {sim.volumes[v].silo for v in backup} == {"s1"}
    assert all(sim.volumes[v].state == sch.FULL for v in primary + backup)


def test_the_write_reserve_is_sized_from_the_ingest_and_recalls_gather_longer():
    # 100 TB/day x 2 copies over 2 silos = 1157.4 MB/s a silo = 2.89 drives at 400 MB/s;
    # streaming 85 % of a mount that is 3.40, so 4 drives.
    config = Simulator(LTO9, "smart", hours=0.01).config
    assert (config.min_write_drives, config.read_max_wait_s) == (4, 7200.0)
    assert Simulator(LTO9, "smart", hours=0.01, config=sch.DEFAULT_CONFIG).config is (
        sch.DEFAULT_CONFIG)
    assert Lto9Load.config_overrides.__qualname__.startswith("Lto9Load")


def test_copies_are_never_in_the_same_silo(small_run):
    sim, result, submitted, _ = small_run
    writes = [r for r in submitted if r.kind == sch.WRITE]
    reads = [r for r in submitted if r.kind == sch.READ]
    assert writes and reads and result["bytes_written"] > 0
    silos_of = {}
    for r in writes:
        silos_of.setdefault(r.id.split(".")[0], []).append(r.silo)
    assert all(sorted(s) == ["s0", "s1"] for s in silos_of.values())
    for r in reads:
        copies = [sim.volumes[c.volume].silo for c in r.copies]
        assert sorted(copies) == ["s0", "s1"]
        assert len({(c.position, c.length) for c in r.copies}) == 1
    for vol in sim.volumes.values():
        if vol.group and vol.state != sch.SCRATCH:
            assert vol.silo == ("s0" if vol.group == "primary" else "s1")


def test_every_recalled_byte_is_read_once(small_run):
    _, result, submitted, served = small_run
    reads = {r.id: r.copies[0].length for r in submitted if r.kind == sch.READ}
    assert served and set(served.values()) == {1}
    assert set(served) <= set(reads)
    assert result["bytes_read"] == sum(reads[i] for i in served)
    assert result["bytes_offered"][sch.READ] == sum(reads.values())
    assert result["bytes_queued"][sch.READ] == sum(n for i, n in reads.items() if i not in served)
    assert result["recalls_waiting"]["count"] == len(reads) - len(served)


def test_every_drive_second_is_accounted_for(small_run):
    _, result, _, _ = small_run
    assert sum(result["drive_time_s"].values()) == pytest.approx(4 * 1.5 * 3600, abs=0.5)
    use = result["utilisation"]
    moved_s = (result["bytes_read"] + result["bytes_written"]) / (400 * MB)
    assert use["measured"] == pytest.approx(moved_s / (4 * 1.5 * 3600), abs=1e-4)
    # No data path slows these drives: the bytes at the rate are the drives' transfer time.
    assert use["measured"] == pytest.approx(
        result["drive_time_s"]["transfer"] / (4 * 1.5 * 3600), abs=1e-3)
    assert 0 < use["measured"] <= use["allowed"] <= use["needed"]


class _Hand:
    """A load that submits what the test says, at time zero."""

    def __init__(self, requests):
        self.requests, self.read, self.written = requests, [], []

    def start(self):
        for r in self.requests:
            self.sim.submit(r)

    def read_done(self, request_id, length):
        self.read.append((self.sim.now, request_id, length))

    def write_done(self, request_id):
        self.written.append((self.sim.now, request_id))

    def cache_freed(self):
        pass

    def report(self):
        return {}


def _tiny(requests, hours=1.0):
    config = sch.SchedulerConfig(read_min_bytes=1, write_min_bytes=1, span_min_bytes=1)
    sim = Simulator(TINY, "smart", hours=hours, config=config)
    primary, backup = sim.load.holdings[0][0], sim.load.holdings[1][0]
    hand = _Hand(requests(primary, backup))
    hand.sim, sim.load = sim, hand
    return sim, hand, primary, backup


def test_a_recall_on_the_silo_pair_follows_the_hand_worked_schedule():
    # One 1 GB file at 4 GB on both copies. At t=0 the first silo's drive takes its own copy
    # (a tie on queued bytes goes to the asking drive's silo): robot and mount 20 s, locate
    # 4 GB at 1 s/GB, 1 GB at 100 MB/s = 10 s, so served at 34 s. It waits out the 120 s
    # dismount delay (to 154 s), is asked again at the next 5 s poll (155 s), rewinds 5 GB
    # (160 s) and unloads (170 s).
    sim, hand, primary, _ = _tiny(lambda p, b: [sch.Request(
        "f1.0", sch.READ, sch.USER, 0.0,
        copies=(sch.Copy(p, 4 * GB, GB), sch.Copy(b, 4 * GB, GB)))])
    result = sim.run()
    assert hand.read == [(34.0, "f1.0", GB)]
    assert result["mounts"] == 1 and result["recall_latency_s"]["p50"] == 34.0
    d0, d1 = sim.drives
    assert d0.silo == "s0" and sim.volumes[primary].last_dismount == 170.0
    assert {k: round(v, 6) for k, v in d0.times.items()} == {
        "mount": 20.0, "position": 4.0 + 5.0, "transfer": 10.0, "unmount": 10.0,
        "idle": 3600.0 - 49.0}
    assert d1.times["idle"] == 3600.0


def test_two_recalls_on_one_cartridge_pair_take_one_mount_in_position_order():
    # Two 0.5 GB files at 2 GB and 6 GB, each on both copies. The first silo's drive asks
    # first and, the queued bytes tied, takes both on its own silo's copy.
    def requests(p, b):
        return [sch.Request("a.0", sch.READ, sch.USER, 0.0,
                            copies=(sch.Copy(p, 2 * GB, GB // 2), sch.Copy(b, 2 * GB, GB // 2))),
                sch.Request("b.0", sch.READ, sch.USER, 0.0,
                            copies=(sch.Copy(p, 6 * GB, GB // 2), sch.Copy(b, 6 * GB, GB // 2)))]

    sim, hand, _, _ = _tiny(requests)
    result = sim.run()
    # Mount 20 s, locate 2 GB, read 5 s: 27 s; locate 3.5 GB on to 6 GB (30.5 s), read 5 s:
    # 35.5 s. The other silo's drive finds nothing left to do.
    assert hand.read == [(27.0, "a.0", GB // 2), (35.5, "b.0", GB // 2)]
    assert result["mounts"] == 1


def test_the_write_copies_go_to_their_silos_hand_worked():
    # A 2 GB file's two copies: each silo's drive mounts a scratch volume (robot + mount 20 s)
    # and writes 2 GB at 100 MB/s (20 s): both copies written at 40 s, in their own silos.
    def requests(p, b):
        return [sch.Request(f"f.{n}", sch.WRITE, sch.MIGRATION, 0.0, group=g, size=2 * GB,
                            silo=s) for n, (g, s) in enumerate((("primary", "s0"),
                                                                ("backup", "s1")))]

    sim, hand, _, _ = _tiny(requests)
    result = sim.run()
    assert sorted(hand.written) == [(40.0, "f.0"), (40.0, "f.1")]
    assert result["bytes_written"] == 4 * GB and result["mounts"] == 2
    written = {v.group: v.silo for v in sim.volumes.values() if v.state == sch.FILLING}
    assert written == {"primary": "s0", "backup": "s1"}


HAND = Hardware.of(TINY)  # mean mount 20 s, unmount 10 s, 1 s/GB, 10 GB, 100 MB/s, 2 drives


def test_the_bound_by_hand():
    recalls = [
        (sch.Copy("A", 2 * GB, GB), sch.Copy("B", 2 * GB, GB)),
        (sch.Copy("A", 5 * GB, GB), sch.Copy("B", 5 * GB, GB)),
        (sch.Copy("C", 0, GB // 2), sch.Copy("D", GB, GB // 2)),
    ]
    # {A, B}: 2 GB = 20 s, overhead 20 + 10 + 2 x 5 s; {C, D}: 5 s, nearest copy at 0: 30 s.
    assert sorted(recall_mounts(recalls, HAND)) == [(5.0, 30.0), (20.0, 40.0)]
    # 25 GB of one group fill 3 cartridges: 10 + 10 + 5 GB.
    assert write_mounts({"g": 25 * GB}, HAND) == [(100.0, 30.0), (100.0, 30.0), (50.0, 30.0)]
    # Plenty of time: all 275 s of transfer fit in 2 x 1000 s.
    roomy = allowed_utilisation(recalls, {"g": 25 * GB}, HAND, 1000)
    assert roomy["fits"] and roomy["allowed"] == roomy["needed"] == 0.1375
    assert roomy["min_overhead"] == 0.08 and roomy["min_mounts"] == 5
    # 2 x 100 s: one full cartridge (100 of 130 s), then 70/130 of the next: 153.85 s moved.
    tight = allowed_utilisation(recalls, {"g": 25 * GB}, HAND, 100)
    assert not tight["fits"] and tight["allowed"] == pytest.approx(
        (100 + 100 * 70 / 130) / 200, abs=1e-4)


def test_the_bound_is_never_below_the_best_whole_schedule():
    """Brute force: every subset of the minimum mounts that fits in the wall time moves no
    more than the bound (it relaxes whole mounts to fractions)."""
    rng = random.Random(5)
    for _ in range(40):
        recalls = [(sch.Copy(f"V{rng.randrange(6)}", rng.randrange(10 * GB), rng.randrange(GB)),)
                   for _ in range(rng.randrange(1, 8))]
        groups = {"g": rng.randrange(30 * GB)}
        seconds = rng.uniform(10, 200)
        items = recall_mounts(recalls, HAND) + write_mounts(groups, HAND)
        best = max(sum(t for t, _ in subset)
                   for k in range(len(items) + 1)
                   for subset in itertools.combinations(items, k)
                   if sum(t + o for t, o in subset) <= 2 * seconds)
        bound = allowed_utilisation(recalls, groups, HAND, seconds)["allowed"]
        assert best / (2 * seconds) <= bound + 1e-4


def test_lto9_runs_and_reports_its_measures():
    result = simulate(SMALL, "smart", hours=0.5)
    assert result["workload"] == "lto9"
    assert result["mounts_per_tb"] == pytest.approx(
        result["mounts"] / ((result["bytes_read"] + result["bytes_written"]) / 1e12), rel=1e-3)
    assert set(result["targets_met"]) == {"ingest", "distribution"}
    assert result["utilisation"]["of_allowed"] == pytest.approx(
        result["utilisation"]["measured"] / result["utilisation"]["allowed"], abs=1e-3)
    assert math.isfinite(result["recall_latency_s"]["p95"])
    assert MB == 10**6
