"""Splitting transfers over periods: bytes land where they moved, and add up exactly."""
from datetime import UTC, datetime, timedelta

import pytest

from backend.metrics.rollup import DAY, HOUR, MINUTE, floor, split, tally


def at(h, m=0, s=0, day=1):
    return datetime(2026, 3, day, h, m, s, tzinfo=UTC)


def test_floor_is_utc():
    assert floor(at(10, 59, 30), HOUR) == at(10)
    assert floor(at(23, 59, 59), DAY) == at(0)


def test_transfer_within_one_minute_goes_whole_to_it():
    assert split(at(10, 1, 5), at(10, 1, 50), 1000, MINUTE) == [(at(10, 1), 1000)]


def test_transfer_across_minutes_splits_in_proportion():
    assert split(at(10, 59, 30), at(11, 0, 30), 1000, MINUTE) == [(at(10, 59), 500),
                                                                  (at(11, 0), 500)]


def test_transfer_across_midnight_splits_between_days_and_adds_up():
    parts = split(at(23, 30), at(0, 30, day=2), 3_000_001, DAY)
    assert [p[0] for p in parts] == [at(0), at(0, day=2)]
    assert sum(p[1] for p in parts) == 3_000_001
    assert abs(parts[0][1] - parts[1][1]) <= 1


def test_very_long_transfer_is_capped_in_buckets_but_keeps_every_byte():
    parts = split(at(0), at(0) + timedelta(days=5), 10**9, MINUTE, max_buckets=100)
    assert len(parts) == 100 and sum(p[1] for p in parts) == 10**9


def test_end_before_start_is_refused():
    with pytest.raises(ValueError, match="cannot end before it starts"):
        split(at(11), at(10), 1, MINUTE)


def test_tally_sums_bytes_where_they_moved_and_counts_each_transfer_where_it_ended():
    sums = tally([("ingest", "A.1", 1000, at(23, 59, 30), at(0, 0, 30, day=2)),
                  ("ingest", "A.1", 7, at(0, 0, 40, day=2), at(0, 0, 50, day=2)),
                  ("recall", "", 5, at(3), at(3))])
    assert sums[("day", at(0), "ingest", "A.1")] == [500, 0]
    assert sums[("day", at(0, day=2), "ingest", "A.1")] == [507, 2]
    assert sums[("minute", at(0, 0, day=2), "ingest", "A.1")] == [507, 2]
    assert sums[("hour", at(3), "recall", "")] == [5, 1]
    assert sum(b for (p, *_), (b, _) in sums.items() if p == "minute") == 1012


def test_tally_of_transfers_within_one_period_is_what_split_gives_them():
    """The one-period shortcut adds what split() and floor() would: each transfer's bytes and
    its count in the period holding both its start and its end."""
    import random

    rng = random.Random(5)
    transfers = []
    for _ in range(300):
        start = at(23, 58) + timedelta(seconds=rng.randrange(0, 240),
                                       microseconds=rng.randrange(10**6))
        end = start + timedelta(seconds=rng.choice([0, 0.5, 3, 61, 3700]))
        transfers.append((rng.choice(["ingest", "migrate"]), rng.choice(["A.1", ""]),
                          rng.randrange(0, 10**6), start, end))
    want = {}
    for direction, key, nbytes, start, end in transfers:
        for period, seconds in (("minute", MINUTE), ("hour", HOUR), ("day", DAY)):
            for bucket, share in split(start, end, nbytes, seconds):
                want.setdefault((period, bucket, direction, key), [0, 0])[0] += share
            want.setdefault((period, floor(end, seconds), direction, key), [0, 0])[1] += 1
    assert tally(transfers) == want
    with pytest.raises(ValueError, match="cannot end before it starts"):
        tally([("ingest", "", 1, at(10, 0, 2), at(10, 0, 1))])


def test_a_tuple_that_stands_for_many_transfers_counts_them_all():
    """An ingest chunk's record of its granules (count 40) counts 40 in every period, with its
    bytes where they moved, as 40 one-granule tuples over the same span do."""
    span = (at(10, 0, 10), at(10, 0, 50))
    assert tally([("ingest", "A.1", 4000, *span, 40)]) == tally(
        [("ingest", "A.1", 100, *span)] * 40)
    sums = tally([("ingest", "A.1", 4000, *span, 40)])
    assert {k[0]: v for k, v in sums.items()} == {"minute": [4000, 40], "hour": [4000, 40],
                                                  "day": [4000, 40]}
