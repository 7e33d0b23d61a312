"""Leases on work in flight, one way for every holder (a drive's mover, the object movers, an
ingest chunk): the lease is short and a keeper thread renews it every third of its length while
the work goes on, so a worker killed -9 frees its work within one lease, and a long piece of
work (a large granule checked, a long tape write) never outlives its lease.
"""
import logging
import threading
from datetime import timedelta

from django.db import DatabaseError, connection, transaction
from django.db.models import Q
from django.utils import timezone

log = logging.getLogger(__name__)


def until(seconds, now=None):
    """When a lease of `seconds` taken (or renewed) now runs out."""
    return (now or timezone.now()) + timedelta(seconds=seconds)


def free(now, field="lease_until"):
    """Rows (with a lease_until, or another `field` holding when a lease runs out) no live
    lease holds."""
    return Q(**{f"{field}__isnull": True}) | Q(**{f"{field}__lt": now})


def stale(field, seconds, now):
    """Rows a claim stamped at its start (`field`, a time) no longer holds: never claimed, or
    claimed more than `seconds` ago (its worker died)."""
    return free(now - timedelta(seconds=seconds), field)


def take(rows, seconds, now=None, field="lease_until", **also):
    """Lease those of `rows` no live lease holds for `seconds` (with `also` set beside it), in
    one conditional update, so of two takers one wins; how many were taken."""
    now = now or timezone.now()
    return rows.filter(free(now, field)).update(**{field: until(seconds, now)}, **also)


class Keeper(threading.Thread):
    """Calls renew(ids) every third of `seconds` while ids are held, in a transaction of its
    own that waits at most a second for a lock (PostgreSQL): a row the worker itself holds
    longer is no reason to hang, the next round tries again. A failed round is logged, never
    raised. Use it as a context manager, or start() and stop(); `held` are the ids held from
    the start, add() and drop() change them (a mover's batches)."""

    def __init__(self, seconds, renew, name, held=()):
        super().__init__(daemon=True, name=name)
        self.seconds, self.renew, self.stopped = seconds, renew, threading.Event()
        self.ids = frozenset(held)
        self.rounds = 0   # renewals done (a round that failed or had nothing held counts none)

    def add(self, ids):
        self.ids = self.ids | set(ids)

    def drop(self, ids):
        self.ids = self.ids - set(ids)

    def run(self):
        try:
            while not self.stopped.wait(max(self.seconds / 3, 0.1)):
                ids = self.ids
                if ids:
                    self._renew(ids)
        finally:
            connection.close()

    def _renew(self, ids):
        try:
            with transaction.atomic():
                if connection.vendor == "postgresql":
                    with connection.cursor() as cursor:
                        cursor.execute("SET LOCAL lock_timeout = '1s'")
                self.renew(ids)
            self.rounds += 1
        except DatabaseError:
            log.warning("%s: lease not renewed this time", self.name)
            connection.close_if_unusable_or_obsolete()   # a lost connection is not reused

    def stop(self):
        self.stopped.set()
        self.join()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()


def one_at_a_time(key):
    """Inside a transaction: wait until no other transaction holds `key`, then hold it to this
    one's end (PostgreSQL's advisory lock; SQLite has one writer at a time already). For work
    whose statements must each see what those before it committed, which read committed's
    row locks cannot give when the rows are not there yet."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, 0)", [key])
