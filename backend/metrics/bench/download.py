"""download: a file in the RAID cache fetched over HTTP by the signed link of a ready order,
through gunicorn as in production, against dd reading the same file in the same run.

The file is archived for real (two verified tape copies; it stays in the cache) and ordered
by a user; curl fetches the link into /dev/null, dd reads the file into /dev/null with 1 MiB
blocks. Both are timed as processes, each repeat twice: "cold", after the file was dropped
from the page cache (posix_fadvise DONTNEED, as baseline.dd_read does: the bytes come from
the disk, which is what a cache disk serves), and "warm", right after a read (the bytes come
from memory, which exposes any copy the server makes). The median repeat of each counts;
ratio_to_dd is the cold one. An untimed download afterwards is checked against the catalog
MD5, and a range against the file's bytes.

On a VM whose balloon reports free pages to the host, cold repeats come in two speeds: a read
that lands in pages the guest is handing back at that moment runs at half the usual
rate or less, whichever way reads. Hence 11 repeats by default, and every repeat's time in the JSON.
"""
import hashlib
import os
import statistics
import subprocess
import time
import urllib.request
from datetime import UTC, datetime, timedelta

from django.conf import settings

NAME = "download"
HELP = "a cached file by its signed order link through gunicorn, against dd of the same file"
GOAL = 0.90


def add_arguments(parser):
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=11)


def drop_from_page_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def timed(argv):
    """(seconds, stdout) of a process that must succeed."""
    started = time.perf_counter()
    done = subprocess.run(argv, check=True, capture_output=True, text=True)
    return time.perf_counter() - started, done.stdout


def dd(path):
    return timed(["dd", f"if={path}", "of=/dev/null", "bs=1M", "status=none"])[0]


def curl(url, size):
    seconds, out = timed(["curl", "-sS", "-f", "-o", "/dev/null", "-w", "%{size_download}", url])
    if int(out) != size:
        raise RuntimeError(f"curl received {out} bytes, not {size}")
    return seconds


def measure(path, url, size, repeats):
    """{"cold"|"warm": {"dd"|"http": [seconds per repeat]}}; the order alternates."""
    times = {mode: {"dd": [], "http": []} for mode in ("cold", "warm")}
    runs = {"dd": lambda: dd(path), "http": lambda: curl(url, size)}
    for repeat in range(repeats):
        order = ("dd", "http") if repeat % 2 == 0 else ("http", "dd")
        for way in order:
            drop_from_page_cache(path)
            times["cold"][way].append(runs[way]())
        for way in order:
            dd(path)
            times["warm"][way].append(runs[way]())
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
    from .baseline import write_random_file

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

    size = options["size_mib"] << 20
    path, order, md5, collection = ready_link(size)
    token = live.provider_token("BENCHD", [collection])
    with live.running(token, workers=()) as web:
        (link,) = distribution.links(order, site=web.base_url + "/")["links"]
        url = link["url"]
        curl(url, size)       # the first request of a worker imports what the view needs
        times = measure(str(path), url, size, options["repeats"])
        verified = verify(url, path, size, md5)

    def rate(seconds):
        return size / seconds / 1e6

    medians = {mode: {way: statistics.median(values) for way, values in ways.items()}
               for mode, ways in times.items()}
    ratio = {mode: medians[mode]["dd"] / medians[mode]["http"] for mode in medians}
    result = {
        "size_mib": options["size_mib"], "repeats": options["repeats"],
        "client": "curl -o /dev/null", "server": "gunicorn (deploy/gunicorn.conf.py), gthread",
        "page_cache": "cold: posix_fadvise(DONTNEED) on the file before each read (drop_caches "
                      "needs privileges this machine lacks); warm: right after a dd read",
        "cold_dd_mb_s": round(rate(medians["cold"]["dd"]), 1),
        "cold_http_mb_s": round(rate(medians["cold"]["http"]), 1),
        "warm_dd_mb_s": round(rate(medians["warm"]["dd"]), 1),
        "warm_http_mb_s": round(rate(medians["warm"]["http"]), 1),
        "ratio_to_dd": round(ratio["cold"], 3), "ratio_to_dd_warm": round(ratio["warm"], 3),
        "seconds": {mode: {way: [round(v, 3) for v in values] for way, values in ways.items()}
                    for mode, ways in times.items()},
        "checksum_and_range_verified": verified,
        "goals": {"ratio_to_dd": f">= {GOAL}"}, "goal_met": ratio["cold"] >= GOAL,
    }
    result["table"] = [
        ("file (in the cache, ordered, signed link)", f"{options['size_mib']} MiB, "
                                                      f"median of {options['repeats']}"),
        ("cold: dd / HTTP", f"{result['cold_dd_mb_s']} / {result['cold_http_mb_s']} MB/s"),
        ("warm: dd / HTTP", f"{result['warm_dd_mb_s']} / {result['warm_http_mb_s']} MB/s"),
        ("ratio to dd, cold (goal >= 0.90)", f"{result['ratio_to_dd']}"),
        ("ratio to dd, warm", f"{result['ratio_to_dd_warm']}"),
        ("MD5 of a download and a Range checked", "yes" if verified else "no"),
        (f"ratio_to_dd >= {GOAL}", "met" if result["goal_met"] else "NOT met"),
    ]
    return result
