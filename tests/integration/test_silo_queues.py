"""Storage managers bound to silos (GRANARY_ARCHIVE_QUEUE_PER_SILO): the storage manager's tick
sends each drive's work to its silo's queue, read back here from the configured broker
(RabbitMQ in CI, the file-system broker by default); off, it goes to the archive queue."""
import uuid

import pytest

from backend.archive import operations, services
from backend.archive.models import Drive
from backend.archive.services import manager
from backend.celery import app
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
    """[drive id of each run_drive message] in queue `name` (taken off it), then the queue is
    deleted (a unique queue per test leaves nothing behind on a shared broker)."""
    queue = app.amqp.queues[name]
    found = []
    with app.connection_for_write() as conn:
        bound = queue.bind(conn.default_channel)
        bound.declare()
        while (message := bound.get(no_ack=True)) is not None:
            assert message.headers["task"] == "backend.archive.run_drive"
            found.append(message.decode()[0][0])
        bound.delete()
    return sorted(found)


def test_each_drive_is_nudged_on_its_own_silos_queue(two_silos, settings):
    settings.GRANARY_ARCHIVE_QUEUE_PER_SILO = True
    assert manager.tick() == 4
    for silo in two_silos:
        want = sorted(Drive.objects.filter(silo__name=silo).values_list("pk", flat=True))
        assert len(want) == 2
        assert _drain(f"archive.{silo}") == want


def test_without_the_setting_drive_work_goes_to_the_archive_queue(two_silos, settings,
                                                                   monkeypatch):
    """The default (one archive worker drives every drive): no silo queue gets a message, and
    run_drive keeps its route to the archive queue."""
    settings.GRANARY_ARCHIVE_QUEUE_PER_SILO = False
    sent = []
    monkeypatch.setattr(manager, "send", lambda task, *args, queue=None: sent.append(
        (task.name, args, queue)))
    assert manager.tick() == 4
    assert sorted(sent) == sorted(("backend.archive.run_drive", (pk,), None)
                                  for pk in Drive.objects.values_list("pk", flat=True))
    route = app.amqp.router.route({}, "backend.archive.run_drive")
    assert route["queue"].name == "archive"
    for silo in two_silos:
        assert _drain(f"archive.{silo}") == []
