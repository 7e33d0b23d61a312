"""Completeness of a collection that promises one granule per cadence (CMR #420: "we expect one
granule every 5 minutes — which ones never came?"). Pure: no Django, so it is tested directly.

Time is cut into slots of one cadence, aligned on the Unix epoch (so a 5-minute cadence starts
its slots at midnight UTC); a slot belongs to the day its start lies in. A granule fills every
slot whose midpoint its temporal coverage [start, end) holds, and always the slot holding its
own midpoint: so contiguous granules fill one slot each whatever their offset from the grid,
an instantaneous granule (start == end) fills the slot it falls in, a long one fills all it
spans, and a granule a little early or late does not spill into its neighbour's slot.
A gap is a run of consecutive expected slots no granule filled.
"""
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MIN_CADENCE_S = 1
MAX_CADENCE_S = 366 * 86400
MAX_LATENCY_S = 366 * 86400


@dataclass(frozen=True)
class Gap:
    start: datetime
    end: datetime
    missing: int


@dataclass(frozen=True)
class Report:
    expected: int
    received: int
    gaps: list[Gap] = field(default_factory=list)

    @property
    def missing(self):
        return self.expected - self.received


@dataclass(frozen=True)
class Late:
    granule: object
    temporal_end: datetime
    archived_at: datetime | None
    late_by_s: float


def _seconds(moment):
    return (moment - EPOCH).total_seconds()


def _moment(seconds):
    return EPOCH + timedelta(seconds=seconds)


def filled(cadence_s, start, end, lo, hi):
    """The slot indexes in [lo, hi) a granule covering [start, end) (epoch seconds) fills."""
    half = cadence_s / 2
    first = math.ceil((start - half) / cadence_s)
    last = math.ceil((end - half) / cadence_s)  # exclusive: the midpoint must be < end
    slots = set(range(max(first, lo), min(last, hi)))
    own = math.floor((start + end) / 2 / cadence_s)
    if lo <= own < hi:
        slots.add(own)
    return slots


def expected_slots(cadence_s, window_start, window_end, *, since=None, until=None):
    """Indexes of the slots that start in [window_start, window_end), end after `since` (the
    collection's first day) and end no later than `until` (now, less the latency target: a
    slot whose granule may still come is not missing yet)."""
    lo = math.ceil(_seconds(window_start) / cadence_s)
    hi = math.ceil(_seconds(window_end) / cadence_s)
    if since is not None:
        lo = max(lo, math.floor(_seconds(since) / cadence_s))
    if until is not None:
        hi = min(hi, math.floor(_seconds(until) / cadence_s))
    return lo, max(lo, hi)


def report(cadence_s, coverages, window_start, window_end, *, since=None, until=None):
    """Expected and received slots in the window, and the gaps, from [(start, end)] datetimes."""
    lo, hi = expected_slots(cadence_s, window_start, window_end, since=since, until=until)
    got = set()
    for start, end in coverages:
        got |= filled(cadence_s, _seconds(start), _seconds(end), lo, hi)
    return report_of_slots(cadence_s, lo, hi, got)


def report_of_slots(cadence_s, lo, hi, got):
    """The report of the expected slots [lo, hi) given the set of those filled (the database
    may find them: see completeness.window_segment)."""
    gaps, run = [], None
    for index in range(lo, hi + 1):
        if index < hi and index not in got:
            run = index if run is None else run
        elif run is not None:
            gaps.append(Gap(_moment(run * cadence_s), _moment(index * cadence_s), index - run))
            run = None
    return Report(expected=hi - lo, received=len(got), gaps=gaps)


def late(granules, latency_s, now):
    """The granules archived more than latency_s after their temporal end, or still not
    archived that long after it; from [(granule, temporal_end, archived_at or None)]."""
    limit = timedelta(seconds=latency_s)
    out = []
    for granule, temporal_end, archived_at in granules:
        done = archived_at if archived_at is not None else now
        if done - temporal_end > limit:
            out.append(Late(granule, temporal_end, archived_at,
                            (done - temporal_end - limit).total_seconds()))
    return out


@dataclass(frozen=True)
class Segment:
    """The figures of consecutive expected slots [lo, hi) (a day, or the live part of a
    window): what a longer window sums, with whether its first and last slots are missing so
    that a gap across the seam of two segments counts once."""
    expected: int
    received: int
    gaps: int
    first_missing: bool
    last_missing: bool
    late: int | None = None


def segment_of_slots(cadence_s, lo, hi, got, late=None):
    """The Segment of the expected slots [lo, hi) given the set of those filled."""
    found = report_of_slots(cadence_s, lo, hi, got)
    return Segment(found.expected, found.received, len(found.gaps),
                   hi > lo and lo not in got, hi > lo and hi - 1 not in got, late)


def join(segments):
    """One Segment of consecutive segments in time order (each starting at the slot after
    the last of the one before, or empty): sums, less one gap per seam a gap crosses."""
    expected = received = gaps = 0
    late = None
    first = last = None
    for part in segments:
        expected += part.expected
        received += part.received
        gaps += part.gaps
        if part.late is not None:
            late = (late or 0) + part.late
        if part.expected == 0:
            continue
        if last is not None and last.last_missing and part.first_missing:
            gaps -= 1
        first = first or part
        last = part
    return Segment(expected, received, gaps, bool(first and first.first_missing),
                   bool(last and last.last_missing), late)
