"""A recall's bytes landing in its cache file: written (pwrite at their place in the file) by a
thread of their own for a large file, so the drive's read, the segment's checksum (the caller's
thread) and the writing with its block map (this thread) overlap; hashlib, the READ and the
write all release the GIL.

A large file written in order from its start goes to the disk by direct I/O (O_DIRECT), in
aligned chunks gathered in a buffer of our own, its last partial block through the page cache:
the page cache's copy and reclaim were most of the landing's CPU (a plain read of 2 GiB from
tgt with each record written through the page cache and synced: 205-340 MB/s and 2.9-5.4 s of
CPU; with O_DIRECT, one write at a time, 418 MB/s and 1.3 s), CPU the two cores share with
tgtd serving the read; and a recalled file, read once by its download, no longer pushes other
files out of the page cache. Where the filesystem refuses O_DIRECT (tmpfs), or the pieces come
out of order (a resumed recall, a file of several segments), the page cache takes them: the
writeback of what is written is then started every WRITEBACK bytes (sync_file_range), so the
disk writes while the tape reads and the fsync at the end has only the last part left.
"""
import ctypes
import errno
import mmap
import os

from ..media.stages import Stage

# a file this large or larger is written by a thread of its own; smaller ones inline
THREAD_FROM = 4 << 20
DEPTH = 16                  # pieces (records) queued for the writer
WRITEBACK = 16 << 20
# direct I/O: bytes gathered before one write, and the alignment of its offsets and lengths
# (the largest logical block size a disk has; 512 is enough for most)
DIRECT_CHUNK, ALIGN = 4 << 20, 4096
_SYNC_FILE_RANGE_WRITE = 2
_FINISH = object()          # the landing thread's last item: write what the direct buffer holds


def _sync_file_range():
    try:
        call = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):   # not Linux: the fsync at the end does it all
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    return call


_start_writeback = _sync_file_range()


def _pwrite_all(fd, view, offset):
    done = 0
    while done < len(view):
        done += os.pwrite(fd, view[done:], offset + done)


class _Direct:
    """The file's bytes from its start, gathered in an aligned buffer and written by O_DIRECT
    in DIRECT_CHUNK writes; `end` is where the next piece must start."""

    def __init__(self, fd):
        self.fd, self.buffer = fd, mmap.mmap(-1, DIRECT_CHUNK)   # page-aligned
        self.base = self.filled = 0

    @classmethod
    def open(cls, path):
        """On `path`, or None where the filesystem has no direct I/O."""
        flag = getattr(os, "O_DIRECT", 0)
        if not flag:
            return None
        try:
            return cls(os.open(path, os.O_WRONLY | flag))
        except OSError as exc:
            if exc.errno == errno.EINVAL:
                return None
            raise

    @property
    def end(self):
        return self.base + self.filled

    def take(self, view):
        """Gather `view`; each full buffer is written."""
        while len(view):
            n = min(len(view), DIRECT_CHUNK - self.filled)
            self.buffer[self.filled:self.filled + n] = view[:n]
            self.filled += n
            view = view[n:]
            if self.filled == DIRECT_CHUNK:
                with memoryview(self.buffer) as whole:
                    _pwrite_all(self.fd, whole, self.base)
                self.base += DIRECT_CHUNK
                self.filled = 0

    def finish(self, fd):
        """Write what is gathered: its aligned part directly, the rest through `fd` (the page
        cache); then close."""
        aligned = self.filled - self.filled % ALIGN
        view = memoryview(self.buffer)
        try:
            if aligned:
                try:
                    _pwrite_all(self.fd, view[:aligned], self.base)
                except OSError as exc:
                    if exc.errno != errno.EINVAL:
                        raise
                    aligned = 0         # refused: all of it through the page cache
            if self.filled > aligned:
                _pwrite_all(fd, view[aligned:self.filled], self.base + aligned)
        finally:
            view.release()
            self.close()

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
            try:
                self.buffer.close()
            except BufferError:     # a view held by a traceback: unmapped once it is gone
                pass


class Landing:
    """Writes pieces at their offsets in `fd`; `after(offset, piece)` is called for each once
    written (or gathered for its direct write), in order (the recall's block map and checksum).
    `path`, the file of `fd`, lets a large file go by direct I/O. close() waits for every write
    and raises the writer's error; abandon() stops it."""

    def __init__(self, fd, size, after=None, path=None):
        self.fd, self.after = fd, after
        self._synced = self._written = 0
        self.stage = self.direct = None
        if size >= THREAD_FROM:
            self.direct = _Direct.open(path) if path is not None else None
            self.stage = Stage(self._work, "recall-landing", DEPTH)

    def sink(self, offset):
        """What takes a segment's bytes, the first at `offset` in the file."""
        at = [offset]

        def take(piece):
            if self.stage is None:
                self._write(at[0], piece)
            else:
                self.stage.put((at[0], piece))
            at[0] += len(piece)
        return take

    def _work(self, item):
        if item is _FINISH:
            direct, self.direct = self.direct, None
            if direct is not None:      # else it left direct I/O after close() looked
                direct.finish(self.fd)
        else:
            self._write(*item)

    def _write(self, offset, piece):
        view = memoryview(piece)
        if self.direct is not None:
            if offset == self.direct.end:
                try:
                    self.direct.take(view)
                except OSError as exc:
                    if exc.errno != errno.EINVAL:
                        raise
                    self._leave_direct()   # refused at its first write: the page cache
                    _pwrite_all(self.fd, view, offset)
                if self.after is not None:
                    self.after(offset, view)
                return
            self._leave_direct()
        _pwrite_all(self.fd, view, offset)
        if self.after is not None:
            self.after(offset, view)
        self._written = max(self._written, offset + len(view))
        if _start_writeback and self._written - self._synced >= WRITEBACK:
            _start_writeback(self.fd, self._synced, self._written - self._synced,
                             _SYNC_FILE_RANGE_WRITE)
            self._synced = self._written

    def _leave_direct(self):
        """Out of order: what is gathered goes through the page cache, as the rest will."""
        direct, self.direct = self.direct, None
        try:
            with memoryview(direct.buffer) as gathered:
                _pwrite_all(self.fd, gathered[:direct.filled], direct.base)
        finally:
            direct.close()
        self._written = max(self._written, direct.end)

    def close(self):
        try:
            if self.stage is not None:
                try:
                    if self.direct is not None:     # the rest, by the landing thread too
                        self.stage.put(_FINISH)
                finally:
                    self.stage.close()
        finally:
            self._close_direct()

    def abandon(self):
        try:
            if self.stage is not None:
                self.stage.abandon()
        finally:
            self._close_direct()

    def _close_direct(self):
        if self.direct is not None:
            self.direct.close()
            self.direct = None
