"""Fair share of drives between kinds of recall (orders, stage requests...): the pure policy
over snapshots, checked against a brute-force replay of the rule it states."""
from collections import Counter

from backend.archive.scheduler import (
    FULL,
    MOUNT,
    READ,
    USER,
    Copy,
    Drive,
    Request,
    SchedulerConfig,
    Snapshot,
    Volume,
    decide,
)

NOW = 100_000.0
CFG = SchedulerConfig(read_min_bytes=1000, read_min_files=10, read_max_wait_s=600,
                      read_idle_wait_s=60, remount_delay_s=0, batch_max_files=1000)
FILES_PER_VOLUME = 10


def backlog(kind, volumes, sizes):
    """`volumes` full volumes each holding FILES_PER_VOLUME recalls of `kind`, queued long ago
    (every one past its age limit, so age alone would serve them oldest first)."""
    vols, requests = {}, []
    for v in range(volumes):
        label = f"{kind}{v:03d}"
        vols[label] = Volume(label, "s1", "g", FULL, 10**9, 10**9)
        for n in range(FILES_PER_VOLUME):
            requests.append(Request(f"{label}-{n}", READ, USER, NOW - 5000 + v, share=kind,
                                    copies=(Copy(label, n * 1000, sizes),)))
    return vols, requests


def run_policy(weights, mounts):
    """Mount after mount on one drive, each serving what the policy chose; how many mounts and
    reads each kind got."""
    volumes, requests = {}, []
    # the stage backlog is older and its volumes hold more bytes: without shares it goes first
    for kind, size, age in (("order", 100, 0), ("stage", 500, -1000)):
        vols, reqs = backlog(kind, 40, size)
        volumes.update(vols)
        requests += [Request(r.id, r.kind, r.klass, r.submitted + age, r.copies, share=r.share)
                     for r in reqs]
    served, mounted = Counter(), Counter()
    for step in range(mounts):
        snap = Snapshot("d1", [Drive("d1", "s1")], volumes, requests, NOW + step,
                        weights=weights, served=dict(served))
        decision = decide(snap, CFG)
        assert decision.action == MOUNT, decision
        done = {s.request for s in decision.serve}
        kinds = {r.share for r in requests if r.id in done}
        assert len(kinds) == 1
        mounted[kinds.pop()] += 1
        for r in requests:
            if r.id in done:
                served[r.share] += 1
        requests = [r for r in requests if r.id not in done]
    return mounted, served


def brute_force(weights, mounts):
    """The rule replayed by hand: each mount goes to the kind whose reads served over its
    weight is least (ties to the first named), and serves one volume's FILES_PER_VOLUME."""
    served = dict.fromkeys(weights, 0)
    mounted = Counter()
    for _ in range(mounts):
        kind = min(weights, key=lambda k: (served[k] / weights[k], list(weights).index(k)))
        mounted[kind] += 1
        served[kind] += FILES_PER_VOLUME
    return mounted


def test_weights_three_to_one_split_mounts_and_reads_three_to_one():
    weights = {"order": 3.0, "stage": 1.0}
    mounted, served = run_policy(weights, 40)
    expected = brute_force(weights, 40)
    assert expected == {"order": 30, "stage": 10}
    assert abs(mounted["order"] - expected["order"]) <= 1
    assert abs(mounted["stage"] - expected["stage"]) <= 1
    assert abs(served["order"] / served["stage"] - 3.0) <= 0.3


def test_the_weights_can_favour_either_kind():
    mounted, _ = run_policy({"order": 1.0, "stage": 3.0}, 40)
    assert abs(mounted["stage"] - 30) <= 1 and abs(mounted["order"] - 10) <= 1


def test_without_weights_shares_play_no_part():
    # the stage backlog is older: past their age limit, the oldest goes first every time
    mounted, _ = run_policy(None, 20)
    assert mounted == {"stage": 20}
