"""What the host lets this process have, as the kernel will enforce it (memory, CPU priority),
and what a long-lived process does with its own memory once it has started.

A service under systemd's MemoryMax= or in a container with a memory limit gets its page cache
charged to its memory cgroup, so the memory it may fill is the cgroup's limit, not the
machine's RAM.
"""
import functools
import gc
import os
from pathlib import Path


@functools.cache
def memory_cgroup():
    """(directory of this process's memory cgroup, "cgroup" (v1) or "cgroup2") or None."""
    mounts = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, tail = line.partition(" - ")
        fstype, _, options = tail.split(" ", 2)
        mount_root, mount_point = fields.split(" ")[3:5]
        if fstype == "cgroup" and "memory" in options.split(","):
            mounts["v1"] = (mount_root, mount_point)
        elif fstype == "cgroup2":
            mounts["v2"] = (mount_root, mount_point)
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        hierarchy, controllers, path = line.split(":", 2)
        version = "v2" if hierarchy == "0" else "v1" if "memory" in controllers.split(",") else None
        if version in mounts:
            mount_root, mount_point = mounts[version]
            directory = Path(mount_point) / os.path.relpath(path, mount_root)
            if version == "v1" or "memory" in (directory / "cgroup.controllers").read_text():
                return directory.resolve(), "cgroup" if version == "v1" else "cgroup2"
    return None


def _cgroup_limit(directory, fstype):
    """The tightest limit on `directory` and its ancestors, or None."""
    if fstype == "cgroup":
        for line in (directory / "memory.stat").read_text().splitlines():
            key, value = line.split()
            if key == "hierarchical_memory_limit":
                return int(value)
        return None
    limits = []
    while (directory / "memory.max").exists():
        value = (directory / "memory.max").read_text().strip()
        if value != "max":
            limits.append(int(value))
        directory = directory.parent
    return min(limits, default=None)


def memory_limit():
    """Bytes of memory this process and its cgroup may use: RAM, or less under a cgroup limit."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        found = memory_cgroup()
        limit = found and _cgroup_limit(*found)
    except OSError:
        limit = None
    return min(total, limit) if limit else total


def lower_priority(nice):
    """Raise this process's nice value to at least `nice` (never lower it, which needs
    privilege): background work yields the CPU to the web's interactive requests. Returns the
    nice value in force."""
    current = os.nice(0)
    if nice > current:
        current = os.nice(nice - current)
    return current


def settle_started():
    """Move every object alive now (Django, its apps, Celery, the URLconf: about 156,000) out
    of the garbage collector's view for good, once a process has started and before it serves.
    They live as long as the process, yet each full collection walked them all again: a worker
    whose batches build tens of thousands of rows as objects ran several a batch. In `bench
    ingest-small` the four worker processes spent 1.3-1.8 s each in full collections, about a
    quarter of their CPU; with this, 0.04-0.32 s. Returns how many objects were set aside."""
    gc.freeze()
    return gc.get_freeze_count()
