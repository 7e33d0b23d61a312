"""Reading a hostile file in a forked child that may take so long and so much memory (ingest's
metadata reader, the transforms of subset orders): a file that makes a C library loop, crash or
allocate without end costs the child, not the worker, and the caller gets a ReadError saying
which. Pure Python, no Django; Linux (fork, /proc)."""
import os
import pickle
import select
import signal
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
        try:
            answer = ("ok", reader(path))
        except MemoryError:
            answer = ("error", f"needs more than {memory_limit >> 20} MiB to read")
        except refusals as exc:
            answer = ("error", str(exc))
        except Exception as exc:
            answer = ("error", f"cannot be read: {exc}")
        view = memoryview(pickle.dumps(answer))
        while view:
            view = view[os.write(writable, view):]
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def _limit_memory(extra):
    """Let the child's address space grow by `extra` bytes at most."""
    import resource

    try:
        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (size + extra, size + extra))
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
