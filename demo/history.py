"""Thirty days of SYNTHETIC throughput history, so a new demo's dashboards chart something.

The demo's real granules are a few megabytes and arrive at seed time, so they cannot show a
month of terabytes against the daily targets. This module records transfers through the real
recording service (metrics.services.record_transfers, which builds the minute, hour and day
roll-ups the dashboards read) with backdated times and sizes of the order a DAAC moves (tens of
GB per transfer): the volumes are made up, the path they take is the production one.

Each UTC day gets a volume per direction around its target (a factor in DAY_BAND: quieter
weekends, busy catch-up days), spread over its hours with an afternoon peak: each hour one
transfer per direction and collection, lasting under a minute so that each touches few roll-up
rows. Generation is a pure function of the day, so a day seeded in two goes (the seed ran
mid-day, then again later) gets the same transfers as one seeded whole: HistoryDay records how
far each day is done; the sizes are tens of GB, the transfers' count is what is small.
"""
import math
import random
from datetime import UTC, datetime, timedelta

from django.db import transaction
from django.utils import timezone

from backend.catalog.models import Collection
from backend.metrics import services as metrics
from backend.metrics.models import TransferRecord

from .models import HistoryDay

DAYS = 30
# A full day's bytes over its target stay inside this band (tests check it on the rows).
DAY_BAND = (0.6, 1.35)
DIRECTIONS = ("ingest", "distribution", "migrate", "recall")
# Bytes moved per day by the tape directions, as a share of a charted target: two tape copies
# of everything ingested, and recalls serving a quarter of what is distributed.
TAPE_SHARE = {"migrate": ("ingest", 2.0), "recall": ("distribution", 0.25)}
# Which collections the bytes belong to, with their shares.
COLLECTION_SHARES = {"MOD021KM.061": 5, "MOD10C1.061": 1, "GHRSST_OISST_L4.2.1": 2}
RATE_B_S = (0.6e9, 1.6e9)
# The history stops this long before the seed: the dashboards' current rate (last five minutes)
# is then the demo's real traffic only, and no synthetic transfer ends in the future.
QUIET = timedelta(minutes=10)
NOTE = ("The throughput history is synthetic: transfers recorded through the transfer service "
        "with backdated times and made-up sizes of tens of GB (the demo's own granules are a few "
        "MB).")


def day_factor(day, direction):
    """This day's volume over the target: in DAY_BAND, a quiet weekend and a catch-up day."""
    rng = random.Random(f"{day.isoformat()}-{direction}-factor")
    factor = rng.uniform(0.8, 1.2)
    if day.weekday() >= 5 and direction == "ingest":
        factor *= 0.8
    if day.day % 11 == 0:  # a catch-up day after a slow one
        factor = 1.3
    return min(DAY_BAND[1], max(DAY_BAND[0], factor))


def day_transfers(day, targets, collections):
    """[(direction, collection, bytes, started_at, ended_at)] for one whole UTC day: every hour,
    one transfer per direction and collection (its share of the hour's bytes)."""
    midnight = datetime(day.year, day.month, day.day, tzinfo=UTC)
    shares = sum(COLLECTION_SHARES.values())
    out = []
    for direction in DIRECTIONS:
        base, share = TAPE_SHARE.get(direction, (direction, 1.0))
        total = targets[base] * share * day_factor(day, base)
        rng = random.Random(f"{day.isoformat()}-{direction}")
        swing = [1 + 0.45 * math.sin(2 * math.pi * (hour + 0.5 - 9) / 24) * rng.uniform(0.7, 1)
                 for hour in range(24)]
        scale = total / sum(swing)
        for hour, weight in enumerate(swing):
            for key, collection in collections.items():
                nbytes = int(weight * scale * COLLECTION_SHARES[key] / shares)
                started = midnight + timedelta(hours=hour, seconds=rng.uniform(60, 3300))
                seconds = min(58.0, nbytes / rng.uniform(*RATE_B_S))
                out.append((direction, collection, nbytes, started,
                            started + timedelta(seconds=seconds)))
    return out


def seed_history(now=None, days=DAYS):
    """Record the synthetic transfers of the last `days` UTC days not yet recorded, up to
    `now`; returns how many transfers it recorded (0 when all was done before)."""
    now = now or timezone.now()
    targets = {d: t.bytes for d, t in metrics.targets().items()}
    collections = {c.key: c for c in Collection.objects.all() if c.key in COLLECTION_SHARES}
    if len(collections) < len(COLLECTION_SHARES):
        return 0
    done = {h.day: h.until for h in HistoryDay.objects.all()}
    today = now.astimezone(UTC).date()
    recorded = 0
    for back in range(days - 1, -1, -1):
        day = today - timedelta(days=back)
        start = done.get(day, datetime.min.replace(tzinfo=UTC))
        end_of_day = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)
        until = min(now - QUIET, end_of_day)
        if start >= until:
            continue
        records = [TransferRecord(direction=d, collection=c, bytes=b, started_at=s, ended_at=e)
                   for d, c, b, s, e in day_transfers(day, targets, collections)
                   if start <= s < until]
        with transaction.atomic():
            metrics.record_transfers(records)
            HistoryDay.objects.update_or_create(day=day, defaults={"until": until})
        recorded += len(records)
    return recorded


def synthetic_span():
    """(first day, until) of the synthetic history, or None when the demo recorded none."""
    days = list(HistoryDay.objects.order_by("day"))
    if not days:
        return None
    return days[0].day, days[-1].until
