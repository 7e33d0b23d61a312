"""A memory cgroup that caps how much of a file its readers may keep in the page cache.

"Cold" for a cache server is its steady state: far more bytes on disk than memory, so a read
comes from the disk into pages reclaimed from earlier reads. Dropping a file from the page
cache instead frees its pages; a VM whose balloon reports free memory to its host may be
handing exactly those pages back when the next read lands in them, and that read then runs at
half speed or less, at random. Readers inside a cap recycle their own pages instead.

Works with cgroup v1 and v2 where this process may create a child of its own memory cgroup
(root in a container usually may); `create` returns None where it may not.
"""
import time
from pathlib import Path

from backend.host import memory_cgroup

# filesystem type: (usage file, limit file, "no limit")
_FILES = {"cgroup": ("memory.usage_in_bytes", "memory.limit_in_bytes", "-1"),
          "cgroup2": ("memory.current", "memory.max", "max")}


class MemoryCap:
    def __init__(self, directory, fstype):
        self.directory = Path(directory)
        usage, limit, self.unlimited = _FILES[fstype]
        self.usage_file, self.limit_file = self.directory / usage, self.directory / limit

    @classmethod
    def create(cls, name):
        """A new, unlimited cap `name` under this process's memory cgroup, or None."""
        try:
            found = memory_cgroup()
            if found is None:
                return None
            parent, fstype = found
            if fstype == "cgroup2":
                (parent / "cgroup.subtree_control").write_text("+memory")
            (parent / name).mkdir()
            return cls(parent / name, fstype)
        except OSError:
            return None

    def argv(self, command):
        """`command` run inside the cap (its children stay inside too)."""
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.directory / "cgroup.procs"),
                *command]

    def usage(self):
        return int(self.usage_file.read_text())

    def limit(self, nbytes=None):
        """Cap the processes inside at `nbytes` in all (None: no cap)."""
        self.limit_file.write_text(self.unlimited if nbytes is None else str(nbytes))

    def remove(self):
        """Remove the cgroup once its processes are gone (their pages go to the parent)."""
        deadline = time.monotonic() + 10
        while True:
            try:
                self.directory.rmdir()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
