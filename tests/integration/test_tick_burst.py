"""A burst of nudges is one tick: every mover that ends with new work queued nudges the storage
manager, and each tick starts every free drive, so without this nudges bred ticks faster than
the archive worker ran them (a chaos run on SCSI tape queued 727 and left its drives idle
behind them). At most one tick starts in each window of TICK_EVERY_S; a nudge in a window that
has had its tick leaves one trailing tick, sent for the next window's opening, so work queued
after a tick read the queue waits at most a window (it waited a window and the database
cache's grain before, two seconds in which a small delivery's archive stood idle; #33). The
debounce is backend.nudges.debounced, one helper for any task nudged in bursts."""
from datetime import UTC, datetime

import pytest
from celery import current_app
from django.core.cache import caches
from django.core.cache.backends import db as db_cache
from django.core.cache.backends.base import BaseCache

from backend import nudges
from backend.archive.services import manager

pytestmark = pytest.mark.django_db
EVERY = manager.TICK_EVERY_S


@pytest.fixture
def eager():
    def set_to(value):
        current_app.conf.task_always_eager = value
    before = current_app.conf.task_always_eager
    yield set_to
    current_app.conf.task_always_eager = before


class Clock:
    """One clock for the debounce and the database cache's expiry, moved by the test."""

    def __init__(self, now):
        self.now = now

    def at(self, now):
        self.now = now
        return self


@pytest.fixture
def clock(monkeypatch):
    clock = Clock(1_000_000.25)
    monkeypatch.setattr(nudges, "_clock", lambda: clock.now)
    monkeypatch.setattr(db_cache, "tz_now", lambda: datetime.fromtimestamp(clock.now, UTC))
    monkeypatch.setattr(BaseCache, "get_backend_timeout",
                        lambda self, timeout=None: clock.now + timeout)
    caches["shared"].clear()
    return clock


@pytest.fixture
def trailing(eager, clock, monkeypatch):
    """Ticks sent for later (the trailing ones), recorded instead of sent."""
    eager(False)
    sent = []
    tick_task = nudges.task_named("backend.archive.tick")
    monkeypatch.setattr(tick_task, "apply_async", lambda **options: sent.append(options))
    return sent


def _sent_for(window, nudged_at):
    """What a trailing tick for `window` looks like when the nudge came at `nudged_at`: sent
    to run when the window opens (worked out from the window's bounds, not the code)."""
    return {"args": (window,),
            "countdown": pytest.approx(window * EVERY - nudged_at + nudges.TRAILING_MARGIN_S)}


def test_a_burst_in_one_window_is_one_tick_and_one_trailing_tick(trailing, clock):
    window = int(clock.now // EVERY)
    assert manager.tick_due() is True
    burst = [manager.tick_due() for _ in range(5)]
    assert burst == [False] * 5
    # the skipped nudges leave exactly one tick behind them, for the next window's opening
    assert trailing == [_sent_for(window + 1, clock.now)]
    assert trailing[0]["countdown"] <= EVERY + nudges.TRAILING_MARGIN_S


def test_the_trailing_tick_runs_in_its_window_and_a_later_nudge_leaves_another(trailing, clock):
    window = int(clock.now // EVERY)
    assert manager.tick_due() is True
    assert manager.tick_due() is False
    clock.at((window + 1) * EVERY + nudges.TRAILING_MARGIN_S)
    assert manager.tick_due(window + 1) is True      # the trailing tick reads the queue
    clock.at(clock.now + 0.3)
    assert manager.tick_due() is False               # work queued after it read: one more
    assert trailing == [_sent_for(window + 1, (window + 0.25) * EVERY),
                        _sent_for(window + 2, clock.now)]


def test_a_trailing_tick_whose_window_has_had_its_tick_is_skipped_and_leaves_nothing(
        trailing, clock):
    window = int(clock.now // EVERY)
    assert manager.tick_due() is True
    assert manager.tick_due() is False               # leaves the trailing tick
    clock.at((window + 1) * EVERY + 0.01)
    assert manager.tick_due() is True                # a nudge opens the next window first
    assert manager.tick_due(window + 1) is False     # it read after the nudge: nothing left
    assert len(trailing) == 1


def test_a_nudge_waits_at_most_one_window_wherever_it_falls(trailing, clock):
    window = 2_000_000
    for offset in (0.0, 0.01, 0.5, 0.99):
        caches["shared"].clear()
        trailing.clear()
        clock.at(window * EVERY)
        assert manager.tick_due() is True
        clock.at((window + offset) * EVERY)
        assert manager.tick_due() is False
        (sent,) = trailing
        assert 0 < sent["countdown"] <= EVERY + nudges.TRAILING_MARGIN_S


def test_a_windows_mark_is_taken_again_when_its_slot_comes_round(trailing, clock):
    """The cache keeps a few marks per key, not one per window: a window WINDOW_SLOTS later
    uses the same row once the old mark has expired."""
    window = int(clock.now // EVERY)
    assert manager.tick_due() is True
    clock.at((window + nudges.WINDOW_SLOTS) * EVERY + 0.25)
    assert manager.tick_due() is True
    assert manager.tick_due() is False
    marks = [k for k in range(nudges.WINDOW_SLOTS)
             if caches["shared"].get(f"archive-tick-{k}") is not None]
    assert marks == [window % nudges.WINDOW_SLOTS]


def test_eager_runs_every_tick(eager):
    eager(True)
    assert [manager.tick_due() for _ in range(3)] == [True] * 3


def test_each_key_debounces_its_own_task_and_a_missing_cache_runs_every_time(eager, clock,
                                                                             monkeypatch):
    eager(False)
    sent = []
    for name in ("backend.archive.tick", "backend.events.sweep"):
        task = nudges.task_named(name)
        monkeypatch.setattr(task, "apply_async",
                            lambda name=name, **options: sent.append((name, options)))
    assert manager.tick_due() is True
    # another task's key is its own: the tick just run does not hold the sweep back
    assert nudges.debounced("backend.events.sweep", 5.0, "events-sweep") is True
    assert nudges.debounced("backend.events.sweep", 5.0, "events-sweep") is False
    assert manager.tick_due() is False
    assert [name for name, _ in sent] == ["backend.events.sweep", "backend.archive.tick"]
    assert sent[0][1]["args"] == (int(clock.now // 5.0) + 1,)
    shared = caches["shared"]

    def no_cache(*args, **kwargs):
        raise ConnectionError("cache away")
    monkeypatch.setattr(type(shared), "add", no_cache)
    assert [manager.tick_due() for _ in range(3)] == [True] * 3
