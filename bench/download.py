"""download: a file in the RAID cache fetched over HTTP by the signed link of a ready order,
through gunicorn as in production, against dd reading the same file in the same run.

The file is archived for real (two verified tape copies; it stays in the cache) and ordered
by a user; curl fetches the link into /dev/null, dd reads the file into /dev/null with 1 MiB
blocks. Each is timed by its own clock (dd's report; curl's time_total, from opening the
connection to the last byte, so the server's whole answer), not with the start of its process:
curl takes 6 ms to start here against dd's 1, which is the client's cost, not the server's. The
process times are in the JSON too. Three conditions (see measure):
- "capped", the steady state of a cache server with more data than memory: dd and the server
  run in a memory cgroup holding a quarter of the file, and each read starts with none of the
  file in memory and the cgroup full of other data (a file of the cap's size read just before),
  so it comes from the disk into pages reclaimed from that data. ratio_to_dd is this one where
  the cgroup can be made;
- "dropped": the file is dropped from the page cache before each read (posix_fadvise
  DONTNEED), so the read lands in freshly freed memory. On a VM whose balloon reports free
  pages to the host, such reads come in two speeds, whichever way reads: one that lands in
  pages being handed back runs at half the usual rate or less. This was the cold condition
  before the cap, and is the fallback without one;
- "warm": right after a dd read, so the bytes come from memory and any copy the server makes
  shows.
The median repeat of each counts; every repeat's time is in the JSON. An untimed download
afterwards is checked against the catalog MD5, and a range against the file's bytes.
"""
import hashlib
import os
import re
import statistics
import subprocess
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from django.conf import settings

from .baseline import drop_from_page_cache, write_random_file

NAME = "download"
HELP = "a cached file by its signed order link through gunicorn, against dd of the same file"
GOAL = 0.90


def add_arguments(parser):
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=11)


class Timing(NamedTuple):
    """A transfer's time by the tool's own clock (dd's report, curl's time_total: the copy, or
    the whole exchange with the server, without starting the process) and the process's."""
    own: float
    process: float


def timed(argv):
    """(seconds, stdout, stderr) of a process that must succeed."""
    started = time.perf_counter()
    done = subprocess.run(argv, check=True, capture_output=True, text=True,
                          env=dict(os.environ, LC_ALL="C"))
    return time.perf_counter() - started, done.stdout, done.stderr


def dd(path, cap=None):
    argv = ["dd", f"if={path}", "of=/dev/null", "bs=1M"]
    seconds, _, report = timed(cap.argv(argv) if cap else argv)
    copied = re.search(r"copied, ([0-9.]+) s", report)
    if copied is None:
        raise RuntimeError(f"dd did not report its time: {report!r}")
    return Timing(float(copied.group(1)), seconds)


def curl(url, size):
    seconds, out, _ = timed(["curl", "-sS", "-f", "-o", "/dev/null",
                             "-w", "%{size_download} %{time_total}", url])
    received, total = out.split()
    if int(received) != size:
        raise RuntimeError(f"curl received {received} bytes, not {size}")
    return Timing(float(total), seconds)


# Under this the kernel's own charges to the cgroup (slab, on cgroup v1 hosts) leave a reader
# nothing: dd is killed by the cgroup's OOM killer before it reads a byte.
CAP_FLOOR = 32 << 20


def cap_bytes(size):
    """What a capped reader may keep in the page cache: a quarter of the file, 32 to 256 MiB."""
    return max(CAP_FLOOR, min(256 << 20, size // 4))


def measure(path, url, size, repeats, cap=None):
    """{mode: {"dd"|"http": [Timing per repeat]}}, the order of the two alternating.

    Modes: "capped" (only with `cap`, which the server must run inside): dd and the server read
    in a memory cap of cap_bytes that other data fills, the steady state; "dropped": the file is
    dropped from the page cache before each read; "warm": right after a dd read.

    Each capped read starts the same way: with whatever the read before left behind, the next
    would find part of the file still cached (a server that frees what it has sent keeps the
    older pages; see distribution.streaming) or the cap half empty, and either way not be
    measured against the same disk reads as the others."""
    times = {}

    def series(mode, prepare, reader_cap=None):
        times[mode] = {"dd": [], "http": []}
        ways = {"dd": lambda: dd(path, reader_cap), "http": lambda: curl(url, size)}
        for repeat in range(repeats):
            for way in ("dd", "http") if repeat % 2 == 0 else ("http", "dd"):
                prepare()
                times[mode][way].append(ways[way]())

    if cap:
        filler = Path(path).with_name("capped-filler.dat")
        write_random_file(filler, cap_bytes(size))

        def fill():
            drop_from_page_cache(path)
            dd(filler, cap)

        drop_from_page_cache(path)
        cap.limit(cap.usage() + cap_bytes(size))
        try:
            series("capped", fill, cap)
        finally:
            cap.limit(None)
            filler.unlink()
    series("dropped", lambda: drop_from_page_cache(path))
    series("warm", lambda: dd(path))
    return times


def verify(url, path, size, md5):
    """An untimed download hashed as it arrives, and one Range request; raises on a mismatch."""
    digest, received = hashlib.md5(), 0
    with urllib.request.urlopen(url, timeout=600) as answer:
        if int(answer.headers["Content-Length"]) != size or \
                answer.headers.get("X-Checksum-Md5") != md5:
            raise RuntimeError(f"the headers do not announce {size} bytes with MD5 {md5}: "
                               f"{dict(answer.headers)}")
        while block := answer.read(1 << 20):
            digest.update(block)
            received += len(block)
    if received != size or digest.hexdigest() != md5:
        raise RuntimeError(f"downloaded {received} bytes with MD5 {digest.hexdigest()}, "
                           f"expected {size} with {md5}")
    start = size // 3
    request = urllib.request.Request(url, headers={"Range": f"bytes={start}-{start + 65535}"})
    with urllib.request.urlopen(request, timeout=60) as answer, open(path, "rb") as f:
        f.seek(start)
        if answer.status != 206 or answer.read() != f.read(65536):
            raise RuntimeError("the Range request did not return the file's bytes")
    return True


def ready_link(size_bytes):
    """Archive one random file of `size_bytes` and order it; (path in the cache, order, md5)."""
    from backend.accounts import roles
    from backend.accounts.services import create_user
    from backend.archive import services as archive
    from backend.catalog.geo import make_bbox
    from backend.catalog.services import register_granule
    from distribution import services as distribution

    from . import live

    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    settings.GRANARY_CACHE_BYTES = max(settings.GRANARY_CACHE_BYTES, 4 * size_bytes)
    (collection,) = live.layout(["BENCHD"])
    staging = settings.STAGING_ROOT / "bench"
    staging.mkdir(parents=True, exist_ok=True)
    source, digest = staging / "BENCHD-0.dat", hashlib.md5()
    write_random_file(source, size_bytes, digest)
    md5 = digest.hexdigest()
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    granule = register_granule(collection, "BENCHD-0", start=t0, end=t0 + timedelta(minutes=5),
                               bbox=make_bbox(-10, -10, 10, 10),
                               files=[{"name": source.name, "size": size_bytes,
                                       "checksum_type": "MD5", "checksum": md5}])
    file = granule.files.get()
    archive.archive_granule(granule, {file.pk: source})
    archive.run_until_idle(parallel=True)
    granule.refresh_from_db()
    if granule.state != granule.State.ARCHIVED:
        raise RuntimeError(f"the granule ended {granule.state}")
    user, _, _ = create_user("download-bench", roles.USER)
    order = distribution.create_order(user, [granule.pk])
    order = distribution.refresh_order(order.pk)
    if order.state != order.State.READY:
        raise RuntimeError(f"the order is {order.state}, not ready")
    return archive.cache_path(file), order, md5, collection


def run(options):
    from distribution import services as distribution

    from . import live
    from .memcap import MemoryCap

    size = options["size_mib"] << 20
    path, order, md5, collection = ready_link(size)
    token = live.provider_token("BENCHD", [collection])
    cap = MemoryCap.create(f"granary-bench-{os.getpid()}")
    try:
        with live.running(token, workers=(), wrap_web=cap and cap.argv) as web:
            (link,) = distribution.links(order, site=web.base_url + "/")["links"]
            url = link["url"]
            curl(url, size)       # the first request of a worker imports what the view needs
            times = measure(str(path), url, size, options["repeats"], cap)
            verified = verify(url, path, size, md5)
    finally:
        if cap:
            cap.remove()

    def rate(seconds):
        return round(size / seconds / 1e6, 1)

    def medians_by(clock):
        return {mode: {way: statistics.median(getattr(t, clock) for t in timings)
                       for way, timings in ways.items()} for mode, ways in times.items()}

    def ratios(median):
        return {mode: round(median[mode]["dd"] / median[mode]["http"], 3) for mode in median}

    medians = medians_by("own")
    ratio, process_ratio = ratios(medians), ratios(medians_by("process"))
    cold = "capped" if cap else "dropped"
    conditions = {
        "capped": f"dd and the server in a memory cgroup of {cap_bytes(size) >> 20} MiB, "
                  "a quarter of the file at most, filled with other data before each read: "
                  "the read comes from the disk into pages reclaimed from that data, as on a "
                  "cache server with more data than RAM",
        "dropped": "posix_fadvise(DONTNEED) on the file before each read: the read comes from "
                   "the disk into freshly freed memory",
        "warm": "right after a dd read: the bytes come from memory",
    }
    result = {
        "size_mib": options["size_mib"], "repeats": options["repeats"],
        "client": "curl -o /dev/null", "server": "gunicorn (deploy/gunicorn.conf.py), gthread",
        "cold_condition": cold,
        "conditions": {mode: conditions[mode] for mode in times},
        **{f"{mode}_{way}_mb_s": rate(medians[mode][way])
           for mode in times for way in ("dd", "http")},
        "ratio_to_dd": ratio[cold],
        **{f"ratio_to_dd_{mode}": ratio[mode] for mode in times},
        "timed_by": "each tool's own clock: dd's report and curl's time_total (from the "
                    "connection to the last byte); process_* is the time of the whole process, "
                    "its start included",
        **{f"process_ratio_to_dd_{mode}": process_ratio[mode] for mode in times},
        "seconds": {mode: {way: [round(t.own, 4) for t in timings]
                           for way, timings in ways.items()} for mode, ways in times.items()},
        "process_seconds": {mode: {way: [round(t.process, 4) for t in timings]
                                   for way, timings in ways.items()}
                            for mode, ways in times.items()},
        "checksum_and_range_verified": verified,
        "goals": {"ratio_to_dd": f">= {GOAL}"}, "goal_met": ratio[cold] >= GOAL,
    }
    result["table"] = [
        ("file (in the cache, ordered, signed link)", f"{options['size_mib']} MiB, "
                                                      f"median of {options['repeats']}"),
        *[(f"{mode}: dd / HTTP MB/s, ratio (by process)",
           f"{result[f'{mode}_dd_mb_s']} / {result[f'{mode}_http_mb_s']}, {ratio[mode]} "
           f"({process_ratio[mode]})") for mode in times],
        (f"ratio_to_dd ({cold}) >= {GOAL}", "met" if result["goal_met"] else "NOT met"),
        ("MD5 of a download and a Range checked", "yes" if verified else "no"),
    ]
    return result
