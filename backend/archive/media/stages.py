"""A stage of a transfer on a thread of its own, fed through a bounded queue: the drive takes
one record while the caller reads and hashes the next from its file, or a record is written
to its cache file while the drive sends the next. The READ and WRITE (ctypes), hashlib and
os file calls release the GIL on large buffers, so the stages overlap on separate cores; the
queue's depth bounds the memory in flight.

A failure in the stage is kept and raised in the caller's thread at its next put, at drain or
at close; the items put after it are dropped, not worked on.
"""
import queue
import threading

_STOP = object()


class Abandoned(Exception):
    """The caller gave up the transfer: what was still queued is dropped."""


class Stage:
    """Applies `work` to each item put, in order, on a thread named `name`; at most `depth`
    items wait. Use drain() to wait for them, close() to end it (abandon() to drop them)."""

    def __init__(self, work, name, depth):
        self.work, self.error = work, None
        self.queue = queue.Queue(depth)
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            item = self.queue.get()
            try:
                if item is _STOP:
                    return
                if self.error is None:
                    self.work(item)
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                self.error = exc
            finally:
                self.queue.task_done()

    def put(self, item):
        """Queue one item (waiting while the queue is full); the stage's failure, if any."""
        if self.error is not None:
            raise self.error
        self.queue.put(item)

    def drain(self):
        """Wait until every item put is worked on; the stage's failure, if any."""
        self.queue.join()
        if self.error is not None:
            raise self.error

    def close(self):
        """Work on what was put, end the thread; the stage's failure, if any."""
        if self.thread.is_alive():
            self.queue.put(_STOP)
            self.thread.join()
        if self.error is not None:
            raise self.error

    def abandon(self):
        """End the thread without working on what waits (a failure is not raised)."""
        if self.error is None:
            self.error = Abandoned("the transfer was abandoned")
        if self.thread.is_alive():
            self.queue.put(_STOP)
            self.thread.join()
