"""Broker messages are nudges: the database holds the work, a message only wakes a worker.

A message that cannot be sent (the broker is down or unreachable) is logged and dropped, never
raised: the request that stored the work has committed it and answers as usual, and the
sweepers (beat) start the work soon after the broker is back. Publishing gives up quickly (the
broker timeouts in settings), so a request never waits long on a broker that is away.
"""
import logging
import math
import threading
import time

from django.db import transaction

log = logging.getLogger(__name__)


# One thread at a time imports the tasks modules: threads of a gunicorn worker sending their
# first nudges side by side found a task not registered yet while another thread's import was
# under way (NotRegistered: a nudge lost, and a download cut short where its delivery was
# marked).
_IMPORTING = threading.Lock()


def task_named(name):
    """The registered Celery task `name`: services dispatch tasks by name, so they never import
    the tasks modules that import them (pulpcore's dispatch() does the same)."""
    from celery import current_app

    if name not in current_app.tasks:
        with _IMPORTING:
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
# Windows whose marks are told apart: a mark must have expired when its slot comes round again
# (every >= 0.5 s leaves ten windows of room).
WINDOW_SLOTS = 16
# A trailing run is sent for just after its window opens, so a clock a little behind the
# sender's still counts it in that window (the window it carries decides anyway).
TRAILING_MARGIN_S = 0.05


def _clock():
    return time.time()


def debounced(task, every, key, window=None):
    """Whether a nudged run of `task` (a name) goes on: at most one run starts in each window of
    `every` seconds of the clock, in any process (the shared cache holds a mark per window,
    under `key`), so a burst of nudges is one run. A nudge in a window that has had its run
    leaves one trailing run behind it, sent for the next window's opening and carrying it as
    `window`: work stored just after a run read the queue waits at most `every` seconds, not
    for beat. (A mark that expired after `every` seconds waited for the database cache's
    grain as well: a trailing run came `every` + 1 s later, and a small delivery's archive
    stood idle that long; issue #33.) A trailing run whose window already has its run is
    skipped: that run started after the nudge and read its work. Eager (tests, the command
    line) and without a cache to ask, every run goes on."""
    from django.core.cache import caches

    if eager():
        return True
    now = _clock()
    current = int(now // every) if window is None else int(window)
    # a window's marks live past its end, then are taken again by a window WINDOW_SLOTS later
    # (add replaces an expired entry), so the cache holds a few rows for a key, not one a window
    mark, keep = f"{key}-{current % WINDOW_SLOTS}", math.ceil(every) + CACHE_GRAIN_S
    try:
        shared = caches["shared"]
        if shared.add(mark, current, timeout=keep):
            return True
        if window is not None:
            return False
        trailing = shared.add(f"{mark}-trailing", current, timeout=keep)
    except Exception:  # noqa: BLE001 - no cache to ask: run it, as before
        return True
    if trailing:
        try:
            task_named(task).apply_async(
                args=(current + 1,),
                countdown=max(0.0, (current + 1) * every - now) + TRAILING_MARGIN_S)
        except Exception:  # noqa: BLE001 - the broker is away: beat's run comes anyway
            log.warning("could not send the trailing %s", task, exc_info=True)
    return False
