"""Roll-ups, targets and the dashboard figures, with transfers across UTC day boundaries."""
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from backend.metrics import services
from backend.metrics.models import TransferRecord, TransferRollup
from tests.factories import CollectionFactory

pytestmark = pytest.mark.django_db

GB = 10**9


def at(day, h, m=0):
    return datetime(2026, 3, day, h, m, tzinfo=UTC)


def test_rollups_follow_records_across_midnight():
    c = CollectionFactory(short_name="MOD021KM", version="061")
    services.record_transfer("ingest", 2 * GB, at(1, 23, 30), at(2, 0, 30), c)
    services.record_transfer("ingest", GB, at(2, 10), at(2, 10, 0), c)
    days = {r.start: r for r in TransferRollup.objects.filter(period="day", direction="ingest")}
    assert days[at(1, 0)].bytes == GB and days[at(1, 0)].transfers == 0
    assert days[at(2, 0)].bytes == 2 * GB and days[at(2, 0)].transfers == 2
    hours = TransferRollup.objects.filter(period="hour").order_by("start")
    assert [(h.start, h.bytes) for h in hours] == [
        (at(1, 23), GB), (at(2, 0), GB), (at(2, 10), GB)]
    assert all(h.collection == "MOD021KM.061" for h in hours)
    total = sum(TransferRollup.objects.filter(period="minute").values_list("bytes", flat=True))
    assert total == sum(TransferRecord.objects.values_list("bytes", flat=True)) == 3 * GB


def test_daily_has_every_day_with_zeros_and_the_targets():
    services.record_transfer("distribution", 5 * GB, at(3, 1), at(3, 2))
    body = services.daily(days=3, now=at(4, 12))
    assert [d["date"] for d in body["days"]] == ["2026-03-02", "2026-03-03", "2026-03-04"]
    assert [d["distribution"] for d in body["days"]] == [0, 5 * GB, 0]
    assert body["targets"] == {"ingest": 10**12, "distribution": 2 * 10**12}


def test_today_projects_the_end_of_day_from_the_last_five_minutes():
    now = at(5, 12)
    services.record_transfer("ingest", 100 * GB, at(5, 1), at(5, 2))        # early, not recent
    services.record_transfer("ingest", 3 * GB, at(5, 11, 56), at(5, 11, 59))  # the last 5 min
    figures = services.today(now=now)["directions"]["ingest"]
    assert figures["bytes"] == 103 * GB
    assert figures["rate_b_s"] == pytest.approx(3 * GB / 300, rel=1e-6)
    assert figures["projected_bytes"] == pytest.approx(103 * GB + 3 * GB / 300 * 12 * 3600,
                                                       rel=1e-6)
    assert figures["surplus_bytes"] == pytest.approx(figures["projected_bytes"] - 10**12, abs=1)
    assert services.today(now=now)["seconds_left"] == 12 * 3600


def test_the_current_rate_falls_to_zero_minutes_after_traffic_stops():
    services.record_transfer("ingest", 30 * GB, at(5, 11, 30), at(5, 11, 50))
    figures = services.today(now=at(5, 11, 51))["directions"]["ingest"]
    assert figures["rate_b_s"] > 0                           # its last minute is in the window
    figures = services.today(now=at(5, 12))["directions"]["ingest"]
    assert figures["rate_b_s"] == 0                          # ten minutes on
    assert figures["projected_bytes"] == 30 * GB


def test_today_keeps_a_small_share_of_the_target_visible():
    services.record_transfer("ingest", 40_600_000, at(5, 1), at(5, 1, 1))
    figures = services.today(now=at(5, 2))["directions"]["ingest"]
    assert figures["percent_of_target"] == 0.00406
    assert services.today(now=at(5, 2))["directions"]["distribution"]["percent_of_target"] == 0


def test_throughput_per_hour_by_direction_and_collection():
    now = timezone.now()
    hour = now.replace(minute=0, second=0, microsecond=0)
    c = CollectionFactory(short_name="MOD10C1", version="061")
    services.record_transfer("recall", 36 * 10**8, hour - timedelta(hours=1),
                             hour - timedelta(minutes=1), c)
    body = services.throughput(hours=3, now=now)
    assert len(body["hours"]) == 3
    assert body["by_direction"]["recall"][1] == pytest.approx(1.0, rel=0.02)   # MB/s
    assert body["by_collection"]["MOD10C1.061"][1] == pytest.approx(1.0, rel=0.02)


def test_the_hour_under_way_is_a_rate_over_its_elapsed_part():
    """Half an hour into an hour, 1.8 GB moved in it is 1 MB/s, not the 0.5 MB/s a whole
    hour's mean would make (a chart falling at its right edge while traffic is steady)."""
    hour = timezone.now().replace(minute=0, second=0, microsecond=0) - timedelta(hours=2)
    services.record_transfer("ingest", 18 * 10**8, hour + timedelta(minutes=10),
                             hour + timedelta(minutes=11))
    services.record_transfer("ingest", 36 * 10**8, hour - timedelta(minutes=50),
                             hour - timedelta(minutes=49))
    body = services.throughput(hours=2, now=hour + timedelta(minutes=30))
    assert body["by_direction"]["ingest"] == [pytest.approx(1.0), pytest.approx(1.0)]
    # seconds into an hour the rate is over a minute, not a burst over two seconds
    other = hour - timedelta(hours=5)
    services.record_transfer("recall", 6 * 10**7, other, other + timedelta(seconds=1))
    early = services.throughput(hours=1, now=other + timedelta(seconds=2))
    assert early["by_direction"]["recall"] == [pytest.approx(1.0)]


def test_metrics_api_for_operators_with_editable_targets(api, user_api, operator_api):
    assert user_api.get("/api/v1/metrics/today/").status_code == 403
    assert api.get("/api/v1/metrics/daily/").status_code in (401, 403)
    services.record_transfer("ingest", GB, timezone.now() - timedelta(minutes=5),
                             timezone.now() - timedelta(minutes=4))
    today = operator_api.get("/api/v1/metrics/today/").json()
    assert today["directions"]["ingest"]["bytes"] == GB
    assert len(operator_api.get("/api/v1/metrics/daily/?days=30").json()["days"]) == 30
    assert operator_api.get("/api/v1/metrics/throughput/?hours=48").json()["hours"]
    changed = operator_api.put("/api/v1/metrics/targets/", {"ingest": 1.5}, format="json")
    assert changed.json() == {"ingest": 1.5, "distribution": 2.0}
    assert operator_api.get("/api/v1/metrics/today/").json()["directions"]["ingest"][
        "target_bytes"] == int(1.5e12)


@pytest.mark.parametrize("query, message", [
    ("daily/?days=0", "days: Ensure this value is greater than or equal to 1."),
    ("daily/?days=x", "days: A valid integer is required."),
    ("throughput/?hours=1000", "hours: Ensure this value is less than or equal to 336."),
])
def test_bad_windows_are_400_with_a_message(operator_api, query, message):
    response = operator_api.get(f"/api/v1/metrics/{query}")
    assert response.status_code == 400 and message in response.json()["detail"]


def test_negative_target_is_refused(operator_api):
    response = operator_api.put("/api/v1/metrics/targets/", {"distribution": -1}, format="json")
    assert response.status_code == 400 and "distribution" in response.json()["detail"]


@pytest.mark.parametrize("body", [{"distribution": 1e300}, {"ingest": 100_001},
                                  {"ingest": "1e309"}, {"ingest": "NaN"}, {"ingest": [1]}])
def test_a_target_past_the_bound_is_refused_and_the_dashboards_keep_answering(operator_api, body):
    """1e300 TB was saved, and /daily/ and /today/ answered 500 from then on (issue 34, 11)."""
    response = operator_api.put("/api/v1/metrics/targets/", body, format="json")
    assert response.status_code == 400, response.content
    assert operator_api.get("/api/v1/metrics/targets/").json() == {"ingest": 1.0,
                                                                  "distribution": 2.0}
    for path in ("daily/", "today/"):
        assert operator_api.get(f"/api/v1/metrics/{path}").status_code == 200


def test_the_largest_target_allowed_has_its_bytes(operator_api):
    assert operator_api.put("/api/v1/metrics/targets/", {"ingest": 100_000},
                            format="json").status_code == 200
    today = operator_api.get("/api/v1/metrics/today/").json()
    assert today["directions"]["ingest"]["target_bytes"] == 10**17   # 100,000 TB


def test_bulk_records_keep_the_rollups_equal_to_one_by_one():
    c = CollectionFactory(short_name="MOD021KM", version="061")
    spans = [(at(1, 23, 50), at(2, 0, 10), 7 * GB), (at(2, 5), at(2, 5, 1), 3), (at(2, 6),
                                                                                   at(2, 7), 0)]
    services.record_transfers([TransferRecord(direction="ingest", bytes=b, started_at=s,
                                              ended_at=e, collection=c) for s, e, b in spans])
    bulk = sorted(TransferRollup.objects.values_list("period", "start", "direction",
                                                     "collection", "bytes", "transfers"))
    TransferRollup.objects.all().delete()
    for s, e, b in spans:
        services.record_transfer("ingest", b, s, e, c)
    single = sorted(TransferRollup.objects.values_list("period", "start", "direction",
                                                       "collection", "bytes", "transfers"))
    assert bulk == single
    assert TransferRecord.objects.count() == 6
