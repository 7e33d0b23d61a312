"""`seed_demo --history` gives a new demo's dashboards a month to show: the properties the
README and the dashboards claim, computed here from the rows themselves."""
import io
from collections import defaultdict
from datetime import UTC, timedelta

import pytest
from django.core.management import call_command
from django.db.models import Sum
from django.utils import timezone

from backend.accounts.models import AuditEvent
from backend.archive.models import ArchiveRequest, Drive, Reconciliation, Volume
from backend.metrics import services as metrics
from backend.metrics.models import TransferRecord, TransferRollup
from demo.models import HistoryDay
from distribution.models import Order, SubscriptionDelivery
from ingest.models import IngestGranule

pytestmark = pytest.mark.django_db

# A whole day's bytes over its target, as the README states it.
LOW, HIGH = 0.6, 1.35


@pytest.fixture
def seeded(data_root, settings):
    call_command("seed_demo", "--granules", "2", "--history", stdout=io.StringIO())
    return timezone.now()


def bytes_per_day(direction):
    """{UTC date: bytes} summed over the raw transfer records, by the day each started."""
    days = defaultdict(int)
    for started, nbytes in TransferRecord.objects.filter(direction=direction).values_list(
            "started_at", "bytes"):
        days[started.astimezone(UTC).date()] += nbytes
    return days


def test_the_seeded_demo_has_what_every_dashboard_needs(seeded):
    """One seeding (about ten seconds) checked for each dashboard's needs."""
    thirty_days_of_each_direction_around_its_target(seeded)
    the_dashboards_read_the_history_from_the_roll_ups()
    failures_a_repack_a_drive_fault_deliveries_and_a_reconciliation()


def thirty_days_of_each_direction_around_its_target(seeded):
    today = seeded.astimezone(UTC).date()
    window = [today - timedelta(days=n) for n in range(30)]
    targets = {d: t.bytes for d, t in metrics.targets().items()}
    for direction in ("ingest", "distribution"):
        days = bytes_per_day(direction)
        assert min(days) == window[-1], f"{direction} history starts on {min(days)}"
        assert all(days[day] > 0 for day in window[1:]), direction
        shares = {day: days[day] / targets[direction] for day in window[1:]}
        assert all(LOW <= share <= HIGH for share in shares.values()), (direction, shares)
        # varied: some days miss the target, some beat it
        assert min(shares.values()) < 1 < max(shares.values()), (direction, shares)
    for direction in ("migrate", "recall"):
        assert len(bytes_per_day(direction)) >= 29, direction


def the_dashboards_read_the_history_from_the_roll_ups():
    daily = metrics.daily(30)["days"]
    assert sum(1 for day in daily if day["ingest"] > 0 and day["distribution"] > 0) == 30
    hourly = metrics.throughput(48)["by_direction"]
    assert sum(1 for v in hourly["ingest"] if v > 0) >= 24
    assert sum(1 for v in hourly["distribution"] if v > 0) >= 24
    # every byte recorded is in the day roll-ups, once
    for direction in ("ingest", "distribution"):
        recorded = TransferRecord.objects.filter(direction=direction).aggregate(
            total=Sum("bytes"))["total"]
        rolled = TransferRollup.objects.filter(period="day", direction=direction).aggregate(
            total=Sum("bytes"))["total"]
        assert recorded == rolled


def failures_a_repack_a_drive_fault_deliveries_and_a_reconciliation():
    failed = IngestGranule.objects.filter(state="failed")
    assert failed.count() == 2 and all(g.reason for g in failed)
    migrations = ArchiveRequest.objects.filter(kind="migrate", state="failed")
    assert migrations.exists() and all(r.error for r in migrations)

    [repack] = ArchiveRequest.objects.filter(kind="repack")
    assert repack.state == "done"
    repacked = Volume.objects.get(pk=repack.volume_id)
    assert repacked.live_bytes == 0 and repacked.file_count == 0

    offline = Drive.objects.filter(state="offline")
    assert offline.count() == 1 and offline.get().offline_reason
    assert AuditEvent.objects.filter(target_type="drive", action="vary_off").count() == 2
    assert AuditEvent.objects.filter(target_type="drive", action="vary_on").count() == 1

    assert SubscriptionDelivery.objects.filter(state="delivered").count() == 2
    assert Order.objects.filter(state="completed", subscription__isnull=True).count() == 1
    assert Reconciliation.objects.filter(state="done").count() == 1


def test_seeding_again_doubles_nothing(seeded):
    """A second seed adds no operation and repeats no transfer; it may only extend the
    history by the transfers that started in the minutes between the two seeds."""
    cutoff = HistoryDay.objects.latest("day").until

    def state():
        older = TransferRecord.objects.filter(started_at__lt=cutoff)
        return (older.count(), older.aggregate(total=Sum("bytes"))["total"],
                ArchiveRequest.objects.count(), IngestGranule.objects.count(),
                Order.objects.count(), Reconciliation.objects.count(),
                AuditEvent.objects.count())

    before = state()
    call_command("seed_demo", "--granules", "2", "--history", stdout=io.StringIO())
    assert state() == before
    rows = list(TransferRecord.objects.values_list("direction", "started_at", "bytes"))
    assert len(rows) == len(set(rows))
    recorded = TransferRecord.objects.aggregate(total=Sum("bytes"))["total"]
    assert TransferRollup.objects.filter(period="day").aggregate(
        total=Sum("bytes"))["total"] == recorded


def test_the_dashboards_are_told_which_history_is_synthetic(seeded, operator_api, user_api):
    answer = operator_api.get("/api/v1/demo/synthetic-history/").json()
    assert answer["synthetic"] is True and "synthetic" in answer["note"]
    first = min(TransferRecord.objects.values_list("started_at", flat=True))
    assert answer["first_day"] == first.astimezone(UTC).date().isoformat()
    assert user_api.get("/api/v1/demo/synthetic-history/").status_code == 403


def test_without_a_demo_history_nothing_is_called_synthetic(operator_api):
    assert operator_api.get("/api/v1/demo/synthetic-history/").json() == {
        "synthetic": False, "first_day": None, "until": None, "note": ""}


def test_the_current_rate_is_over_the_last_five_minutes_of_the_seeded_history(seeded):
    """today()'s rate on the seeded demo: the bytes that moved in the five minutes (from the
    start of the minute they begin in) over that span, summed here from the raw records."""
    last = TransferRecord.objects.filter(direction="ingest").latest("ended_at")
    now = last.ended_at + timedelta(seconds=30)
    window = (now - timedelta(minutes=5)).replace(second=0, microsecond=0)
    edge = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
    moved = 0.0
    for record in TransferRecord.objects.filter(direction="ingest", ended_at__gte=window):
        span = (record.ended_at - record.started_at).total_seconds()
        inside = (min(record.ended_at, edge) - max(record.started_at, window)).total_seconds()
        moved += record.bytes * (inside / span if span else 1.0)
    rate = metrics.today(now=now)["directions"]["ingest"]["rate_b_s"]
    assert moved > 0
    assert rate == pytest.approx(moved / (now - window).total_seconds(), rel=1e-6, abs=1)
    # ten minutes after the last transfer the rate has fallen to nothing
    later = metrics.today(now=seeded + timedelta(minutes=10))["directions"]["ingest"]
    assert later["rate_b_s"] == 0
