"""The discrete-event simulator: deterministic, conserving, and driven by the scheduler."""
import io
import json

import pytest
from django.core.management import call_command

from backend.archive import scheduler as sch
from backend.archive.simulator import Hardware, Simulator, load_workload, simulate

# The shared workloads (workloads/nas26.json, gsfc97.json), without their prose, so the tests
# run from a bare checkout.
NAS26 = {
    "name": "nas26",
    "hardware": {
        "silos": 2, "drives": 16, "data_paths": 4, "data_path_rate_mb_s": 4.5, "cache_gb": 30,
        "drive_model": {"name": "IBM 3480", "rate_mb_s": 3.0, "mount_s": [20, 50],
                        "unmount_s": 15, "position_s_per_gb": 60, "capacity_gb": 0.2},
    },
    "users": [
        {"type": 1, "count": 4, "files": [{"n": 1, "size_mb": 0.15}]},
        {"type": 2, "count": 5, "files": [{"n": 50, "size_mb": 0.02}]},
        {"type": 3, "count": 12, "files": [{"n": 5, "size_mb": 10}, {"n": 5, "size_mb": 75}]},
        {"type": 4, "count": 4, "files": [{"n": 20, "size_mb": 75}]},
        {"type": 5, "count": 1, "files": [{"n": 50, "size_mb": 300}]},
    ],
}
GSFC97 = {
    "name": "gsfc97",
    "hardware": {
        "silos": 1, "drives": 8, "data_paths": 8, "data_path_rate_mb_s": 20, "cache_gb": 128,
        "drive_model": {"name": "STK SD-3 (RedWood)", "rate_mb_s": 11.2, "mount_s": [20, 40],
                        "unmount_s": 30, "position_s_per_gb": 2, "capacity_gb": 50},
    },
    "load": {
        "ingest_tb_per_day": 1.0, "copies": 2, "distribution_tb_per_day": 2.0,
        "distribution_from_cache_fraction": 0.6,
        "granule_size_mb": {"distribution": "lognormal", "median": 60, "p95": 900},
    },
}


@pytest.fixture(scope="module")
def nas26():
    return NAS26


@pytest.fixture(scope="module")
def gsfc97():
    return GSFC97


@pytest.fixture(scope="module")
def nas26_runs(nas26):
    return {policy: simulate(nas26, policy, hours=2) for policy in ("smart", "fifo")}


@pytest.fixture(scope="module")
def gsfc97_runs(gsfc97):
    return {policy: simulate(gsfc97, policy, hours=6) for policy in ("smart", "fifo")}


def test_bound_comes_from_the_hardware(nas26, gsfc97):
    assert Hardware.of(nas26).bound == pytest.approx(18e6)
    assert Hardware.of(gsfc97).bound == pytest.approx(89.6e6)


def test_same_seed_same_result_other_seed_other_result(nas26):
    first, again = simulate(nas26, hours=1, seed=7), simulate(nas26, hours=1, seed=7)
    assert first == again
    assert simulate(nas26, hours=1, seed=8) != first


@pytest.mark.parametrize("runs", ["nas26_runs", "gsfc97_runs"])
def test_bytes_are_conserved(runs, request):
    for result in request.getfixturevalue(runs).values():
        done = {sch.READ: result["bytes_read"], sch.WRITE: result["bytes_written"]}
        for kind in (sch.READ, sch.WRITE):
            assert result["bytes_offered"][kind] == done[kind] + result["bytes_queued"][kind]
        assert done[sch.WRITE] > 0 and done[sch.READ] > 0


@pytest.mark.parametrize("runs, drives", [("nas26_runs", 16), ("gsfc97_runs", 8)])
def test_every_drive_second_is_accounted_for(runs, drives, request):
    for result in request.getfixturevalue(runs).values():
        total = sum(result["drive_time_s"].values())
        assert total == pytest.approx(drives * result["hours"] * 3600, rel=1e-6)


@pytest.mark.parametrize("runs", ["nas26_runs", "gsfc97_runs"])
def test_latencies_and_rates_are_sane(runs, request):
    for result in request.getfixturevalue(runs).values():
        latency = result["recall_latency_s"]
        assert latency["count"] > 0
        assert 0 <= latency["p50"] <= latency["p95"]
        assert 0 < result["aggregate_mb_s"] <= result["bound_mb_s"]
        assert result["ratio_to_bound"] == pytest.approx(
            result["aggregate_mb_s"] / result["bound_mb_s"], abs=1e-3)
        assert 0 < result["write_utilisation"] <= 1
        assert result["bytes_per_mount"] == round(
            (result["bytes_read"] + result["bytes_written"]) / result["mounts"])


def test_smart_beats_fifo_on_nas26(nas26_runs):
    smart, fifo = nas26_runs["smart"], nas26_runs["fifo"]
    assert smart["mounts"] < fifo["mounts"]
    assert smart["bytes_per_mount"] > 3 * fifo["bytes_per_mount"]
    assert smart["aggregate_mb_s"] > fifo["aggregate_mb_s"]


def test_gsfc97_reports_its_daily_targets(gsfc97_runs):
    smart, fifo = gsfc97_runs["smart"], gsfc97_runs["fifo"]
    target = smart["targets"]["ingest_target_bytes"]
    assert target == 2 * 10**12 * 6 // 24
    assert smart["targets"]["distribution_target_bytes"] == 2 * 10**12 * 6 // 24
    assert smart["targets_met"]["distribution"] is True
    assert smart["bytes_written"] > 0.85 * target > 2 * fifo["bytes_written"]
    assert fifo["targets_met"] == {"ingest": False, "distribution": False}
    assert smart["write_utilisation"] > 0.85 > fifo["write_utilisation"]


@pytest.mark.parametrize("policy", ["smart", "fifo"])
def test_the_scheduler_decides_and_its_rules_hold_in_the_run(nas26, policy):
    sim = Simulator(nas26, policy, hours=1)
    decide = sim.policy
    seen = []

    def checked(snap, config):
        decision = decide(snap, config)
        mounted = {d.volume for d in snap.drives if d.volume}
        if decision.action == sch.MOUNT:
            vol = snap.volumes[decision.volume]
            assert decision.volume not in mounted
            assert vol.state in {sch.SCRATCH, sch.FILLING, sch.FULL}
            me = next(d for d in snap.drives if d.id == snap.drive)
            assert vol.silo == me.silo
        seen.append(decision.action)
        return decision

    sim.policy = checked
    sim.run()
    assert seen.count(sch.MOUNT) == sim.mounts > 0
    assert all(v.end_of_data <= v.capacity for v in sim.volumes.values())


def test_unknown_policy_is_refused(nas26):
    with pytest.raises(ValueError, match="unknown policy"):
        Simulator(nas26, "random")


def test_workload_files_load(tmp_path):
    path = tmp_path / "gsfc97.json"
    path.write_text(json.dumps(GSFC97))
    assert load_workload(path) == GSFC97


def test_command_prints_a_table_and_writes_json(tmp_path):
    workload, out, target = tmp_path / "w.json", io.StringIO(), tmp_path / "result.json"
    workload.write_text(json.dumps(GSFC97))
    call_command("archive", "simulate", "--workload", str(workload), "--policy", "fifo",
                 "--hours", "0.5", "--json", str(target), stdout=out)
    result = json.loads(target.read_text())
    assert (result["policy"], result["workload"], result["hours"]) == ("fifo", "gsfc97", 0.5)
    assert "ratio_to_bound" in out.getvalue()
    assert "drive_time_s.transfer" in out.getvalue()
