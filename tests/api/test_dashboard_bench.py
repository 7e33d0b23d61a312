"""The dashboard benchmark's data and endpoints, and the plain-row lists it made faster: the
roll-ups it loads equal what record_transfers builds, the archive lists answer exactly what
their serializers say, and the benchmark times every endpoint the dashboards fetch."""
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backend.archive.models import ArchiveRequest, Drive, Volume
from backend.archive.serializers import ArchiveRequestSerializer, VolumeSerializer
from backend.metrics import services
from backend.metrics.models import TransferRecord, TransferRollup
from bench import dashboard, dashboard_data, dashboard_sql

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 3, 2, 1, 30, 15, tzinfo=UTC)
WEB_APP = Path(__file__).resolve().parents[2] / "frontend/src"


@pytest.fixture
def world():
    return dashboard_data.make_collections()


@pytest.fixture(params=["python", "sql"])
def loader(request):
    """The Python loader (SQLite's, and the reference) and the SQL one PostgreSQL uses."""
    if request.param == "sql":
        from django.db import connection

        if connection.vendor != "postgresql":
            pytest.skip("the SQL loader is PostgreSQL's")
        return dashboard_sql
    return dashboard_data


def _rollups():
    return sorted(TransferRollup.objects.values_list("period", "start", "direction",
                                                     "collection", "bytes", "transfers"))


def test_loaded_rollups_are_what_record_transfers_builds(world, loader):
    counts = loader.load_transfers(2, NOW, world["collections"])
    records = list(TransferRecord.objects.all())
    assert counts["records"] == len(records) == 4 * (24 * 60 + 90) - _outage_minutes(records)
    assert all(r.started_at.date() == r.ended_at.date() for r in records)
    assert max(r.ended_at for r in records) < NOW.replace(second=0)
    loaded = _rollups()
    assert counts["rollup_rows"] == len(loaded)
    TransferRollup.objects.all().delete()
    TransferRecord.objects.all().delete()
    for r in records:
        r.pk = None
    services.record_transfers(records)
    assert _rollups() == loaded
    today = services.today(now=NOW)["directions"]["ingest"]
    assert today["bytes"] == sum(r.bytes for r in records
                                 if r.direction == "ingest" and r.ended_at.day == NOW.day)


def _outage_minutes(records):
    """Minutes an outage left empty (an hour of one direction at a time)."""
    have = {(r.direction, r.started_at.replace(second=0, microsecond=0)) for r in records}
    start = NOW.replace(hour=0, minute=0, second=0) - timedelta(days=1)
    minutes = [start + timedelta(minutes=i) for i in range(24 * 60 + 90)]
    return sum((d, m) not in have for d in dashboard_data.DIRECTIONS for m in minutes)


@pytest.fixture
def archive(world, loader):
    counts = loader.load_archive(world, NOW, files=400, volumes_per_silo=30, days=365)
    assert counts["volumes"] == 60 and counts["drives"] == 16
    assert counts["archive_requests_by_state"]["failed"] >= 1
    assert counts["ingest_requests_with_failures"] >= 1
    return counts


def test_loaded_ingest_requests_count_the_granules_they_hold(archive):
    """The request counters agree with the granule rows (a running request's fresh granules
    are archiving, not archived): the counts a provider polls are read from them."""
    from django.db.models import Count, Q

    from ingest.models import IngestRequest

    rows = IngestRequest.objects.annotate(
        n=Count("granules"), archived=Count("granules", filter=Q(granules__state="archived")),
        failed=Count("granules", filter=Q(granules__state="failed"))).values_list(
        "state", "granule_count", "archived_count", "failed_count", "n", "archived", "failed")
    assert {state for state, *_ in rows} == {"running", "completed", "failed"}
    assert [r[1:4] for r in rows] == [r[4:] for r in rows]


def _json(data):
    return json.loads(json.dumps(data))


def test_volume_list_answers_what_the_serializer_says(operator_api, archive):
    assert Drive.objects.filter(mounted_volume__isnull=False).count() == 12
    pages, link = [], "/api/v1/archive/volumes/?limit=25"
    while link:
        body = operator_api.get(link).json()
        pages.append(body["results"])
        link = body["next"]
    assert [len(p) for p in pages] == [25, 25, 10]
    expected = VolumeSerializer(Volume.objects.select_related("silo", "group", "media", "drive")
                                .order_by("label"), many=True).data
    assert [v for p in pages for v in p] == _json(expected)
    assert {v["mounted_on"] for p in pages for v in p} > {None}
    filling = operator_api.get("/api/v1/archive/volumes/?state=filling&ordering=-live_bytes")
    assert [v["label"] for v in filling.json()["results"]] == list(
        Volume.objects.filter(state="filling").order_by("-live_bytes")
        .values_list("label", flat=True))


@pytest.mark.parametrize("query", ["?state=failed&limit=200", "?state=failed&kind=migrate",
                                   "", "?state=done&limit=7"])
def test_request_list_answers_what_the_serializer_says(operator_api, archive, query):
    body = operator_api.get(f"/api/v1/archive/requests/{query}").json()
    ids = [r["id"] for r in body["results"]]
    assert ids
    rows = ArchiveRequest.objects.select_related("file", "volume_group", "volume", "drive")
    expected = {r["id"]: r for r in _json(ArchiveRequestSerializer(rows.filter(pk__in=ids),
                                                                   many=True).data)}
    assert body["results"] == [expected[i] for i in ids]


def test_ingest_request_list_answers_what_the_serializer_says(api, operator_api, archive, world):
    from backend.accounts import roles
    from ingest.models import IngestRequest
    from ingest.serializers import IngestRequestSerializer
    from tests.factories import UserFactory

    modaps = world["providers"]["modis"]
    IngestRequest.objects.create(provider=modaps, way="bulk", state="completed")   # no bytes
    IngestRequest.objects.create(provider=modaps, way="cli", state="received")     # no PDR
    pages, link = [], "/api/v1/ingest/requests/?limit=10"
    while link:
        body = operator_api.get(link).json()
        pages.append(body["results"])
        link = body["next"]
    rows = [r for p in pages for r in p]
    assert len(pages) > 1 and len(rows) == IngestRequest.objects.count()
    request = operator_api.get("/api/v1/ingest/requests/").wsgi_request
    expected = IngestRequestSerializer(IngestRequest.objects.select_related("provider", "pdr")
                                       .order_by("-id"), many=True,
                                       context={"request": request}).data
    assert rows == _json(expected)
    assert {r["percent_done"] for r in rows[:2]} == {100.0, 0.0}
    assert rows[0]["pdr"] is None and rows[-1]["pdr"].endswith(f"/ingest/pdrs/{rows[-1]['id']}/")

    provider = UserFactory(role=roles.PROVIDER)
    modaps.members.add(provider)
    api.force_authenticate(provider)
    own = api.get("/api/v1/ingest/requests/?limit=1000").json()["results"]
    assert {r["provider"] for r in own} == {modaps.name}
    assert len(own) == IngestRequest.objects.filter(provider=modaps).count()


def _dashboard_api_files():
    """The lib/api modules the dashboards feature imports."""
    files = set()
    for page in (WEB_APP / "features/dashboards").rglob("*.tsx"):
        for spec in re.findall(r"from '(\.[^']*/lib/api/[^']*)'", page.read_text()):
            files.add((page.parent / f"{spec}.ts").resolve())
    return files


def _dashboard_paths():
    """The paths the dashboards GET, with ${...} as {}: literals in the API modules they import,
    except calls that send another method."""
    paths = set()
    for source in _dashboard_api_files():
        text = source.read_text()
        for call in re.findall(r"apiFetch<.*?\);", text, re.S):
            if "method:" not in call:
                paths.update(re.findall(r"[`']((?:/api/v1/)[^`'?]*)[`']", call))
        paths.update(re.findall(r"=\s*'(/api/v1/[^']*)'", text))
    return {re.sub(r"\$\{[^}]*\}", "{}", p) for p in paths}


def test_the_benchmark_times_every_endpoint_the_dashboards_fetch():
    timed = {re.sub(r"\{[^}]*\}", "{}", path.split("?")[0]) for _, path in dashboard.ENDPOINTS}
    wanted = _dashboard_paths()
    assert "/api/v1/archive/volumes/" in wanted and "/api/v1/metrics/today/" in wanted
    assert wanted <= timed, f"not timed: {sorted(wanted - timed)}"


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert dashboard.percentile(values, 95) == 95
    assert dashboard.percentile(values, 50) == 50
    assert dashboard.percentile([7.0], 95) == 7.0
