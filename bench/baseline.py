"""Baselines for benchmarks: what the bare disk does with the same bytes."""
import os
import subprocess
import time


def dd_copy(sources, target_dir):
    """Copy each file with dd (1 MiB blocks, fsync at the end of each); returns seconds."""
    os.makedirs(target_dir, exist_ok=True)
    started = time.perf_counter()
    for i, source in enumerate(sources):
        subprocess.run(["dd", f"if={source}", f"of={os.path.join(target_dir, str(i))}", "bs=1M",
                        "conv=fsync", "status=none"], check=True)
    elapsed = time.perf_counter() - started
    for i in range(len(sources)):
        os.unlink(os.path.join(target_dir, str(i)))
    return elapsed


def drop_from_page_cache(path):
    """Make the next read of `path` come from the disk (written pages are flushed first)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def write_random_file(path, size, hasher=None, chunk=8 << 20):
    """Write `size` random bytes to `path` (fsynced); feed them to `hasher` if given."""
    remaining = size
    with open(path, "wb") as out:
        while remaining:
            block = os.urandom(min(chunk, remaining))
            if hasher:
                hasher.update(block)
            out.write(block)
            remaining -= len(block)
        out.flush()
        os.fsync(out.fileno())


def process_bytes_written():
    """Bytes this process has caused to be written to storage (Linux /proc/self/io)."""
    try:
        with open("/proc/self/io") as io:
            for line in io:
                if line.startswith("write_bytes:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None
