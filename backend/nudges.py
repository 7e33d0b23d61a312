"""Broker messages are nudges: the database holds the work, a message only wakes a worker.

A message that cannot be sent (the broker is down or unreachable) is logged and dropped, never
raised: the request that stored the work has committed it and answers as usual, and the
sweepers (beat) start the work soon after the broker is back. Publishing gives up quickly (the
broker timeouts in settings), so a request never waits long on a broker that is away.
"""
import logging

from django.db import transaction

log = logging.getLogger(__name__)


def task_named(name):
    """The registered Celery task `name`: services dispatch tasks by name, so they never import
    the tasks modules that import them (pulpcore's dispatch() does the same)."""
    from celery import current_app

    if name not in current_app.tasks:
        current_app.loader.import_default_modules()
    return current_app.tasks[name]


def eager():
    """Whether tasks run where they are sent (tests, the command line): a nudge may then run a
    storage manager's tick, and a mover, in the sender's own thread."""
    from celery import current_app

    return bool(current_app.conf.task_always_eager)


def send(task, *args, queue=None):
    """Publish task(*args) now (to `queue` when given, else where the task is routed); False,
    logged, when the broker cannot take the message. `task`: a task, or its name."""
    if isinstance(task, str):
        task = task_named(task)
    options = {"queue": queue} if queue else {}
    if task.app.conf.task_always_eager:  # run here (tests, CLI): no broker to miss
        task.apply_async(args=args, **options)
        return True
    try:
        task.apply_async(args=args, **options)
    except Exception:  # noqa: BLE001 - whatever the broker's failure, the work is stored
        log.warning("could not send %s%r (broker unavailable); the sweeper starts the work",
                    task.name, args, exc_info=True)
        return False
    return True


def send_on_commit(task, *args):
    """Publish task(*args) once the transaction that stored its work commits."""
    transaction.on_commit(lambda: send(task, *args))


# The database cache keeps a key to the second (its expiry and its clock are truncated): a key
# set for `every` seconds lives up to a second longer.
CACHE_GRAIN_S = 1


def debounced(task, every, key):
    """Whether a nudged run of `task` (a name) goes on: False when another went on less than
    `every` seconds ago in any process (the shared cache's `key` says so), so a burst of nudges
    is one run. A skipped run leaves one trailing run behind it, `every` seconds and the cache's
    grain later (so the key has gone): work stored just after the last run read it waits that
    long, not for beat. Eager (tests, the
    command line) and without a cache to ask, every run goes on."""
    from django.core.cache import caches

    if eager():
        return True
    try:
        if caches["shared"].add(key, 1, timeout=every):
            # a nudge after this run has read may leave a trailing run again: the mark of the
            # last one can outlive it (the database cache keeps keys to the second), and a
            # nudge it turned away was lost (ingest-small left 2,000 copies queued, drives idle)
            caches["shared"].delete(f"{key}-trailing")
            return True
        trailing = caches["shared"].add(f"{key}-trailing", 1, timeout=every)
    except Exception:  # noqa: BLE001 - no cache to ask: run it, as before
        return True
    if trailing:
        try:
            # past the grain: a trailing run that found the key still alive was skipped too,
            # and left nothing behind it (2,000 copies queued, every drive idle)
            task_named(task).apply_async(countdown=every + CACHE_GRAIN_S)
        except Exception:  # noqa: BLE001 - the broker is away: beat's run comes anyway
            log.warning("could not send the trailing %s", task, exc_info=True)
    return False
