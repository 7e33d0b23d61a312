"""Storage managers bound to silos (GRANARY_ARCHIVE_QUEUE_PER_SILO): the storage manager's tick
sends each drive's work to its silo's queue, read back here from the configured broker
(RabbitMQ in CI, the file-system broker by default); off, it goes to the archive queue."""
import uuid

import pytest

from backend.archive import operations, services
from backend.archive.models import Drive
from backend.archive.services import manager
from backend.celery import app
from backend.metrics.models import QueueHeartbeat
from tests.archive_fixtures import SMALL_MEDIA, archived_collection, staged_granule

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_silos(data_root):
    """Two silos of two drives with a unique name each (their queues are this test's alone),
    and a granule whose two copies are queued for writing."""
    tag = uuid.uuid4().hex[:6]
    silos = (f"s{tag}-north", f"s{tag}-south")
    primary, backup = operations.install_layout(silos=silos, drives_per_silo=2,
                                                volumes_per_silo=2, model=SMALL_MEDIA)
    collection = archived_collection([primary, backup])
    granule, sources = staged_granule(collection, data_root / "staging")
    assert services.archive_granule(granule, sources).admitted
    return silos


def _drain(name):
    """{task name: sorted first arguments} of the messages in queue `name` (taken off it),
    then the queue is deleted (a unique queue per test leaves nothing on a shared broker)."""
    queue = app.amqp.queues[name]
    found = {}
    with app.connection_for_write() as conn:
        bound = queue.bind(conn.default_channel)
        bound.declare()
        while (message := bound.get(no_ack=True)) is not None:
            found.setdefault(message.headers["task"], []).append(message.decode()[0][0])
        bound.delete()
    return {task: sorted(args) for task, args in found.items()}


def test_each_drive_is_nudged_on_its_own_silos_queue(two_silos, settings):
    """And each silo's queue gets a heartbeat naming it, for its storage manager to answer."""
    settings.GRANARY_ARCHIVE_QUEUE_PER_SILO = True
    assert manager.tick() == 4
    for silo in two_silos:
        want = sorted(Drive.objects.filter(silo__name=silo).values_list("pk", flat=True))
        assert len(want) == 2
        assert _drain(f"archive.{silo}") == {"backend.archive.run_drive": want,
                                             "backend.metrics.heartbeat": [f"archive.{silo}"]}


def test_a_silo_whose_manager_stopped_answering_is_down_for_the_scheduler(two_silos, settings):
    """silos_down: a heartbeat older than GRANARY_SILO_STALE_S, or none, is a silo down (not
    the asking drive's own); the snapshot hands the scheduler its drives as offline."""
    from datetime import timedelta

    from django.utils import timezone

    from backend.metrics.services import record_heartbeat

    settings.GRANARY_ARCHIVE_QUEUE_PER_SILO = True
    settings.GRANARY_SILO_STALE_S = 30
    north, south = two_silos
    assert manager.silos_down() >= {north, south}  # never answered
    record_heartbeat(f"archive.{north}", "sm-north", timezone.now())
    record_heartbeat(f"archive.{south}", "sm-south", timezone.now())
    assert not manager.silos_down() & {north, south}
    QueueHeartbeat.objects.filter(queue=f"archive.{south}").update(
        seen_at=timezone.now() - timedelta(seconds=31))
    assert manager.silos_down() & {north, south} == {south}
    assert not manager.silos_down(exclude=south) & {north, south}
    asking = Drive.objects.filter(silo__name=north).first()
    states = {d.silo: d.state for d in manager.snapshot(asking.pk).drives}
    assert (states[north], states[south]) == ("idle", "offline")
    settings.GRANARY_ARCHIVE_QUEUE_PER_SILO = False
    assert manager.silos_down() == set()


def test_without_the_setting_drive_work_goes_to_the_archive_queue(two_silos, settings,
                                                                   monkeypatch):
    """The default (one archive worker drives every drive): no silo queue gets a message, and
    run_drive keeps its route to the archive queue."""
    settings.GRANARY_ARCHIVE_QUEUE_PER_SILO = False
    sent = []
    monkeypatch.setattr(manager, "send", lambda task, *args, queue=None: sent.append(
        (getattr(task, "name", task), args, queue)))
    assert manager.tick() == 4
    assert sorted(sent) == sorted(("backend.archive.run_drive", (pk,), None)
                                  for pk in Drive.objects.values_list("pk", flat=True))
    route = app.amqp.router.route({}, "backend.archive.run_drive")
    assert route["queue"].name == "archive"
    for silo in two_silos:
        assert _drain(f"archive.{silo}") == {}
