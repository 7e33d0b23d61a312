"""Measurements: transfers with their roll-ups, daily targets, queue heartbeats, and the
figures the dashboards chart. All times UTC."""
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Sum
from django.utils import timezone

from . import rollup
from .models import DailyTarget, QueueHeartbeat, TransferRecord, TransferRollup

DIRECTIONS = [d for d, _ in TransferRecord.Direction.choices]
CHARTED = ("ingest", "distribution")


def record_heartbeat(queue, worker, sent_at):
    """Note that `worker` served `queue`; idempotent per queue (last beat wins)."""
    beat, _ = QueueHeartbeat.objects.update_or_create(
        queue=queue, defaults={"worker": worker, "sent_at": sent_at, "seen_at": timezone.now()},
    )
    return beat


def queue_health(stale_after_s=300):
    now = timezone.now()
    return [
        {
            "queue": b.queue, "worker": b.worker, "seen_at": b.seen_at,
            "latency_s": round(b.latency_s, 3),
            "alive": (now - b.seen_at).total_seconds() < stale_after_s,
        }
        for b in QueueHeartbeat.objects.all()
    ]


def record_transfer(direction, nbytes, started_at, ended_at, collection=None):
    """Record one transfer and add it to the minute, hour and day roll-ups."""
    (record,) = record_transfers([TransferRecord(
        direction=direction, bytes=nbytes, started_at=started_at, ended_at=ended_at,
        collection=collection)])
    return record


def per_collection(direction, moves):
    """Transfer records of `moves` ((collection id, bytes, started, ended), one per granule or
    file moved together): one per collection, counting them, from the first start to the last
    end. A batch's thousands of small moves were a row each, as much work as the move of a
    small file itself (#33, #28); the roll-ups count each move all the same."""
    records = {}
    for collection_id, nbytes, started, ended in moves:
        record = records.get(collection_id)
        if record is None:
            records[collection_id] = TransferRecord(
                direction=direction, collection_id=collection_id, bytes=nbytes, transfers=1,
                started_at=started, ended_at=ended)
            continue
        record.bytes += nbytes
        record.transfers += 1
        record.started_at = min(record.started_at, started)
        record.ended_at = max(record.ended_at, ended)
    return list(records.values())


def record_transfers(records, insert=None):
    """Record many transfers at once (unsaved TransferRecord objects), with their roll-ups:
    one insert for the records and one upsert per roll-up row they touch. `insert(records)`
    inserts them when given (an ingest chunk's thousand stream through the catalog's COPY,
    which metrics, below the catalog, cannot import); else bulk_create.

    Collections are reached through the record's foreign key, not imported: metrics sits below
    every app so that all of them can record transfers."""
    records = list(records)
    if not records:
        return records
    wanted = {r.collection_id for r in records if r.collection_id}
    collections = TransferRecord.collection.field.related_model.objects
    keys = {c.pk: c.key for c in collections.filter(pk__in=wanted)}
    sums = rollup.tally((r.direction, keys.get(r.collection_id, ""), r.bytes, r.started_at,
                         r.ended_at, r.transfers) for r in records)
    with transaction.atomic():
        if insert is None:
            TransferRecord.objects.bulk_create(records, batch_size=1000)
        else:
            insert(records)
        _add(sums)
    return records


def _add(sums):
    """Add to the roll-up rows, creating those missing: one INSERT ... ON CONFLICT DO UPDATE
    per row, batched (the same SQL on SQLite and PostgreSQL; safe against a racing creator,
    and one statement per row instead of an update and a create)."""
    qn = connection.ops.quote_name
    table = qn(TransferRollup._meta.db_table)
    names = ("period", "start", "direction", "collection", "bytes", "transfers")
    quoted = [qn(TransferRollup._meta.get_field(n).column) for n in names]
    columns, key = ", ".join(quoted), ", ".join(quoted[:4])
    nbytes, count = quoted[4:]
    sql = (f"INSERT INTO {table} ({columns}) VALUES (%s, %s, %s, %s, %s, %s) "
           f"ON CONFLICT ({key}) DO UPDATE SET {nbytes} = {table}.{nbytes} + excluded.{nbytes}, "
           f"{count} = {table}.{count} + excluded.{count}")
    adapt = connection.ops.adapt_datetimefield_value
    rows = [(period, adapt(start), direction, collection, total, transfers)
            for (period, start, direction, collection), (total, transfers) in sums.items()]
    with connection.cursor() as cursor:
        for i in range(0, len(rows), 1000):
            cursor.executemany(sql, rows[i:i + 1000])


# ---------------------------------------------------------------------------------------------
# Daily targets


def targets():
    """{direction: DailyTarget}, created from the settings' defaults on first use."""
    defaults = {"ingest": settings.GRANARY_DAILY_INGEST_TB,
                "distribution": settings.GRANARY_DAILY_DISTRIBUTION_TB}
    have = {t.direction: t for t in DailyTarget.objects.all()}
    for direction, tb in defaults.items():
        if direction not in have:
            have[direction], _ = DailyTarget.objects.get_or_create(
                direction=direction, defaults={"terabytes": tb})
    return have


def set_target(direction, terabytes):
    if direction not in CHARTED:
        raise ValueError(f"no daily target for {direction!r}; use one of {', '.join(CHARTED)}")
    if not terabytes >= 0:
        raise ValueError("a daily target is a number of terabytes, 0 or more")
    target, _ = DailyTarget.objects.update_or_create(direction=direction,
                                                     defaults={"terabytes": terabytes})
    return target


# ---------------------------------------------------------------------------------------------
# Dashboard figures (from roll-ups only)


def _sum(period, direction, since, until=None):
    qs = TransferRollup.objects.filter(period=period, direction=direction, start__gte=since)
    if until is not None:
        qs = qs.filter(start__lt=until)
    return qs.aggregate(total=Sum("bytes"))["total"] or 0


def today(now=None, rate_window_s=300):
    """Per charted direction: bytes so far today, the current rate, the projected end-of-day
    total and the surplus (positive) or shortfall (negative) against the target.

    The rate is over the last five minutes (from the start of the minute they begin in), so it
    falls to zero minutes after traffic stops rather than an hour later."""
    now = now or timezone.now()
    day = rollup.floor(now, rollup.DAY)
    elapsed = (now - day).total_seconds()
    remaining = rollup.DAY - elapsed
    window_start = rollup.floor(now - timedelta(seconds=rate_window_s), rollup.MINUTE)
    span = (now - window_start).total_seconds()
    out = {"date": day.date().isoformat(), "now": now, "seconds_left": int(remaining),
           "directions": {}}
    goals = targets()
    for direction in CHARTED:
        so_far = _sum("minute", direction, day, now + timedelta(minutes=1))
        recent = _sum("minute", direction, window_start, now + timedelta(minutes=1))
        rate = recent / span
        projected = so_far + rate * remaining
        target = goals[direction].bytes
        out["directions"][direction] = {
            "bytes": so_far, "rate_b_s": round(rate, 1), "projected_bytes": int(projected),
            "target_bytes": target, "surplus_bytes": int(projected - target),
            # four significant digits: a new archive's 40 MB of a 1 TB target is not 0 %
            "percent_of_target": float(f"{100.0 * so_far / target:.4g}") if target else None,
        }
    return out


def daily(days=30, now=None):
    """Bytes per UTC day for the last `days` days (zeros included) and the targets."""
    now = now or timezone.now()
    first = rollup.floor(now, rollup.DAY) - timedelta(days=days - 1)
    rows = (TransferRollup.objects.filter(period="day", start__gte=first,
                                          direction__in=CHARTED)
            .values("start", "direction").annotate(total=Sum("bytes")))
    totals = {(r["start"], r["direction"]): r["total"] for r in rows}
    goals = targets()
    return {
        "targets": {d: goals[d].bytes for d in CHARTED},
        "days": [
            {"date": (first + timedelta(days=i)).date().isoformat(),
             **{d: totals.get((first + timedelta(days=i), d), 0) for d in CHARTED}}
            for i in range(days)
        ],
    }


def throughput(hours=48, now=None):
    """MB/s per hour for the last `hours` hours, by direction and by collection; the current
    hour's is over its elapsed part, so a chart does not fall at its right edge."""
    now = now or timezone.now()
    first = rollup.floor(now, rollup.HOUR) - timedelta(hours=hours - 1)
    slots = [first + timedelta(hours=i) for i in range(hours)]
    end = slots[-1] + timedelta(hours=1)  # nothing after the window (a `now` in the past)
    rows = (TransferRollup.objects.filter(period="hour", start__gte=first, start__lt=end)
            .values("start", "direction", "collection").annotate(total=Sum("bytes")))
    # the hour under way is a rate over its elapsed part (a minute at least), not a drop
    elapsed = min(rollup.HOUR, max(60.0, (now - slots[-1]).total_seconds()))
    by_direction = {d: [0.0] * hours for d in DIRECTIONS}
    by_collection = {}
    for r in rows:
        i = int((r["start"] - first).total_seconds() // rollup.HOUR)
        mb_s = r["total"] / (elapsed if i == hours - 1 else rollup.HOUR) / 1e6
        by_direction[r["direction"]][i] += mb_s
        series = by_collection.setdefault(r["collection"] or "(none)", [0.0] * hours)
        series[i] += mb_s
    return {
        "hours": [s.isoformat() for s in slots],
        "by_direction": {d: _rounded(v) for d, v in by_direction.items()},
        "by_collection": {c: _rounded(v) for c, v in sorted(by_collection.items())},
    }


def _rounded(values):
    return [round(v, 4) for v in values]
