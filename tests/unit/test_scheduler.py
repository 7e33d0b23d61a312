"""The drive scheduler: a pure policy over snapshots of drives, volumes and queued requests."""
import pytest

from backend.archive.scheduler import (
    AUDIT,
    DISMOUNT,
    FILLING,
    FULL,
    KEEP,
    MIGRATION,
    MOUNT,
    OFFLINE,
    OPERATOR,
    READ,
    READ_ONLY,
    READING,
    RETIRED,
    SCRATCH,
    SUSPECT,
    UNLOADING,
    USER,
    WAIT,
    WRITE,
    WRITING,
    Copy,
    Drive,
    Request,
    SchedulerConfig,
    Snapshot,
    Volume,
    decide,
    fifo,
)

NOW = 100_000.0
CFG = SchedulerConfig(
    read_min_bytes=1000, read_min_files=10, read_max_wait_s=600, read_idle_wait_s=60,
    write_min_bytes=5000, write_min_files=50, write_max_wait_s=3600,
    dismount_delay_s=120, remount_delay_s=7200, remount_override_age_s=900,
    batch_max_bytes=10**9, batch_max_files=1000, span_min_bytes=100, recheck_s=60,
)


def vol(label, state=FULL, group="g", silo="s1", capacity=10_000, end_of_data=None, **kw):
    if end_of_data is None:
        end_of_data = {FULL: capacity, SCRATCH: 0}.get(state, capacity // 2)
    return Volume(label, silo, None if state == SCRATCH else group, state, capacity,
                  end_of_data, **kw)


def read(rid, *copies, klass=USER, at=NOW - 10):
    return Request(rid, READ, klass, at, copies=tuple(Copy(*c) for c in copies))


def write(rid, size, group="g", klass=MIGRATION, at=NOW - 10, silo=None):
    return Request(rid, WRITE, klass, at, group=group, size=size, silo=silo)


def ask(requests=(), volumes=(), drives=None, drive="d1", now=NOW, cache_full=False,
        config=CFG, policy=decide):
    drives = drives or [Drive("d1", "s1")]
    snap = Snapshot(drive, drives, {v.label: v for v in volumes}, list(requests), now,
                    cache_full)
    return policy(snap, config)


def served(decision):
    return [s.request for s in decision.serve]


# --- when a mount is worth it ---------------------------------------------------------------

def test_waits_while_below_every_threshold_and_says_when_to_ask_again():
    decision = ask([read("r1", ("A", 0, 10), at=NOW - 100)], [vol("A")])
    assert decision.action == WAIT
    assert decision.wait_until == NOW - 100 + CFG.read_max_wait_s


def test_mounts_when_queued_bytes_pass_the_minimum():
    decision = ask([read("r1", ("A", 0, 600)), read("r2", ("A", 600, 400))], [vol("A")])
    assert (decision.action, decision.volume, decision.mode) == (MOUNT, "A", READ)
    assert served(decision) == ["r1", "r2"]


def test_mounts_when_queued_files_pass_the_minimum():
    reads = [read(f"r{i}", ("A", i * 10, 1)) for i in range(10)]
    assert ask(reads, [vol("A")]).action == MOUNT
    assert ask(reads[:9], [vol("A")]).action == WAIT


def test_mounts_when_the_oldest_request_is_old_enough():
    old = read("r1", ("A", 0, 10), at=NOW - CFG.read_max_wait_s)
    assert ask([old], [vol("A")]).action == MOUNT


def test_recall_waits_less_while_another_drive_stands_idle():
    drives = [Drive("d1", "s1"), Drive("d2", "s1")]
    young = read("r1", ("A", 0, 10), at=NOW - 30)
    decision = ask([young], [vol("A")], drives)
    assert decision.action == WAIT
    assert decision.wait_until == NOW - 30 + CFG.read_idle_wait_s
    assert ask([young], [vol("A")], drives, now=NOW + 30).action == MOUNT


def test_operator_request_is_worth_a_mount_at_once():
    urgent = read("r1", ("A", 0, 10), klass=OPERATOR, at=NOW)
    assert ask([urgent], [vol("A")]).action == MOUNT


# --- serving a mounted volume ----------------------------------------------------------------

def test_reads_are_served_in_position_order_after_a_mount():
    reads = [read("r1", ("A", 5000, 500)), read("r2", ("A", 100, 500)),
             read("r3", ("A", 2000, 500))]
    assert served(ask(reads, [vol("A")])) == ["r2", "r3", "r1"]


def test_reads_on_a_mounted_volume_follow_an_elevator_from_the_head():
    drives = [Drive("d1", "s1", state="idle", volume="A", mode=READ, position=3000,
                    last_used=NOW)]
    reads = [read(f"r{p}", ("A", p, 10)) for p in (100, 6000, 3500, 2000, 9000)]
    decision = ask(reads, [vol("A")], drives)
    assert decision.action == KEEP
    assert served(decision) == ["r3500", "r6000", "r9000", "r2000", "r100"]


def test_every_request_for_the_mounted_volume_is_served_before_dismount():
    drives = [Drive("d1", "s1", volume="A", mode=READ, last_used=NOW - 1000)]
    small = read("r1", ("A", 0, 10), at=NOW)
    worthy_elsewhere = [read(f"b{i}", ("B", i * 100, 100)) for i in range(10)]
    decision = ask([small, *worthy_elsewhere], [vol("A"), vol("B")], drives)
    assert (decision.action, served(decision)) == (KEEP, ["r1"])


def test_read_mount_serves_writes_for_its_group_when_reads_run_out():
    drives = [Drive("d1", "s1", volume="A", mode=READ, last_used=NOW)]
    decision = ask([write("w1", 100)], [vol("A", state=FILLING, end_of_data=4000)], drives)
    assert (decision.action, decision.mode, served(decision)) == (KEEP, WRITE, ["w1"])
    assert decision.serve[0].position == 4000


# --- dismount and remount delays -------------------------------------------------------------

def test_idle_volume_stays_mounted_for_the_dismount_delay():
    drives = [Drive("d1", "s1", volume="A", mode=READ, last_used=NOW - 60)]
    decision = ask([], [vol("A")], drives)
    assert decision.action == WAIT
    assert decision.wait_until == NOW - 60 + CFG.dismount_delay_s
    assert ask([], [vol("A")], drives, now=NOW + 60).action == DISMOUNT


def test_dismounts_early_when_other_work_needs_the_drive():
    drives = [Drive("d1", "s1", volume="A", mode=READ, last_used=NOW)]
    worthy = [read("b1", ("B", 0, 2000))]
    decision = ask(worthy, [vol("A"), vol("B")], drives)
    assert decision.action == DISMOUNT


def test_stays_mounted_when_an_empty_drive_can_take_the_other_work():
    drives = [Drive("d1", "s1", volume="A", mode=READ, last_used=NOW), Drive("d2", "s1")]
    worthy = [read("b1", ("B", 0, 2000))]
    assert ask(worthy, [vol("A"), vol("B")], drives).action == WAIT
    assert ask(worthy, [vol("A"), vol("B")], drives, drive="d2").volume == "B"


def test_write_mount_dismounts_as_soon_as_its_group_queue_is_empty():
    drives = [Drive("d1", "s1", volume="A", mode=WRITE, last_used=NOW)]
    decision = ask([], [vol("A", state=FILLING)], drives)
    assert decision.action == DISMOUNT


def test_recently_dismounted_volume_is_not_remounted_for_young_requests():
    recent = vol("A", last_dismount=NOW - 600)
    reads = [read("r1", ("A", 0, 2000), at=NOW - 10)]
    decision = ask(reads, [recent])
    assert decision.action == WAIT
    assert decision.wait_until == NOW - 10 + CFG.remount_override_age_s


def test_remount_delay_yields_to_an_old_request():
    recent = vol("A", last_dismount=NOW - 600)
    old = read("r1", ("A", 0, 10), at=NOW - CFG.remount_override_age_s)
    assert ask([old], [recent]).action == MOUNT


def test_remount_delay_yields_to_an_operator_request():
    recent = vol("A", last_dismount=NOW - 600)
    assert ask([read("r1", ("A", 0, 10), klass=OPERATOR, at=NOW)], [recent]).action == MOUNT


def test_remount_delay_is_over_after_its_time():
    long_ago = vol("A", last_dismount=NOW - CFG.remount_delay_s)
    assert ask([read("r1", ("A", 0, 2000))], [long_ago]).action == MOUNT


# --- drive caps ------------------------------------------------------------------------------

def test_write_drives_are_capped():
    config = SchedulerConfig(**{**CFG.__dict__, "max_write_drives": 1})
    drives = [Drive("d1", "s1"), Drive("d2", "s1", state=WRITING, volume="W", mode=WRITE),
              Drive("d3", "s1")]
    volumes = [vol("W", state=FILLING, group="h"), vol("S", state=SCRATCH)]
    decision = ask([write("w1", 6000)], volumes, drives, config=config)
    assert decision.action == WAIT
    assert decision.wait_until == NOW + CFG.recheck_s
    assert ask([write("w1", 6000)], volumes, drives).action == MOUNT


def test_a_drive_is_kept_for_queued_reads():
    drives = [Drive("d1", "s1"), Drive("d2", "s1", state=WRITING, volume="W", mode=WRITE)]
    volumes = [vol("W", state=FILLING, group="h"), vol("S", state=SCRATCH), vol("A")]
    audits = [read("a1", ("A", 0, 2000), klass=AUDIT)]
    writes = [write("w1", 6000)]
    assert ask(writes, volumes, drives).mode == WRITE
    decision = ask(writes + audits, volumes, drives)
    assert (decision.mode, decision.volume) == (READ, "A")


def test_a_drive_is_kept_for_queued_writes():
    drives = [Drive("d1", "s1"), Drive("d2", "s1", state=READING, volume="B", mode=READ)]
    volumes = [vol("B"), vol("S", state=SCRATCH), vol("A")]
    recalls = [read("r1", ("A", 0, 2000))]
    assert ask(recalls, volumes, drives).mode == READ
    decision = ask(recalls + [write("w1", 6000)], volumes, drives)
    assert (decision.mode, decision.volume) == (WRITE, "S")


def test_reserves_do_not_lock_out_a_lone_drive():
    volumes = [vol("S", state=SCRATCH), vol("A")]
    decision = ask([read("r1", ("A", 0, 2000)), write("w1", 6000)], volumes)
    assert (decision.action, decision.mode) == (MOUNT, READ)


# --- priorities ------------------------------------------------------------------------------

def test_user_recalls_go_before_migrations_and_operator_before_both():
    volumes = [vol("A"), vol("B"), vol("S", state=SCRATCH)]
    writes = [write("w1", 9000, at=NOW - 5000)]
    recall = read("r1", ("A", 0, 2000))
    operator = read("o1", ("B", 0, 10), klass=OPERATOR)
    assert ask(writes + [recall], volumes).volume == "A"
    assert ask(writes + [recall, operator], volumes).volume == "B"


def test_within_a_class_the_mount_that_moves_most_goes_first():
    reads = [read("a1", ("A", 0, 2000)), read("b1", ("B", 0, 5000))]
    assert ask(reads, [vol("A"), vol("B")]).volume == "B"


def test_within_a_class_work_past_its_age_limit_goes_first():
    reads = [read("a1", ("A", 0, 10), at=NOW - 700), read("b1", ("B", 0, 5000))]
    assert ask(reads, [vol("A"), vol("B")]).volume == "A"


# --- copy choice -----------------------------------------------------------------------------

def test_recall_reads_the_copy_whose_volume_has_most_queued():
    reads = [read("r1", ("A", 0, 600), ("B", 900, 600)), read("r2", ("B", 0, 600))]
    decision = ask(reads, [vol("A"), vol("B")])
    assert decision.volume == "B"
    assert {s.request: s.position for s in decision.serve} == {"r2": 0, "r1": 900}


def test_recall_reads_the_copy_already_mounted():
    drives = [Drive("d1", "s1"), Drive("d2", "s1", state=READING, volume="A", mode=READ)]
    reads = [read("r1", ("A", 0, 2000), ("B", 0, 2000))]
    assert ask(reads, [vol("A"), vol("B")], drives).action == WAIT
    drives[1] = Drive("d2", "s1", volume="A", mode=READ, last_used=NOW)
    decision = ask(reads, [vol("A"), vol("B")], drives, drive="d2")
    assert (decision.action, decision.volume) == (KEEP, "A")


def test_recall_avoids_a_copy_in_its_remount_delay():
    reads = [read("r1", ("A", 0, 2000), ("B", 0, 2000))]
    decision = ask(reads, [vol("A", last_dismount=NOW - 60), vol("B")])
    assert decision.volume == "B"


def test_recall_prefers_the_copy_in_the_asking_drives_silo():
    reads = [read("r1", ("A", 0, 2000), ("B", 0, 2000))]
    volumes = [vol("A", silo="s1"), vol("B", silo="s2")]
    drives = [Drive("d1", "s1"), Drive("d2", "s2")]
    assert ask(reads, volumes, drives).volume == "A"
    assert ask(reads, volumes, drives, drive="d2").volume == "B"


def test_recall_takes_the_copy_in_a_silo_with_a_drive_online_over_a_busier_volume():
    """Volume A (silo s1, every drive offline) has more queued than B: batching would pick A,
    yet nothing can mount it, so the recall with a copy on B is served from B now; the recall
    whose only copy is on A waits for s1."""
    drives = [Drive("d1", "s1", state=OFFLINE), Drive("d2", "s2")]
    reads = [read("both", ("A", 0, 2000), ("B", 0, 2000)), read("only-a", ("A", 2000, 3000))]
    volumes = [vol("A", silo="s1"), vol("B", silo="s2")]
    decision = ask(reads, volumes, drives, drive="d2")
    assert decision.volume == "B" and served(decision) == ["both"]
    drives[0] = Drive("d1", "s1")  # s1 back: batching on A again
    assert ask(reads, volumes, drives, drive="d2").action == WAIT


def test_recall_leaves_a_copy_in_a_drive_gone_offline():
    drives = [Drive("d1", "s1"), Drive("d2", "s1", state=OFFLINE, volume="A", mode=READ)]
    reads = [read("r1", ("A", 0, 2000), ("B", 0, 2000))]
    assert ask(reads, [vol("A"), vol("B")], drives).volume == "B"


# --- the cache -------------------------------------------------------------------------------

def test_recalls_wait_while_the_cache_is_full():
    reads = [read("r1", ("A", 0, 2000))]
    decision = ask(reads, [vol("A")], cache_full=True)
    assert decision.action == WAIT
    assert decision.wait_until == NOW + CFG.recheck_s
    assert ask(reads, [vol("A")]).action == MOUNT


def test_audits_need_no_cache_room():
    audit = read("a1", ("A", 0, 2000), klass=AUDIT)
    assert ask([audit], [vol("A")], cache_full=True).action == MOUNT


def test_mounted_volume_with_recalls_held_by_the_cache_waits_instead_of_dismounting():
    drives = [Drive("d1", "s1", volume="A", mode=READ, last_used=NOW - 1000)]
    decision = ask([read("r1", ("A", 0, 10))], [vol("A")], drives, cache_full=True)
    assert decision.action == WAIT


# --- writes ----------------------------------------------------------------------------------

def test_writes_aggregate_per_group_until_the_minimum_size():
    volumes = [vol("S", state=SCRATCH)]
    small = [write("w1", 2000, at=NOW - 100), write("w2", 2000)]
    decision = ask(small, volumes)
    assert decision.action == WAIT
    assert decision.wait_until == NOW - 100 + CFG.write_max_wait_s
    decision = ask(small + [write("w3", 1000)], volumes)
    assert (decision.action, decision.mode, served(decision)) == (MOUNT, WRITE, ["w1", "w2", "w3"])


def test_writes_go_after_the_maximum_wait():
    old = write("w1", 10, at=NOW - CFG.write_max_wait_s)
    assert ask([old], [vol("S", state=SCRATCH)]).action == MOUNT


def test_writes_aggregate_per_group_not_across_groups():
    volumes = [vol("S", state=SCRATCH)]
    assert ask([write("w1", 3000, group="g"), write("w2", 3000, group="h")], volumes).action == WAIT


def test_another_drive_joins_a_group_only_for_its_share_of_the_queue():
    drives = [Drive("d1", "s1"), Drive("d2", "s1", state=WRITING, volume="W", mode=WRITE)]
    volumes = [vol("W", state=FILLING), vol("S", state=SCRATCH)]
    assert ask([write("w1", 6000)], volumes, drives).action == WAIT
    assert ask([write("w1", 6000), write("w2", 4000)], volumes, drives).action == MOUNT


def test_primary_and_backup_copies_go_to_different_drives_in_parallel():
    drives = [Drive("d1", "s1"), Drive("d2", "s1", state=WRITING, volume="P", mode=WRITE)]
    volumes = [vol("P", state=FILLING, group="primary"), vol("S", state=SCRATCH)]
    writes = [write("f1.0", 6000, group="primary"), write("f1.1", 6000, group="backup")]
    decision = ask(writes, volumes, drives)
    assert (decision.action, decision.group, served(decision)) == (MOUNT, "backup", ["f1.1"])


def test_a_copy_goes_only_to_the_silo_its_policy_names():
    volumes = [vol("S", state=SCRATCH)]
    assert ask([write("w1", 6000, silo="s2")], volumes).action == WAIT
    assert ask([write("w1", 6000, silo="s1")], volumes).action == MOUNT


def test_write_goes_to_the_fullest_filling_volume_of_its_group_in_the_drives_silo():
    volumes = [
        vol("F1", state=FILLING, end_of_data=3000),
        vol("F2", state=FILLING, end_of_data=6000),
        vol("F3", state=FILLING, end_of_data=8000, silo="s2"),
        vol("H1", state=FILLING, end_of_data=9000, group="h"),
        vol("S", state=SCRATCH),
    ]
    decision = ask([write("w1", 6000)], volumes)
    assert (decision.volume, decision.serve[0].position) == ("F2", 6000)


def test_write_takes_a_scratch_volume_which_joins_the_group():
    volumes = [vol("H1", state=FILLING, group="h"), vol("S", state=SCRATCH)]
    decision = ask([write("w1", 6000)], volumes)
    assert (decision.action, decision.volume, decision.group) == (MOUNT, "S", "g")
    assert decision.serve[0].position == 0


def test_write_prefers_scratch_to_a_filling_volume_in_its_remount_delay():
    volumes = [vol("F1", state=FILLING, last_dismount=NOW - 60), vol("S", state=SCRATCH)]
    assert ask([write("w1", 6000)], volumes).volume == "S"
    assert ask([write("w1", 6000)], volumes[:1]).action == WAIT


def test_a_file_larger_than_the_room_left_spans_volumes():
    volumes = [vol("F1", state=FILLING, end_of_data=7000)]
    decision = ask([write("w1", 6000)], volumes)
    assert [(s.request, s.position, s.length) for s in decision.serve] == [("w1", 7000, 3000)]


def test_no_file_starts_in_a_sliver_of_room_but_smaller_files_still_fit():
    drives = [Drive("d1", "s1", volume="F1", mode=WRITE, last_used=NOW)]
    volumes = [vol("F1", state=FILLING, end_of_data=9950)]
    decision = ask([write("big", 6000, at=NOW - 20), write("tiny", 30)], volumes, drives)
    assert [(s.request, s.length) for s in decision.serve] == [("tiny", 30)]


def test_mounted_write_volume_keeps_taking_its_groups_writes():
    drives = [Drive("d1", "s1", volume="F1", mode=WRITE, last_used=NOW)]
    volumes = [vol("F1", state=FILLING, end_of_data=1000)]
    decision = ask([write("w1", 10)], volumes, drives)
    assert (decision.action, served(decision)) == (KEEP, ["w1"])
    assert decision.serve[0].position == 1000


# --- volumes never chosen --------------------------------------------------------------------

@pytest.mark.parametrize("state", [SUSPECT, RETIRED, OFFLINE])
def test_unusable_volumes_are_never_read(state):
    reads = [read("r1", ("A", 0, 2000), ("B", 0, 2000))]
    assert ask(reads, [vol("A", state=state), vol("B")]).volume == "B"
    assert ask(reads[:1], [vol("A", state=state)]).action == WAIT


@pytest.mark.parametrize("state", [SUSPECT, RETIRED, OFFLINE, FULL, READ_ONLY])
def test_unwritable_volumes_are_never_written(state):
    volumes = [vol("A", state=state, end_of_data=100), vol("S", state=SCRATCH)]
    assert ask([write("w1", 6000)], volumes).volume == "S"


def test_suspect_mounted_volume_is_dismounted():
    drives = [Drive("d1", "s1", volume="A", mode=READ, last_used=NOW)]
    decision = ask([read("r1", ("A", 0, 10))], [vol("A", state=SUSPECT)], drives)
    assert decision.action == DISMOUNT


def test_a_volume_mounted_on_another_drive_is_never_mounted():
    drives = [Drive("d1", "s1"), Drive("d2", "s1", state=UNLOADING, volume="A", mode=READ)]
    assert ask([read("r1", ("A", 0, 2000))], [vol("A")], drives).action == WAIT
    filling = [vol("F1", state=FILLING), vol("S", state=SCRATCH)]
    drives[1] = Drive("d2", "s1", state=UNLOADING, volume="F1", mode=WRITE)
    assert ask([write("w1", 6000)], filling, drives).volume == "S"


def test_a_drive_in_another_silo_cannot_mount_the_volume():
    assert ask([read("r1", ("A", 0, 2000))], [vol("A", silo="s2")]).action == WAIT


def test_a_busy_drive_is_told_to_wait():
    drives = [Drive("d1", "s1", state=READING, volume="A", mode=READ)]
    assert ask([read("r1", ("A", 0, 2000))], [vol("A")], drives).action == WAIT


def test_unknown_drive_is_an_error():
    with pytest.raises(ValueError, match="not in the snapshot"):
        ask([], [], drive="nope")


# --- the FIFO baseline -----------------------------------------------------------------------

def test_fifo_serves_the_oldest_request_alone_whatever_its_class():
    reads = [read("r2", ("A", 100, 5000), at=NOW - 5, klass=OPERATOR),
             read("r1", ("A", 0, 10), at=NOW - 10)]
    decision = ask(reads, [vol("A")], policy=fifo)
    assert (decision.action, served(decision)) == (MOUNT, ["r1"])


def test_fifo_dismounts_after_every_request():
    drives = [Drive("d1", "s1", volume="A", mode=READ, last_used=NOW)]
    assert ask([read("r1", ("A", 0, 10))], [vol("A")], drives, policy=fifo).action == DISMOUNT


def test_fifo_skips_what_this_drive_cannot_serve():
    drives = [Drive("d1", "s1"), Drive("d2", "s1", state=READING, volume="A", mode=READ)]
    reads = [read("r1", ("A", 0, 10), at=NOW - 10), read("r2", ("B", 0, 10))]
    assert served(ask(reads, [vol("A"), vol("B")], drives, policy=fifo)) == ["r2"]


def test_fifo_writes_one_file_and_spans_it():
    volumes = [vol("F1", state=FILLING, end_of_data=7000)]
    decision = ask([write("w1", 6000), write("w2", 10)], volumes, policy=fifo)
    assert [(s.request, s.length) for s in decision.serve] == [("w1", 3000)]


def test_fifo_waits_with_nothing_to_serve():
    assert ask([], [], policy=fifo).action == WAIT


# --- configuration ---------------------------------------------------------------------------

def test_thresholds_scale_to_a_drive_model():
    small = SchedulerConfig.for_drive(rate_mb_s=3.0, capacity_gb=0.2, mount_s=35, unmount_s=15)
    assert small.write_min_bytes == 200_000_000
    assert small.read_min_bytes == 100_000_000
    big = SchedulerConfig.for_drive(rate_mb_s=11.2, capacity_gb=50, mount_s=30, unmount_s=30)
    assert big.write_min_bytes == 20 * 60 * 11_200_000
    assert big.batch_max_bytes == 50 * 10**9
    assert big.dismount_delay_s == SchedulerConfig().dismount_delay_s
    assert SchedulerConfig.for_drive(3.0, 0.2, 35, 15, read_max_wait_s=5).read_max_wait_s == 5
