"""A recall's bytes landing in its cache file: written (pwrite at their place in the file) by a
thread of their own for a large file, so the drive's read, the segment's checksum (the caller's
thread) and the writing with its block map (this thread) overlap; hashlib, the READ and the
write all release the GIL. The writeback of what is written is started every WRITEBACK bytes
(sync_file_range), so the disk writes while the tape reads and the fsync at the end has only
the last part left: a recall profiled under load spent 56% of its segment reads in write()
(dirty-page throttling) and as much again in the final fsync.
"""
import ctypes
import os

from ..media.stages import Stage

# a file this large or larger is written by a thread of its own; smaller ones inline
THREAD_FROM = 4 << 20
DEPTH = 16                  # pieces (records) queued for the writer
WRITEBACK = 16 << 20
_SYNC_FILE_RANGE_WRITE = 2


def _sync_file_range():
    try:
        call = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):   # not Linux: the fsync at the end does it all
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    return call


_start_writeback = _sync_file_range()


class Landing:
    """Writes pieces at their offsets in `fd`; `after(offset, piece)` is called for each once
    written, in order (the recall's block map and checksum). close() waits for every write and
    raises the writer's error; abandon() stops it."""

    def __init__(self, fd, size, after=None):
        self.fd, self.after = fd, after
        self._synced = self._written = 0
        self.stage = None
        if size >= THREAD_FROM:
            self.stage = Stage(lambda item: self._write(*item), "recall-landing", DEPTH)

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

    def _write(self, offset, piece):
        view = memoryview(piece)
        done = 0
        while done < len(view):
            done += os.pwrite(self.fd, view[done:], offset + done)
        if self.after is not None:
            self.after(offset, view)
        self._written = max(self._written, offset + len(view))
        if _start_writeback and self._written - self._synced >= WRITEBACK:
            _start_writeback(self.fd, self._synced, self._written - self._synced,
                             _SYNC_FILE_RANGE_WRITE)
            self._synced = self._written

    def close(self):
        if self.stage is not None:
            self.stage.close()

    def abandon(self):
        if self.stage is not None:
            self.stage.abandon()
