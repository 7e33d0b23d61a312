"""Splitting a transfer's bytes over the periods it spans. Pure Python, no Django.

A transfer from 10:59:30 to 11:00:30 puts half its bytes in each minute, so hourly MB/s
charts show when bytes moved, not when the transfer happened to end.
"""
from datetime import UTC, datetime, timedelta

MINUTE, HOUR, DAY = 60, 3600, 86400
PERIODS = {"minute": MINUTE, "hour": HOUR, "day": DAY}


def floor(moment, seconds):
    """The start of the UTC period of `seconds` that holds `moment`."""
    epoch = moment.astimezone(UTC).timestamp()
    return datetime.fromtimestamp(epoch - epoch % seconds, UTC)


def split(start, end, nbytes, seconds, max_buckets=2000):
    """[(period_start, bytes)] for a transfer; the parts add up to nbytes exactly.

    A transfer spanning more than max_buckets periods is spread evenly over the last ones
    (a month-long copy does not need per-minute detail).
    """
    if end < start:
        raise ValueError("a transfer cannot end before it starts")
    first = floor(start, seconds)
    last = floor(end, seconds)
    count = int((last - first).total_seconds() // seconds) + 1
    if count == 1 or nbytes == 0:
        return [(last, nbytes)]
    if count > max_buckets:
        first = last - timedelta(seconds=seconds * (max_buckets - 1))
        start, count = first, max_buckets
    span = (end - start).total_seconds()
    parts, given = [], 0
    for i in range(count):
        bucket = first + timedelta(seconds=seconds * i)
        lo = max(start, bucket)
        hi = min(end, bucket + timedelta(seconds=seconds))
        share = int(nbytes * (hi - lo).total_seconds() / span) if span else 0
        parts.append([bucket, share])
        given += share
    parts[-1][1] += nbytes - given
    return [(bucket, share) for bucket, share in parts if share]


def tally(transfers):
    """The roll-up rows a batch of transfers adds to: {(period, start, direction, key):
    [bytes, transfers]} from (direction, key, nbytes, started_at, ended_at[, count]) tuples
    (count: how many transfers the tuple stands for, 1 when not given).

    Bytes go where they moved (split); each transfer counts once, in the period it ended.
    """
    sums, starts = {}, {}
    for direction, key, nbytes, started, ended, *many in transfers:
        count = many[0] if many else 1
        begun, end = started.timestamp(), ended.timestamp()
        for period, seconds in PERIODS.items():
            last = end - end % seconds
            if begun - begun % seconds == last and begun <= end:
                # within one period, as nearly every transfer of an ingest chunk is: floor()
                # once, and the period's start made once per batch, not three times per record
                if last not in starts:
                    starts[last] = datetime.fromtimestamp(last, UTC)
                row = sums.setdefault((period, starts[last], direction, key), [0, 0])
                row[0] += nbytes
                row[1] += count
                continue
            for bucket, share in split(started, ended, nbytes, seconds):
                sums.setdefault((period, bucket, direction, key), [0, 0])[0] += share
            sums.setdefault((period, floor(ended, seconds), direction, key), [0, 0])[1] += count
    return sums
