"""The one lease keeper every holder uses: it renews while work is held, and stops renewing when
the work is dropped or the keeper is stopped; a failed round is logged and the next one tries."""
import threading
import time

import pytest
from django.db import OperationalError

from backend.leases import Keeper

pytestmark = pytest.mark.django_db(transaction=True)

SECONDS = 0.3   # a renewal every 0.1 s


def wait_until(predicate, timeout=30):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "the keeper never got there"
        time.sleep(0.02)


class Renewals:
    """A renew() that records what it was asked to renew, from the keeper's thread."""

    def __init__(self, fail_first=0):
        self.calls, self.fail_first, self.lock = [], fail_first, threading.Lock()

    def __call__(self, ids):
        with self.lock:
            self.calls.append(set(ids))
            if len(self.calls) <= self.fail_first:
                raise OperationalError("lock timeout")

    def count(self):
        with self.lock:
            return len(self.calls)


def test_renews_what_is_held_and_stops_on_exit():
    renew = Renewals()
    with Keeper(SECONDS, renew, "test-lease", held=[7]) as keeper:
        wait_until(lambda: renew.count() >= 3)
    assert not keeper.is_alive()
    done = renew.count()
    assert all(ids == {7} for ids in renew.calls)
    assert keeper.rounds == done
    time.sleep(4 * SECONDS)   # several periods: nothing renews a lease after its work ended
    assert renew.count() == done


def test_renews_only_what_is_held_now():
    renew = Renewals()
    keeper = Keeper(SECONDS, renew, "test-lease")
    keeper.start()
    try:
        keeper.add([1, 2])
        wait_until(lambda: renew.count() >= 1)
        keeper.drop([1])
        seen = renew.count()
        wait_until(lambda: renew.count() >= seen + 2)
        assert renew.calls[-1] == {2}
        keeper.drop([2])
        dropped = renew.count()   # at most a round already under way finishes
        time.sleep(4 * SECONDS)
        assert renew.count() <= dropped + 1
        assert all(ids == {2} for ids in renew.calls[seen + 1:])
    finally:
        keeper.stop()


def test_a_failed_round_is_not_raised_and_the_next_one_renews():
    renew = Renewals(fail_first=2)
    with Keeper(SECONDS, renew, "test-lease", held=["token"]) as keeper:
        wait_until(lambda: keeper.rounds >= 1)
    assert renew.count() >= 3   # two failed rounds, then renewed
