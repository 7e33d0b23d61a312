"""Completeness against a cadence (catalog.cadence), checked against a brute force that walks
the day slot by slot with datetimes and tests the rule as the docstring states it."""
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from backend.catalog import cadence

DAY = datetime(2026, 3, 14, tzinfo=UTC)
NEXT = DAY + timedelta(days=1)
FIVE_MIN = 300


def brute(cadence_s, coverages, start, end, since=None, until=None):
    """(expected, received, [(gap start, gap end)]) by walking every slot of the day."""
    step = timedelta(seconds=cadence_s)
    slot = cadence.EPOCH + step * -(-int((start - cadence.EPOCH).total_seconds()) // cadence_s)
    states = []
    while slot < end:
        slot_end = slot + step
        ok_since = since is None or slot_end > since
        ok_until = until is None or slot_end <= until
        if ok_since and ok_until:
            mid = slot + step / 2
            hit = any(s <= mid < e or slot <= s + (e - s) / 2 < slot_end for s, e in coverages)
            states.append((slot, slot_end, hit))
        slot = slot_end
    gaps = []
    for s, e, hit in states:
        if hit:
            continue
        if gaps and gaps[-1][1] == s:
            gaps[-1] = (gaps[-1][0], e)
        else:
            gaps.append((s, e))
    return len(states), sum(hit for _, _, hit in states), gaps


def test_a_day_of_five_minute_granules_with_two_missing_runs():
    granules = [(DAY + timedelta(minutes=5 * i), DAY + timedelta(minutes=5 * i + 5))
                for i in range(288) if i not in (10, 11, 12, 200)]
    got = cadence.report(FIVE_MIN, granules, DAY, NEXT)
    assert (got.expected, got.received, got.missing) == (288, 284, 4)
    assert [(g.start, g.end, g.missing) for g in got.gaps] == [
        (DAY + timedelta(minutes=50), DAY + timedelta(minutes=65), 3),
        (DAY + timedelta(minutes=1000), DAY + timedelta(minutes=1005), 1),
    ]


def test_granules_off_the_grid_by_a_little_fill_their_own_slot_only():
    jittered = [(DAY + timedelta(minutes=5 * i, seconds=-7), DAY + timedelta(minutes=5 * i + 5,
                                                                            seconds=-7))
                for i in range(288) if i != 100]
    got = cadence.report(FIVE_MIN, jittered, DAY, NEXT)
    assert [(g.start, g.missing) for g in got.gaps] == [(DAY + timedelta(minutes=500), 1)]


def test_instantaneous_granules_and_the_window_cut_by_since_and_until():
    snaps = [(DAY + timedelta(hours=h, minutes=1),) * 2 for h in range(24) if h != 5]
    got = cadence.report(3600, snaps, DAY, NEXT, since=DAY + timedelta(hours=2, minutes=30),
                         until=DAY + timedelta(hours=20))
    assert (got.expected, got.received) == (18, 17)  # slots 02:00 .. 19:00
    assert [(g.start, g.end) for g in got.gaps] == [
        (DAY + timedelta(hours=5), DAY + timedelta(hours=6))]


def test_late_granules_by_archive_time_and_still_missing_ones():
    end = DAY + timedelta(hours=1)
    rows = [("on-time", end, end + timedelta(minutes=59)),
            ("late", end, end + timedelta(minutes=61)),
            ("never", end, None)]
    got = cadence.late(rows, 3600, now=end + timedelta(hours=3))
    assert [(x.granule, x.late_by_s) for x in got] == [("late", 60.0), ("never", 7200.0)]


moments = st.integers(min_value=-2 * 86400, max_value=3 * 86400).map(
    lambda s: DAY + timedelta(seconds=s))


@settings(max_examples=300, deadline=None)
@given(cadence_s=st.sampled_from([1800, 3600, 5400, 7000, 86400]),
       spans=st.lists(st.tuples(moments, st.integers(0, 3 * 86400)), max_size=12),
       since=st.none() | moments, until=st.none() | moments)
def test_report_agrees_with_the_brute_force(cadence_s, spans, since, until):
    coverages = [(s, s + timedelta(seconds=length)) for s, length in spans]
    got = cadence.report(cadence_s, coverages, DAY, NEXT, since=since, until=until)
    expected, received, gaps = brute(cadence_s, coverages, DAY, NEXT, since, until)
    assert (got.expected, got.received) == (expected, received)
    assert [(g.start, g.end) for g in got.gaps] == gaps
    assert sum(g.missing for g in got.gaps) == got.missing


def brute_gaps(lo, hi, got):
    """Runs of missing slots in [lo, hi), counted slot by slot."""
    runs, inside = 0, False
    for k in range(lo, hi):
        missing = k not in got
        runs += missing and not inside
        inside = missing
    return runs


@settings(max_examples=300)
@given(lo=st.integers(-50, 50), length=st.integers(0, 120),
       got=st.sets(st.integers(-60, 180)), seams=st.sets(st.integers(-60, 180)),
       late=st.lists(st.integers(0, 5), max_size=8))
def test_joined_segments_equal_the_whole_window(lo, length, got, seams, late):
    """Days kept apart and joined (catalog.completeness_days) say what the whole window says:
    sums, and a gap across a seam counted once; late counts add up."""
    hi = lo + length
    cuts = [lo, *sorted(s for s in seams if lo < s < hi), hi]
    parts = [cadence.segment_of_slots(7, a, b, {k for k in got if a <= k < b},
                                      late[i] if i < len(late) else 0)
             for i, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False))]
    whole = cadence.join(parts)
    inside = {k for k in got if lo <= k < hi}
    assert (whole.expected, whole.received) == (length, len(inside))
    assert whole.gaps == brute_gaps(lo, hi, got)
    assert whole.first_missing == (length > 0 and lo not in got)
    assert whole.last_missing == (length > 0 and hi - 1 not in got)
    assert whole.late == (sum(late[:len(parts)]) if parts else None)
    assert cadence.join([]) == cadence.Segment(0, 0, 0, False, False, None)
