"""A burst of nudges is one tick: every mover that ends with new work queued nudges the storage
manager, and each tick starts every free drive, so without this nudges bred ticks faster than
the archive worker ran them (a chaos run on SCSI tape queued 727 and left its drives idle
behind them). A tick within TICK_EVERY_S of another does nothing; beat's comes anyway. The
debounce is backend.nudges.debounced, one helper for any task nudged in bursts."""
import pytest
from celery import current_app
from django.core.cache import caches

from backend import nudges
from backend.archive.services import manager

pytestmark = pytest.mark.django_db


@pytest.fixture
def eager():
    def set_to(value):
        current_app.conf.task_always_eager = value
    before = current_app.conf.task_always_eager
    yield set_to
    current_app.conf.task_always_eager = before


@pytest.fixture
def trailing(eager, monkeypatch):
    """Ticks sent for later (the trailing ones), recorded instead of sent; no mark left."""
    eager(False)
    sent = []
    tick_task = nudges.task_named("backend.archive.tick")
    monkeypatch.setattr(tick_task, "apply_async", lambda **options: sent.append(options))
    caches["shared"].delete_many(["archive-tick", "archive-tick-trailing"])
    return sent


def test_a_nudged_tick_right_after_another_is_skipped(trailing):
    shared = caches["shared"]
    assert manager.tick_due() is True
    assert [manager.tick_due() for _ in range(5)] == [False] * 5
    # the skipped nudges leave exactly one tick behind them, a window later, so work queued
    # after the running tick read the queue does not wait for beat
    assert trailing == [{"countdown": manager.TICK_EVERY_S + nudges.CACHE_GRAIN_S}]
    shared.delete_many(["archive-tick", "archive-tick-trailing"])  # the window has passed
    assert manager.tick_due() is True


def test_a_nudge_after_the_trailing_tick_started_leaves_another(trailing):
    """The trailing tick's mark can outlive it (the database cache keeps keys to the second):
    a nudge for work queued after the trailing tick read the queue still leaves a tick behind
    it, or that work waits for beat (a live bench left 2,000 copies queued, every drive idle)."""
    shared = caches["shared"]
    assert manager.tick_due() is True
    assert manager.tick_due() is False      # leaves the trailing tick
    shared.delete("archive-tick")           # the window passed; the trailing mark still lives
    assert manager.tick_due() is True       # the trailing tick runs and reads the queue
    assert manager.tick_due() is False      # work queued after it read: one more behind it
    assert trailing == [{"countdown": manager.TICK_EVERY_S + nudges.CACHE_GRAIN_S}] * 2
    shared.delete_many(["archive-tick", "archive-tick-trailing"])


def test_eager_runs_every_tick(eager):
    eager(True)
    assert [manager.tick_due() for _ in range(3)] == [True] * 3


def test_each_key_debounces_its_own_task_and_a_missing_cache_runs_every_time(eager, monkeypatch):
    eager(False)
    sent = []
    for name in ("backend.archive.tick", "backend.events.sweep"):
        task = nudges.task_named(name)
        monkeypatch.setattr(task, "apply_async",
                            lambda name=name, **options: sent.append((name, options)))
    shared = caches["shared"]
    keys = ["archive-tick", "archive-tick-trailing", "events-sweep", "events-sweep-trailing"]
    shared.delete_many(keys)
    assert manager.tick_due() is True
    # another task's key is its own: the tick just run does not hold the sweep back
    assert nudges.debounced("backend.events.sweep", 5.0, "events-sweep") is True
    assert nudges.debounced("backend.events.sweep", 5.0, "events-sweep") is False
    assert manager.tick_due() is False
    grain = nudges.CACHE_GRAIN_S
    assert sent == [("backend.events.sweep", {"countdown": 5.0 + grain}),
                    ("backend.archive.tick", {"countdown": manager.TICK_EVERY_S + grain})]
    shared.delete_many(keys)

    def no_cache(*args, **kwargs):
        raise ConnectionError("cache away")
    monkeypatch.setattr(type(shared), "add", no_cache)
    assert [manager.tick_due() for _ in range(3)] == [True] * 3
