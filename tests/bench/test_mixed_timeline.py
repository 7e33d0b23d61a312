"""The mixed bench's timeline: what it derives from its samples (fabricated here, so the
expected values are worked out by hand)."""
import os

from bench import mixed_timeline
from bench.mixed_timeline import Timeline


def _timeline(samples, calls=()):
    timeline = Timeline({})
    timeline.samples, timeline.calls = samples, list(calls)
    return timeline


def _row(t, machine, ingest, pipeline):
    return {"t": t, "machine": machine, "load": 1.0, "ingest": ingest, "pipeline": pipeline}


SAMPLES = [
    _row(0.0, 100.0, (0, 0), {}),
    _row(0.5, 100.8, (int(0.5e9), int(0.1e9)), {"bulk/received": 4}),
    _row(1.0, 101.8, (int(1.2e9), int(0.3e9)), {"bulk/archiving": 3, "bulk/archived": 1}),
    _row(1.5, 102.6, (int(1.6e9), int(0.4e9)), {"bulk/archived": 4, "pdr/received": 2}),
    _row(2.0, 103.0, (int(1.8e9), int(0.4e9)), {"bulk/archived": 4, "pdr/archived": 2}),
]


def test_summary_counts_cpu_and_waits_of_the_phase_and_what_others_used():
    summary = _timeline(SAMPLES).summary()
    assert summary["wall_s"] == 2.0
    assert summary["cpu_s"] == {"ingest": 1.8}
    assert summary["runq_wait_s"] == {"ingest": 0.4}
    assert summary["machine_busy_s"] == 3.0
    assert summary["others_busy_s"] == 1.2          # 3.0 busy, 1.8 of it ours


def test_milestones_are_when_each_state_was_first_seen_and_each_way_all_archived():
    assert _timeline(SAMPLES).milestones() == {
        "bulk/received first": 0.5, "bulk/archiving first": 1.0, "bulk/archived first": 1.0,
        "bulk/archived all": 1.5, "pdr/received first": 1.5, "pdr/archived first": 2.0,
        "pdr/archived all": 2.0}


def test_calls_are_counted_by_kind_with_their_total_and_largest_duration():
    calls = [(0.0, 0.5, "POST", "/api/v1/ingest/requests/"), (0.6, 0.01, "GET", "12"),
             (0.8, 0.03, "GET", "12"), (1.0, 0.02, "GET", "12")]
    assert _timeline(SAMPLES, calls).call_kinds() == {
        "POST /api/v1/ingest/requests/": {"n": 1, "total_s": 0.5, "max_s": 0.5,
                                          "first_s": 0.0, "last_s": 0.0},
        "GET 12": {"n": 3, "total_s": 0.06, "max_s": 0.03, "first_s": 0.6, "last_s": 1.0}}


def test_series_gives_cores_used_and_waited_per_interval():
    series = _timeline(SAMPLES).series(step=1.0)
    assert [row["t"] for row in series] == [1.0, 2.0]
    assert series[0]["machine_cores"] == 1.8        # 1.8 s busy over 1 s
    assert series[0]["ingest"] == [1.2, 0.3]
    assert series[1]["ingest"] == [0.6, 0.1]
    assert series[1]["pipeline"] == {"bulk/archived": 4, "pdr/archived": 2}


def test_a_process_is_read_with_all_its_threads():
    run, wait = mixed_timeline._schedstat(os.getpid())
    with open(f"/proc/{os.getpid()}/schedstat") as f:
        leader_run = int(f.read().split()[0])
    assert run >= leader_run > 0 and wait >= 0
