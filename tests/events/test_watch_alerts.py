"""Operators' alerts read off the dashboards' figures: a daily target projected to be missed
(told once per UTC day and direction, not once per poll) and a queue stuck (told once per
episode: again only after it moved and stuck anew). Only operators see them. The expected
projections are worked out here from the bytes the test recorded."""
from datetime import UTC, datetime, timedelta

import pytest

from backend.archive import alerts
from backend.archive.models import ArchiveRequest
from backend.events.models import Event
from backend.metrics import services as metrics
from tests.archive_fixtures import small_layout
from tests.factories import FileFactory

pytestmark = pytest.mark.django_db

GB, TB = 10**9, 10**12


def at(day, h, m=0):
    return datetime(2026, 3, day, h, m, tzinfo=UTC)


def told(kind):
    return list(Event.objects.filter(type=kind).order_by("pk").values_list("subject", "data"))


def test_a_target_projected_to_be_missed_is_told_once_a_day(user_api, provider_api,
                                                            operator_api):
    metrics.set_target("ingest", 1)
    metrics.set_target("distribution", 0)   # no target: nothing to miss
    metrics.record_transfer("ingest", 2 * GB, at(5, 0, 10), at(5, 0, 20))
    assert alerts.watch_targets(at(5, 0, 30)) == []   # the day's first hour: not yet
    # at 12:00, 2 GB so far and nothing in the last five minutes: 2 GB projected of 1 TB
    assert alerts.watch_targets(at(5, 12)) == ["targets/ingest/2026-03-05"]
    [(subject, data)] = told("target.projected_miss")
    assert data["projected_bytes"] == 2 * GB and data["target_bytes"] == TB
    assert data["shortfall_bytes"] == TB - 2 * GB and data["direction"] == "ingest"
    for minute in range(1, 4):    # later polls the same day tell nothing new
        assert alerts.watch_targets(at(5, 12, minute)) == []
    assert alerts.watch_targets(at(6, 12)) == ["targets/ingest/2026-03-06"]
    # a day on course is told nothing: 0.9 TB so far, 5 GB/min projected past the target
    metrics.record_transfer("ingest", 900 * GB, at(7, 1), at(7, 11, 55))
    metrics.record_transfer("ingest", 25 * GB, at(7, 11, 55), at(7, 11, 59))
    assert alerts.watch_targets(at(7, 12)) == []
    assert len(told("target.projected_miss")) == 2
    assert [e["type"] for e in operator_api.get("/api/v1/events/").json()["results"]] == [
        "org.granary.target.projected_miss"] * 2
    assert user_api.get("/api/v1/events/").json()["results"] == []
    assert provider_api.get("/api/v1/events/").json()["results"] == []


def _queued(group, created_at, n=2):
    rows = []
    for _ in range(n):
        request = ArchiveRequest.objects.create(
            kind="migrate", priority=2, file=FileFactory(), copy_number=1,
            volume_group=group, bytes_total=100)
        rows.append(request)
    ArchiveRequest.objects.filter(pk__in=[r.pk for r in rows]).update(created_at=created_at)
    return rows


def test_a_stuck_queue_is_told_once_per_episode(settings, user_api, operator_api):
    settings.GRANARY_ALERT_QUEUE_STUCK_S = 3600
    group, _, _ = small_layout()
    now = datetime.now(UTC)
    first, second = _queued(group, now - timedelta(minutes=30))
    assert alerts.watch_queues(now) == []          # younger than the bound
    ArchiveRequest.objects.filter(pk__in=[first.pk, second.pk]).update(
        created_at=now - timedelta(hours=2))
    subject = f"queues/migrate/{group.name}"
    assert alerts.watch_queues(now) == [subject]
    assert alerts.watch_queues(now + timedelta(minutes=1)) == []   # the same episode
    assert alerts.watch_queues(now + timedelta(minutes=30)) == []
    [(_, data)] = told("queue.stuck")
    assert data["queued"] == 2 and data["kind"] == "migrate" and data["oldest_age_s"] >= 7200
    # one request is taken and done: progress ends the episode
    moved = now + timedelta(minutes=40)
    ArchiveRequest.objects.filter(pk=first.pk).update(state="done", started_at=moved,
                                                      finished_at=moved)
    assert alerts.watch_queues(moved + timedelta(minutes=1)) == []   # it moved within the bound
    # ... and an hour and more with nothing moving again is a new episode
    later = moved + timedelta(hours=1, minutes=5)
    assert alerts.watch_queues(later) == [subject]
    assert alerts.watch_queues(later + timedelta(minutes=1)) == []
    assert len(told("queue.stuck")) == 2
    assert user_api.get("/api/v1/events/").json()["results"] == []
    assert len(operator_api.get("/api/v1/events/?type=queue.stuck").json()["results"]) == 2


@pytest.mark.parametrize(("started", "finished", "moved"), [
    (None, None, False),            # still queued
    (-10, None, True),              # taken lately, still running
    (-90, None, False),             # taken before the cutoff, running since
    (None, -10, True),              # cancelled while queued, lately (finished, never started)
    (-90, -10, True),               # taken before, done lately
    (-120, -90, False),             # done before the cutoff
])
def test_a_queue_moved_when_one_of_its_own_requests_started_or_finished_since(
        started, finished, moved):
    """Progress is read by the request_moved index's expression: the later of start and
    finish, either of which may be unset; another group's or kind's requests are no progress."""
    group, _, _ = small_layout()
    now = datetime.now(UTC)
    [request] = _queued(group, now - timedelta(hours=3), n=1)
    ArchiveRequest.objects.filter(pk=request.pk).update(
        started_at=started and now + timedelta(minutes=started),
        finished_at=finished and now + timedelta(minutes=finished))
    row = {"kind": "migrate", "volume_group": group.name}
    cutoff = now - timedelta(minutes=60)
    assert alerts._progress(alerts._queue(row), cutoff) is moved
    for other in ({"kind": "recall", "volume_group": group.name},
                  {"kind": "migrate", "volume_group": None}):
        assert alerts._progress(alerts._queue(other), cutoff) is False
