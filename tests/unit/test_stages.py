"""A stage of a transfer on its own thread (backend.archive.media.stages): items worked on in
the order put, a failure raised in the caller's thread (at the next put, at drain, at close)
with nothing after it worked on, and abandon() dropping what waits; the thread always ends."""
import hashlib
import os
import threading
import time

import pytest

from backend.archive.media.stages import Stage


def test_items_are_worked_on_in_order_and_drain_waits_for_them():
    pieces = [os.urandom(1 << 16) for _ in range(50)]
    digest = hashlib.sha256()
    stage = Stage(digest.update, "test-stage", 3)
    for piece in pieces:
        stage.put(piece)
    stage.drain()
    assert digest.hexdigest() == hashlib.sha256(b"".join(pieces)).hexdigest()
    stage.close()
    assert not stage.thread.is_alive()


def test_a_failure_is_raised_to_the_caller_and_nothing_after_it_is_worked_on():
    done, release = [], threading.Event()

    def work(n):
        release.wait()
        if n == 2:
            raise OSError(5, "medium error")
        done.append(n)

    stage = Stage(work, "test-stage", 4)
    for n in range(4):
        stage.put(n)
    release.set()
    with pytest.raises(OSError, match="medium error"):
        stage.drain()
    with pytest.raises(OSError, match="medium error"):
        stage.put(9)
    with pytest.raises(OSError, match="medium error"):
        stage.close()
    assert done == [0, 1]
    assert not stage.thread.is_alive()


def test_abandon_drops_what_waits_and_ends_the_thread():
    done, started = [], threading.Event()

    def work(n):
        started.set()
        for _ in range(1000):         # the first item is worked on until abandon() is called
            if stage.error is not None:
                break
            time.sleep(0.01)
        done.append(n)

    stage = Stage(work, "test-stage", 5)
    for n in range(5):
        stage.put(n)
    started.wait()
    stage.abandon()
    assert not stage.thread.is_alive()
    assert done == [0]
    stage.abandon()                   # again: nothing more to do
