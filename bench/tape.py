"""tape: Granary writing to and reading from one drive of tgt's virtual tape library (started
for the run on a loopback iSCSI port by bench.tgt_library, stopped by its PID at the end),
against a plain loop of SSC commands moving the same bytes through the same drive in the same
run: WRITE(6) of 1 MiB records then WRITE FILEMARKS, and REWIND then READ(6).

- large: 8 x 256 MiB granules archived (one copy, written then read back as Granary verifies
  every write) and recalled after the cache is emptied;
- small: 10,000 x 4 KiB granules the same way (Granary aggregates them into 1 MiB records);
  the plain loop writes them as one record each (no aggregation, Enstore's way) and, as the
  reference, the same bytes in 1 MiB records.

The clock runs from admission to ARCHIVED (write + read-back) and from the recall request to
every file cached; registering granules in the catalog is not timed. The reference of the
write side is the plain loop's write and read of the same bytes (Granary reads each byte back),
of the read side its read. The plain loop runs just before and just after each kind's Granary
phase, and the reference is the mean of the two runs' seconds (both are printed): on one host
consecutive writes of the same bytes to fresh cartridges ran at 321, 140 and 157 MB/s, the
first of a process the fastest, so a single run before Granary's favoured the loop by its
place. Each of Granary's clocks is split into the tape path (time inside the
SCSI medium's calls: mounts, SSC commands, hashing on the way, recalled bytes into the cache)
and the rest, the archive's catalog and request work (rows per granule, copy and request; the
table says "catalog/requests"). For large files the plain loop also reads the records once more
into synced files with their SHA-256: what any recall must at least do, beside the bare read;
and the cache disk alone writes the same bytes durably (no tape, no hash): a recall's bound is
the slower of that and the plain read, as it lands its bytes durably before they count.
"""
import functools
import hashlib
import os
import threading
import time
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from django.conf import settings

from bench import tgt_library

NAME = "tape"
HELP = "archive and recall through one tgt tape drive, against a plain SSC loop"
RECORD = 1 << 20
GOALS = {"large": 0.8, "small": 0.5}


def add_arguments(parser):
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--small", type=int, default=10000)
    parser.add_argument("--small-kib", type=int, default=4)
    parser.add_argument("--port", type=int, default=3270, help="the library's iSCSI port")


def _library(root, port, total):
    """One drive and four cartridges (A00001..) big enough for the run's bytes, started."""
    size_mb = max(64, int(total * 1.3 / 2**20) + 64)
    return tgt_library.VirtualLibrary(root, port, 1, tgt_library.barcodes(1, 4), size_mb).start()


def _plain(library, barcode, paths, per_file, landed=None):
    """The plain SSC loop on the same drive: (write s, read s, landed s) of the files' bytes as
    records (one per file, or 1 MiB ones). With `landed` (a folder) the records are also read
    once more into files there, SHA-256 taken and synced: the least a recall does."""
    with library.mounted(barcode) as m:
        d = m.drive
        d.rewind()
        sizes = []
        _settled()
        started = time.perf_counter()
        for record in _records(paths, per_file):
            d.write(record)
            sizes.append(len(record))
        d.write_filemarks(1)
        write_s = time.perf_counter() - started
        d.rewind()
        _settled()
        started = time.perf_counter()
        got = sum(len(d.read(size)) for size in sizes)
        read_s = time.perf_counter() - started
        if got != sum(sizes):
            raise RuntimeError(f"the plain loop read {got} bytes of {sum(sizes)}")
        landed_s = _landed(d, sizes, landed) if landed else None
    disk_s = _disk_write(paths, landed) if landed else None
    return write_s, read_s, landed_s, disk_s


def _around(before, after):
    """The plain loop's reference from its runs before and after Granary's: the mean of their
    seconds (write, read), the landed and disk figures of the run before, and both runs."""
    (w1, r1, landed, disk), (w2, r2, _, _) = before, after
    return (w1 + w2) / 2, (r1 + r2) / 2, landed, disk, [(w1, r1), (w2, r2)]


def _landed(d, sizes, folder):
    """Seconds to read the records again into 256 MiB files with their SHA-256, synced."""
    folder.mkdir(parents=True, exist_ok=True)
    d.rewind()
    _settled()
    started = time.perf_counter()
    out, digest, n = None, None, 0
    for size in sizes:
        if out is None or out.tell() >= 256 << 20:
            _sync(out)
            out, digest = open(folder / f"landed-{n}", "wb"), hashlib.sha256()
            n += 1
        record = d.read(size)
        digest.update(record)
        out.write(record)
    _sync(out)
    return time.perf_counter() - started


def _disk_write(paths, folder):
    """Seconds to write the files' bytes (in the page cache) into files in `folder`, on the
    cache's disk, in 1 MiB writes, each file synced: no tape, no hash. A recall lands its bytes
    durably before they count, so it cannot be faster than this."""
    _settled()
    started = time.perf_counter()
    for n, path in enumerate(paths):
        with open(path, "rb") as source:
            out = open(folder / f"disk-{n}", "wb")
            while block := source.read(RECORD):
                out.write(block)
            _sync(out)
    return time.perf_counter() - started


def _settled():
    """Every dirty page written out before a clock starts: each phase begins with the disk's
    writeback done, not behind the gigabytes the phase before left (tgtd's writes to its
    cartridge files are not synced; a phase that met them waited in the kernel's throttle)."""
    os.sync()


def _sync(out):
    if out is not None:
        out.flush()
        os.fsync(out.fileno())
        out.close()
        os.unlink(out.name)


def _records(paths, per_file):
    """The files' bytes as records, read as they are written (the files are in the page
    cache for both sides)."""
    rest = b""
    for path in paths:
        with open(path, "rb") as f:
            while block := f.read(RECORD):
                if per_file:
                    yield block
                    continue
                rest += block
                while len(rest) >= RECORD:
                    yield rest[:RECORD]
                    rest = rest[RECORD:]
    if rest:
        yield rest


def _stage(staging, prefix, n, size):
    paths, digests = [], []
    for i in range(n):
        path = staging / f"{prefix}-{i:06d}.dat"
        h = hashlib.sha256()
        with open(path, "wb") as f:
            for _ in range(0, size, 1 << 20):
                block = os.urandom(min(1 << 20, size))
                h.update(block)
                f.write(block)
        paths.append(path)
        digests.append(h.hexdigest())
    return paths, digests


def _through_granary(collection, prefix, paths, digests, size):
    from backend.archive import services
    from backend.archive.models import CacheEntry
    from backend.catalog.models import File, Granule
    from backend.catalog.services import register_granules

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    granules = register_granules([
        {"collection": collection, "granule_id": f"{prefix}-{i:06d}",
         "start": t0 + timedelta(seconds=i), "end": t0 + timedelta(seconds=i + 1),
         "files": [{"name": p.name, "size": size, "checksum_type": "SHA256", "checksum": d}]}
        for i, (p, d) in enumerate(zip(paths, digests, strict=True))])
    # each granule holds one file: one query finds them all (not one per granule)
    file_of = dict(File.objects.filter(granule__in=granules).values_list("granule_id", "pk"))
    items = [(g, {file_of[g.pk]: p}) for g, p in zip(granules, paths, strict=True)]
    with _tape_clock() as tape_w:
        _settled()
        started = time.perf_counter()
        services.archive_granules(items)
        services.run_until_idle()
        write_s = time.perf_counter() - started
    archived = Granule.objects.filter(pk__in=[g.pk for g in granules],
                                      state=Granule.State.ARCHIVED).count()
    if archived != len(granules):
        raise RuntimeError(f"only {archived}/{len(granules)} {prefix} granules archived")
    files = list(File.objects.filter(pk__in=file_of.values()).order_by("pk"))
    for f in files:
        services.cache_path(f).unlink(missing_ok=True)
    CacheEntry.objects.filter(file__in=files).delete()
    with _tape_clock() as tape_r, _statements() as statements:
        _settled()
        started = time.perf_counter()
        services.make_available(files)
        services.run_until_idle()
        read_s = time.perf_counter() - started
    for f in files:
        h = hashlib.sha256(services.cache_path(f).read_bytes()).hexdigest()
        if h != f.checksum:
            raise RuntimeError(f"{f.name} recalled with other bytes")
    return write_s, read_s, tape_w[0], tape_r[0], statements[0] / len(files)


@contextmanager
def _statements():
    """How many SQL statements the movers send meanwhile: on the run's connection (they run in
    this thread: run_until_idle) and on any opened meanwhile (a recall's commit running beside
    its reads has its own)."""
    from django.db import connection
    from django.db.backends.signals import connection_created

    count = [0]
    lock = threading.Lock()

    def counted(execute, sql, params, many, context):
        with lock:
            count[0] += 1
        return execute(sql, params, many, context)

    def opened(sender, connection, **kwargs):
        if counted not in connection.execute_wrappers:
            connection.execute_wrappers.append(counted)

    connection_created.connect(opened)
    try:
        with connection.execute_wrapper(counted):
            yield count
    finally:
        connection_created.disconnect(opened)


@contextmanager
def _tape_clock():
    """Seconds spent in the SCSI medium's own calls (ScsiTapeVolume and its writer: mounts,
    label checks, SSC commands, hashing on the way, a recall's bytes into its cache file), the
    outermost call counted once; the rest of a clock is the archive's own work (catalog rows,
    requests, scheduling)."""
    from backend.archive.media import scsitape

    spent, depth = [0.0], [0]

    def timed(f):
        @functools.wraps(f)
        def call(*args, **kwargs):
            depth[0] += 1
            started = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                depth[0] -= 1
                if not depth[0]:
                    spent[0] += time.perf_counter() - started
        return call

    patched = [(cls, name, getattr(cls, name)) for cls, names in (
        (scsitape.ScsiTapeVolume, ("read", "read_many", "scan", "format", "cut")),
        (scsitape.ScsiVolumeWriter, ("__init__", "add", "close", "abandon"))) for name in names]
    for cls, name, f in patched:
        setattr(cls, name, timed(f))
    try:
        yield spent
    finally:
        for cls, name, f in patched:
            setattr(cls, name, f)


def run(options):
    from backend.archive import operations
    from backend.archive.media.scsi.library import library_for
    from backend.catalog.models import Collection

    n, size = options["files"], options["size_mib"] << 20
    k, small = options["small"], options["small_kib"] << 10
    root = settings.DATA_ROOT / "vtl"
    vtl = _library(root, options["port"], n * size + k * (small + 1536))
    settings.GRANARY_TAPE, settings.GRANARY_SCSI = "scsi", vtl.config
    settings.GRANARY_WRITE_MAX_WAIT_S = settings.GRANARY_READ_MAX_WAIT_S = 0
    settings.GRANARY_REMOUNT_DELAY_S = 0
    settings.GRANARY_CACHE_BYTES = max(settings.GRANARY_CACHE_BYTES, 3 * (n * size + k * small))
    try:
        media = {"name": "tgt", "rate_mb_s": 400, "mount_s_min": 0, "mount_s_max": 0,
                 "unmount_s": 0, "position_s_per_gb": 0, "capacity_bytes": vtl.size_mb * 10**6}
        primary, _ = operations.install_layout(silos=("silo1",), drives_per_silo=1,
                                               volumes_per_silo=2, model=media)
        collection = Collection.objects.create(short_name="BENCHT", version="1", title="tape")
        operations.set_policy(collection, [primary])
        staging = settings.STAGING_ROOT / "bench"
        staging.mkdir(parents=True, exist_ok=True)
        large, large_sums = _stage(staging, "L", n, size)
        smalls, small_sums = _stage(staging, "S", k, small)
        library = library_for(vtl.config)
        plain, granary = {}, {}
        for kind, prefix, paths, sums, nbytes, landed in (
                ("large", "L", large, large_sums, size, root / "landed"),
                ("small", "S", smalls, small_sums, small, None)):
            before = _plain(library, "A00003", paths, False, landed)
            granary[kind] = _through_granary(collection, prefix, paths, sums, nbytes)
            plain[kind] = _around(before, _plain(library, "A00003", paths, False))
        plain["small_per_file"] = _plain(library, "A00004", smalls, True)
    finally:
        vtl.stop()
    return _result(n * size, k * small, plain, granary)


def _mb_s(nbytes, seconds):
    return _sig(nbytes / seconds / 1e6) if seconds else None


def _sig(x):
    """Three significant digits (a small-file recall ratio rounded to 3 places was 0.0)."""
    return float(f"{x:.3g}")


def _row(kind, nbytes, plain, granary):
    """One kind's figures: MB/s, ratios to the plain loop (from the seconds), and how much of
    Granary's clocks the tape path took (the rest: the archive's catalog and request work)."""
    pw, pr, landed, disk, runs = plain
    gw, gr, tw, tr, statements = granary
    row = {"plain_write_mb_s": _mb_s(nbytes, pw), "plain_read_mb_s": _mb_s(nbytes, pr),
           "plain_write_read_mb_s": _mb_s(nbytes, pw + pr),
           "granary_archive_mb_s": _mb_s(nbytes, gw), "granary_recall_mb_s": _mb_s(nbytes, gr),
           "ratio_archive": _sig((pw + pr) / gw), "ratio_recall": _sig(pr / gr),
           "archive_s": round(gw, 3), "archive_tape_s": round(tw, 3),
           "recall_s": round(gr, 3), "recall_tape_s": round(tr, 3),
           "ratio_archive_tape_path": _sig((pw + pr) / tw) if tw else None,
           "ratio_recall_tape_path": _sig(pr / tr) if tr else None, "goal": GOALS[kind],
           "recall_statements_per_file": _sig(statements),
           "plain_runs": [{"write_mb_s": _mb_s(nbytes, w), "read_mb_s": _mb_s(nbytes, r)}
                          for w, r in runs]}
    table = [(f"{kind}: plain SSC write / read (1 MiB records), before / after Granary",
              " | ".join(f"{run['write_mb_s']} / {run['read_mb_s']}"
                         for run in row["plain_runs"]) + " MB/s"),
             (f"{kind}: plain SSC write / read, the reference (their mean seconds)",
              f"{row['plain_write_mb_s']} / {row['plain_read_mb_s']} MB/s"),
             (f"{kind}: Granary archive (write + read-back) / recall",
              f"{row['granary_archive_mb_s']} / {row['granary_recall_mb_s']} MB/s"),
             (f"{kind}: ratio archive / recall (goal >= {GOALS[kind]})",
              f"{row['ratio_archive']} / {row['ratio_recall']}"),
             (f"{kind}: archive s: tape path + catalog/requests",
              f"{tw:.2f} + {gw - tw:.2f}"),
             (f"{kind}: recall s: tape path + catalog/requests",
              f"{tr:.2f} + {gr - tr:.2f}"),
             (f"{kind}: recall SQL statements per file", f"{row['recall_statements_per_file']}"),
             (f"{kind}: ratio of the tape path alone, archive / recall",
              f"{row['ratio_archive_tape_path']} / {row['ratio_recall_tape_path']}")]
    if landed:
        row["plain_read_landed_mb_s"] = _mb_s(nbytes, landed)
        row["ratio_recall_landed"] = _sig(landed / gr)
        table += [(f"{kind}: plain read into files (SHA-256, fsync): MB/s, recall ratio",
                   f"{row['plain_read_landed_mb_s']} MB/s, {row['ratio_recall_landed']}")]
    if disk:
        # the recall's bound: the slower of reading the tape and writing the cache's disk
        row["cache_disk_write_mb_s"] = _mb_s(nbytes, disk)
        row["ratio_recall_bound"] = _sig(max(pr, disk) / gr)
        table += [(f"{kind}: cache disk, durable write alone: MB/s; recall over "
                   "the slower of it and the plain read",
                   f"{row['cache_disk_write_mb_s']} MB/s; {row['ratio_recall_bound']}")]
    return row, table


def _result(large_bytes, small_bytes, plain, granary):
    out, table = {"machine": "2 cores shared with other runs: figures are loaded"}, []
    for kind, nbytes in (("large", large_bytes), ("small", small_bytes)):
        out[kind], rows = _row(kind, nbytes, plain[kind], granary[kind])
        table += rows
    pw, pr, _, _ = plain["small_per_file"]
    out["small_per_file_plain"] = {"write_mb_s": _mb_s(small_bytes, pw),
                                   "read_mb_s": _mb_s(small_bytes, pr)}
    table.append(("small: plain SSC, one record per file, write / read",
                  f"{_mb_s(small_bytes, pw)} / {_mb_s(small_bytes, pr)} MB/s"))
    out["table"] = table
    return out
