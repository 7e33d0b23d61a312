"""Reading a hostile file in a forked child that may take so long and so much memory (ingest's
metadata reader, the transforms of subset orders): a file that makes a C library loop, crash or
allocate without end costs the child, not the worker, and the caller gets a ReadError saying
which. `run` forks a child per file; a `Worker` keeps one child for a stream of jobs.
Pure Python, no Django; Linux (fork, /proc)."""
import os
import pickle
import select
import signal
import threading
import time

MAX_ANSWER = 4 << 20


class ReadError(ValueError):
    """The reader refused the file, or the child it ran in did not answer; the text says why."""


def run(reader, path, time_limit, memory_limit, refusals=(ValueError,)):
    """reader(path) in a forked child; its exceptions of the `refusals` kinds come back as a
    ReadError with their text."""
    if not hasattr(os, "fork"):
        return reader(path)
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:    # the child: read, send the answer, leave without the parent's exit handlers
        os.close(readable)
        _child(reader, path, memory_limit, writable, refusals)
    os.close(writable)
    try:
        received = _receive(readable, time.monotonic() + time_limit)
    except ReadError:
        os.kill(pid, signal.SIGKILL)
        raise ReadError(f"was still being read after {time_limit:g} s (a damaged file can "
                        "make the HDF5 and NetCDF libraries loop)") from None
    finally:
        os.close(readable)
        _, status = os.waitpid(pid, 0)
    if not received:
        why = (f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
               else f"exit status {os.waitstatus_to_exitcode(status)}")
        raise ReadError(f"made its reader stop without an answer ({why})")
    kind, value = pickle.loads(received)   # noqa: S301 (our own child's answer)
    if kind == "error":
        raise ReadError(value)
    return value


def _child(reader, path, memory_limit, writable, refusals):
    status = 0
    try:
        _limit_memory(memory_limit)
        view = memoryview(pickle.dumps(_answer(reader, path, memory_limit, refusals)))
        while view:
            view = view[os.write(writable, view):]
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def _answer(reader, path, memory_limit, refusals):
    try:
        return "ok", reader(path)
    except MemoryError:
        return "error", f"needs more than {memory_limit >> 20} MiB to read"
    except refusals as exc:
        return "error", str(exc)
    except Exception as exc:
        return "error", f"cannot be read: {exc}"


def _limit_memory(extra, hard=True):
    """Let the child's address space grow by `extra` bytes at most (from now: a Worker's child
    sets it again before each job, so only the soft limit, which it may raise again)."""
    import resource

    try:
        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = size + extra
        if hard:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        else:
            ceiling = resource.getrlimit(resource.RLIMIT_AS)[1]
            if ceiling != resource.RLIM_INFINITY:
                limit = min(limit, ceiling)
            resource.setrlimit(resource.RLIMIT_AS, (limit, ceiling))
    except (OSError, ValueError):
        pass    # no /proc: the time limit still holds


def _receive(readable, deadline):
    received = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or len(received) > MAX_ANSWER:
            raise ReadError("no answer in time")
        ready, _, _ = select.select([readable], [], [], left)
        if ready:
            block = os.read(readable, 1 << 16)
            if not block:
                return bytes(received)
            received += block


class Worker:
    """A forked child kept between readers, so a stream of small jobs (the transforms of subset
    orders) does not pay a fork, its copy-on-write faults and a fresh library state per job. The
    limits stay per job: before each, the child's address space may grow by `memory_limit`
    bytes at most; a job past `time_limit` has its child killed. A child that refused a file,
    ran out of memory, died or served `max_jobs` is replaced by a new one for the next job (a
    library that failed may be left in a bad state). Not shared across fork: a process that
    inherited a Worker starts its own child."""

    def __init__(self, memory_limit, refusals=(ValueError,), max_jobs=200):
        self.memory_limit, self.refusals, self.max_jobs = memory_limit, refusals, max_jobs
        self._pid = self._owner = None
        self._jobs = 0
        self._lock = threading.Lock()

    def run(self, reader, path, time_limit):
        """reader(path) in the child, as `run` does it in a child of its own."""
        if not hasattr(os, "fork"):
            return reader(path)
        request = pickle.dumps((reader, path))
        with self._lock:
            if self._owner != os.getpid() and self._pid is not None:
                os.close(self._requests)    # our copies of the pipes of the parent's child
                os.close(self._answers)
                self._pid = None
            if self._pid is None:
                self._start()
            self._jobs += 1
            try:
                try:
                    _send(self._requests, request)
                except BrokenPipeError:     # the child died between jobs: a fresh one
                    self._stop(kill=True)
                    self._start()
                    _send(self._requests, request)
                kind, value, retire = self._answer(time_limit)
            except BaseException:
                self._stop(kill=True)
                raise
            if retire or self._jobs >= self.max_jobs:
                self._stop(kill=False)
        if kind == "error":
            raise ReadError(value)
        return value

    def close(self):
        with self._lock:
            if self._pid is not None and self._owner == os.getpid():
                self._stop(kill=False)

    def _start(self):
        requests, self._requests = os.pipe()
        self._answers, answers = os.pipe()
        pid = os.fork()
        if pid == 0:
            _serve(requests, answers, self.memory_limit, self.refusals)
        os.close(requests)
        os.close(answers)
        self._pid, self._owner, self._jobs = pid, os.getpid(), 0

    def _answer(self, time_limit):
        try:
            received = _frame(self._answers, time.monotonic() + time_limit)
        except ReadError:
            raise ReadError(f"was still being read after {time_limit:g} s (a damaged file can "
                            "make the HDF5 and NetCDF libraries loop)") from None
        if received is None:
            os.close(self._requests)    # the child is gone: say how it ended
            status = self._reap(os.waitpid(self._pid, 0)[1])
            why = (f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                   else f"exit status {os.waitstatus_to_exitcode(status)}")
            raise ReadError(f"made its reader stop without an answer ({why})")
        return pickle.loads(received)   # noqa: S301 (our own child's answer)

    def _reap(self, status):
        os.close(self._answers)
        self._pid = None
        return status

    def _stop(self, kill):
        """End the child: killed mid-job, or told to leave by closing its request pipe."""
        if self._pid is None:
            return
        if kill:
            os.kill(self._pid, signal.SIGKILL)
        os.close(self._requests)
        self._reap(os.waitpid(self._pid, 0)[1])


def _send(fd, payload):
    view = memoryview(len(payload).to_bytes(8, "big") + payload)
    while view:
        view = view[os.write(fd, view):]


def _frame(fd, deadline=None):
    """One length-prefixed message from `fd`; None at the end of the pipe."""
    head = _exactly(fd, 8, deadline)
    if head is None:
        return None
    body = _exactly(fd, int.from_bytes(head, "big"), deadline)
    if body is None:
        return None
    return body


def _exactly(fd, count, deadline):
    received = bytearray()
    while len(received) < count:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise ReadError("no answer in time")
        block = os.read(fd, min(count - len(received), 1 << 20))
        if not block:
            return None
        received += block
    return bytes(received)


def _serve(requests, answers, memory_limit, refusals):
    """The Worker's child: jobs in, answers out, until its request pipe closes or a job leaves
    it unfit. Inherited descriptors (the broker's and the database's sockets) are pointed at
    /dev/null: a long-lived child must not hold its parent's connections open."""
    status = 0
    try:
        _detach(keep={requests, answers})
        while True:
            received = _frame(requests)
            if received is None:
                break
            reader, path = pickle.loads(received)   # noqa: S301 (our own parent's request)
            _limit_memory(memory_limit, hard=False)
            kind, value = _answer(reader, path, memory_limit, refusals)
            _send(answers, pickle.dumps((kind, value, kind == "error")))
            if kind == "error":
                break
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def _detach(keep):
    null = os.open(os.devnull, os.O_RDWR)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep and fd != null:
            try:
                os.dup2(null, fd)
            except OSError:
                pass
    os.close(null)
