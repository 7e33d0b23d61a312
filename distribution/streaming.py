"""Large downloads stream through the page cache instead of filling it.

A file several times larger than the memory the server may use cannot stay cached for the next
download anyway; left to the kernel, its pages push out everything else, and under memory
pressure the read-ahead of the download itself is evicted before it is sent, and read again.
Measured with a 1 GiB file in a memory cgroup of a quarter of its size (bench download,
"capped"): 3 % more disk reads and 0.83 of dd's rate as the kernel has it, 0.93 with the pages
behind the client dropped. So a download larger than a quarter of the server's memory gives
back the pages the client has acknowledged.

The file is sent by sendfile(2) inside gunicorn, where nothing of ours runs until it ends, so one
thread per server process follows every such download by its socket's acknowledged bytes
(TCP_INFO) and drops the pages behind them with posix_fadvise(DONTNEED). The kernel skips a
page a socket buffer still holds, so each sweep goes over the last _AGAIN bytes again, and a
finished range is gone over once more after _LAST_PASSES.

Two downloads of the same large file at once read it from disk twice (the one ahead drops what
the one behind would have found); set GRANARY_DROP_BEHIND_BYTES higher where that is common.
"""
import os
import socket
import ssl
import struct
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from backend import host

# struct tcp_info: tcpi_bytes_acked (Linux 4.1+) is the u64 at this offset.
_BYTES_ACKED = 120
_TCP_INFO_SIZE = 128
_STEP = 1 << 20
_AGAIN = 16 << 20
_LAST_PASSES = (0.5, 3.0)
_SWEEP_S = 0.005


def streams_through(nbytes, threshold=None, memory=host.memory_limit):
    """Whether a download of `nbytes` should leave the cache behind it: above `threshold` bytes
    if one is set, else above a quarter of the memory the server may use (`memory()`, asked
    only then)."""
    return nbytes > (memory() // 4 if threshold is None else threshold)


def bytes_acked(sock):
    """Bytes of this TCP connection its peer has acknowledged, or None where not TCP."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return None
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_SIZE)
    if len(info) < _BYTES_ACKED + 8:
        return None
    return struct.unpack_from("Q", info, _BYTES_ACKED)[0]


class _Stream:
    def __init__(self, fd, sock, start, end):
        self.fd, self.sock, self.start, self.end = fd, sock, start, end
        self.behind, self.acked_before = start, bytes_acked(sock)

    def sweep(self):
        """Drop whole steps below what the client acknowledged, going over the last _AGAIN
        bytes once more: the kernel skips a page a socket still holds (on loopback, until the
        receiver reads it), and the acknowledged bytes include the response's headers."""
        upto = min(self.start + bytes_acked(self.sock) - self.acked_before, self.end + 1)
        upto -= upto % _STEP
        low = max(self.start, self.behind - _AGAIN)
        if upto > low:
            os.posix_fadvise(self.fd, low, upto - low, os.POSIX_FADV_DONTNEED)
            self.behind = max(self.behind, upto)

    def finish(self):
        """All sent: drop the whole range, also pages a sweep found still held by a socket."""
        os.posix_fadvise(self.fd, self.start, self.end + 1 - self.start,
                         os.POSIX_FADV_DONTNEED)


class DropBehind:
    """Follows downloads by their sockets and drops the file's pages behind the client.

    `follow` before the file is sent and `forget` before its descriptor is closed: the sweeping
    thread only touches that descriptor between the two, under the lock. A finished download's
    range is dropped at once and, through a duplicate of the descriptor, again after
    _LAST_PASSES: the kernel frees the socket buffers that held the last pages a little later
    (received buffers are freed by the CPU that made them, when it next handles the network).
    """

    def __init__(self, interval=_SWEEP_S):
        self.interval = interval
        self._streams, self._finishing = {}, []
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._thread = None

    def follow(self, fd, sock, start, end):
        """A key for `forget`, or None when the socket's progress cannot be read."""
        try:
            stream = _Stream(fd, sock, start, end)
        except OSError:
            return None
        if stream.acked_before is None:
            return None
        key = object()
        with self._lock:
            self._streams[key] = stream
            self._start()
        return key

    def forget(self, key, finished):
        """Stop following; if `finished` (all sent), drop the whole range now and later."""
        with self._lock:
            stream = self._streams.pop(key, None)
            if stream is None or not finished:
                return
            try:
                stream.finish()
                stream.fd = os.dup(stream.fd)
            except OSError:
                return                  # only memory is at stake; the download is done
            now = time.monotonic()
            self._finishing.append((stream, [now + delay for delay in _LAST_PASSES]))
            self._start()

    def following(self):
        """Downloads followed, and finished ones still to be dropped again."""
        with self._lock:
            return len(self._streams), len(self._finishing)

    def _start(self):
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="drop-behind", daemon=True)
            self._thread.start()
        self._wake.notify()

    def _run(self):
        with self._lock:
            while True:
                if not self._streams and not self._finishing:
                    self._wake.wait()
                for stream in self._streams.values():
                    if stream.sock is not None:
                        try:
                            stream.sweep()
                        except OSError:
                            stream.sock = None      # closed: wait for forget
                now = time.monotonic()
                for entry in list(self._finishing):
                    stream, passes = entry
                    if passes[0] <= now:
                        passes.pop(0)
                        _quietly(stream.finish)
                    if not passes:
                        self._finishing.remove(entry)
                        _quietly(os.close, stream.fd)
                self._wake.wait(self.interval)


def _quietly(operation, *args):
    try:
        operation(*args)
    except OSError:
        pass


drop_behind = DropBehind()


# Checks of the next blocks run in a thread of the download's own while the request's thread
# sends the last one (hashing and sendfile(2) each release the GIL, so a download uses two
# cores), this many blocks ahead, one after another in file order. One block ahead (from a
# shared pool) the sender waited on each check: 0.88 of dd capped; four: 0.91.
AHEAD = 4


def can_send_directly(sock):
    """Whether a whole checked file can be sent to `sock` by sendfile(2) between our checks:
    gunicorn's plain TCP or Unix socket (not TLS, whose bytes sendfile would bypass)."""
    return isinstance(sock, socket.socket) and not isinstance(sock, ssl.SSLSocket)


def send_checked(sock, reader, before=None):
    """Send a CheckedReader's file to `sock` block by block, each only once its check has
    passed (the next is read and checked in a helper thread while it goes; the verdict is
    settled here, in the request's thread, which owns the database connection); yields each
    (offset, length) sent. A failed check raises before its block leaves: a short body.
    `before(offset, length)` runs once a block has passed, before it leaves; what it raises
    cuts the body there too."""
    checks = ThreadPoolExecutor(1, thread_name_prefix="check-ahead")
    pending = deque(checks.submit(reader.read_next, True) for _ in range(AHEAD))
    try:
        while True:
            offset, block, good = pending.popleft().result()
            reader.settle(offset, block, good)
            length = len(block)        # later reads reuse the block's buffer
            if not length:
                return
            pending.append(checks.submit(reader.read_next, True))
            if before is not None:
                before(offset, length)
            sock.sendfile(reader.handle, offset=offset, count=length)
            yield offset, length
    finally:
        for read in pending:
            read.cancel()
        checks.shutdown(wait=True)      # no read left running once it closes
