"""A burst of nudges is one tick: every mover that ends with new work queued nudges the storage
manager, and each tick starts every free drive, so without this nudges bred ticks faster than
the archive worker ran them (a chaos run on SCSI tape queued 727 and left its drives idle
behind them). A tick within TICK_EVERY_S of another does nothing; beat's comes anyway."""
import pytest
from celery import current_app
from django.core.cache import caches

from backend.archive.services import manager

pytestmark = pytest.mark.django_db


@pytest.fixture
def eager():
    def set_to(value):
        current_app.conf.task_always_eager = value
    before = current_app.conf.task_always_eager
    yield set_to
    current_app.conf.task_always_eager = before


def test_a_nudged_tick_right_after_another_is_skipped(eager, monkeypatch):
    eager(False)
    trailing = []
    tick_task = manager.task_named("backend.archive.tick")
    monkeypatch.setattr(tick_task, "apply_async", lambda **options: trailing.append(options))
    shared = caches["shared"]
    shared.delete_many(["archive-tick", "archive-tick-trailing"])
    assert manager.tick_due() is True
    assert [manager.tick_due() for _ in range(5)] == [False] * 5
    # the skipped nudges leave exactly one tick behind them, a window later, so work queued
    # after the running tick read the queue does not wait for beat
    assert trailing == [{"countdown": manager.TICK_EVERY_S}]
    shared.delete_many(["archive-tick", "archive-tick-trailing"])  # the window has passed
    assert manager.tick_due() is True


def test_eager_runs_every_tick(eager):
    eager(True)
    assert [manager.tick_due() for _ in range(3)] == [True] * 3
