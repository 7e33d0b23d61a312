"""Buckets of the search timeline (pure: no Django): which size suits a span, where a bucket
starts, and every bucket between two instants, so the histogram has no gaps."""
from datetime import datetime, timedelta

BUCKETS = ("hour", "day", "month", "year")
# The most buckets one timeline answers; a finer bucket over a longer span is refused.
MAX_BUCKETS = 5000
# Auto: the finest bucket that keeps a span to a chartable number of bars.
_AUTO_UP_TO = (("hour", timedelta(days=3)), ("day", timedelta(days=366)),
               ("month", timedelta(days=366 * 30)))
_APPROX = {"hour": timedelta(hours=1), "day": timedelta(days=1),
           "month": timedelta(days=30.436875), "year": timedelta(days=365.2425)}


class TimelineError(ValueError):
    """A bucket that cannot be used, with a sentence for the user."""


def auto_bucket(first, last):
    """hour up to 3 days between the first and last start, day up to a year, month up to
    30 years, year beyond."""
    span = last - first
    for bucket, up_to in _AUTO_UP_TO:
        if span <= up_to:
            return bucket
    return "year"


def floor(instant, bucket):
    """The start of the bucket holding `instant` (its time zone kept)."""
    instant = instant.replace(minute=0, second=0, microsecond=0)
    if bucket in ("day", "month", "year"):
        instant = instant.replace(hour=0)
    if bucket in ("month", "year"):
        instant = instant.replace(day=1)
    if bucket == "year":
        instant = instant.replace(month=1)
    return instant


def following(start, bucket):
    """The start of the bucket after the one starting at `start`."""
    if bucket == "hour":
        return start + timedelta(hours=1)
    if bucket == "day":
        return start + timedelta(days=1)
    if bucket == "month":
        return start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)
    return start.replace(year=start.year + 1)


def bucket_starts(first: datetime, last: datetime, bucket):
    """Every bucket start from the one holding `first` to the one holding `last`; refused
    when there would be more than MAX_BUCKETS."""
    if (last - first) / _APPROX[bucket] > MAX_BUCKETS:
        raise TimelineError(
            f"{bucket} buckets from {first:%Y-%m-%d} to {last:%Y-%m-%d} are more than "
            f"{MAX_BUCKETS}: choose a larger bucket or a narrower search")
    starts, at, end = [], floor(first, bucket), floor(last, bucket)
    while at <= end:
        starts.append(at)
        at = following(at, bucket)
    return starts
