"""object-store: ingest with copy 1 in an S3 bucket, on a real S3 server the run starts itself
(`rclone serve s3` on a loopback port, its folder in the bench's data root, stopped by PID at
the end), against references measured in the same run:

- large files through the bulk API to ARCHIVED, against boto3 writing the same bytes straight
  to the same server ("direct": multipart in parts of GRANARY_S3_PART_BYTES, as Granary sends,
  each request with the Content-MD5 of its body, as Granary sends; a single PUT with
  Content-MD5 when a file fits in one part), before and after the ingests (the mean of the two);
- small granules (4 KiB) through the bulk API and through PDRs, as ingest-small sends them,
  against ingest-small's own tape-only policy (two tape copies), run before and after the object
  runs (the mean of the two), so neither side has the emptier catalog.

Each is run with copy 1 in the bucket alone ("bucket") and with copy 2 on tape as well
("bucket + tape"). The clock runs from the request over HTTP until every granule is ARCHIVED
with every copy its policy asks for verified, as in ingest-large and ingest-small. The staged
files sit in the page cache for every side alike (written just before, 20+ GB of RAM here), and
each large-file run starts with no dirty pages left by the one before (sync, untimed): without
it the run after a 2 GiB write shared the disk with that write's flush (direct "before" and
"after" differed by up to 40 %).

CPU seconds are counted per process for each phase, the S3 server's ("s3") among them: it
shares the machine's cores with Granary, so its cost per byte or per object is part of the
answer. Over plain HTTP botocore signs every body with SHA256 (and the server checks it), on
both sides alike.
"""
import base64
import hashlib
import os
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from django.conf import settings

NAME = "object-store"
HELP = "ingest with copy 1 in an S3 bucket, against boto3 direct and tape-only ingest-small"

GRANARY_BUCKET, DIRECT_BUCKET = "granary-bench", "direct-bench"
# (name, collection short name, targets): copy N goes to targets[N - 1]
LARGE_RUNS = (("bucket", "BENCHLO", ("bucket",)),
              ("bucket_tape", "BENCHLOT", ("bucket", "backup")))
SMALL_RUNS = (("bucket", "BENCHSO", ("bucket",)),
              ("bucket_tape", "BENCHSOT", ("bucket", "backup")))
TAPE = ("BENCHS", ("primary", "backup"))   # ingest-small's policy
GOAL = 0.8


def add_arguments(parser):
    parser.add_argument("--files", type=int, default=8, help="large files per run")
    parser.add_argument("--size-mib", type=int, default=256, help="size of each large file")
    parser.add_argument("--granules", type=int, default=10000,
                        help="small granules per way in (bulk API, PDRs), per run")
    parser.add_argument("--pdr-granules", type=int, default=1000, help="granules per PDR")
    parser.add_argument("--direct-threads", type=int, default=8,
                        help="requests boto3 has in flight at once in the direct baseline")


# -- the direct baseline -------------------------------------------------------------------------

def _b64md5(body):
    return base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode()


def direct_upload(client, bucket, paths, part_bytes, threads):
    """boto3 straight to the server: each file in parts of `part_bytes` (one PUT when it fits),
    every request with the Content-MD5 of its body, `threads` requests in flight over all the
    files; (seconds, keys). Each answer's ETag is checked against the MD5 sent."""
    started = time.perf_counter()
    keys, jobs, uploads = [], [], {}
    for path in paths:
        key, size = f"direct/{path.parent.name}/{path.name}", os.path.getsize(path)
        keys.append(key)
        if size <= part_bytes:
            jobs.append((key, path, None, 0, size))
            continue
        uploads[key] = client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        jobs += [(key, path, number, offset, min(part_bytes, size - offset))
                 for number, offset in enumerate(range(0, size, part_bytes), start=1)]

    def send(job):
        key, path, number, offset, length = job
        with open(path, "rb") as f:
            body = os.pread(f.fileno(), length, offset)
        md5 = _b64md5(body)
        if number is None:
            etag = client.put_object(Bucket=bucket, Key=key, Body=body, ContentMD5=md5)["ETag"]
        else:
            etag = client.upload_part(Bucket=bucket, Key=key, UploadId=uploads[key],
                                      PartNumber=number, Body=body, ContentMD5=md5)["ETag"]
        if base64.b64decode(md5).hex() != etag.strip('"'):
            raise RuntimeError(f"direct: {key} part {number} answered ETag {etag}")
        return key, number, etag

    with ThreadPoolExecutor(max(threads, 1), thread_name_prefix="direct") as pool:
        sent = list(pool.map(send, jobs))
    for key, upload_id in uploads.items():
        parts = sorted((n, etag) for k, n, etag in sent if k == key)
        client.complete_multipart_upload(
            Bucket=bucket, Key=key, UploadId=upload_id,
            MultipartUpload={"Parts": [{"PartNumber": n, "ETag": e} for n, e in parts]})
    return time.perf_counter() - started, keys


def _check_and_drop(client, bucket, keys, paths):
    """Untimed: each direct object has its file's size; then removed (the next run writes anew
    and the disk does not fill)."""
    for key, path in zip(keys, paths, strict=True):
        length = client.head_object(Bucket=bucket, Key=key)["ContentLength"]
        if length != os.path.getsize(path):
            raise RuntimeError(f"direct: {key} holds {length} bytes, not {path.stat().st_size}")
        client.delete_object(Bucket=bucket, Key=key)


# -- Granary's side ------------------------------------------------------------------------------

def _large_granules(collection, folder, paths, digests):
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    out = []
    for i, (path, digest) in enumerate(zip(paths, digests, strict=True)):
        start = t0 + timedelta(hours=i)
        out.append({
            "collection": collection.key, "granule_id": f"{collection.short_name}-{i:05d}",
            "temporal": {"start": start.isoformat(),
                         "end": (start + timedelta(minutes=5)).isoformat()},
            "bbox": [-10, -10, 10, 10],
            "files": [{"name": path.name, "path": f"{folder}/{path.name}",
                       "size": path.stat().st_size, "checksum_type": "SHA256",
                       "checksum": digest}]})
    return out


def _ingest_bulk(web, granules):
    """POST one bulk request and wait until it is finished; seconds."""
    started = time.perf_counter()
    status, answer = web.call("POST", "/api/v1/ingest/requests/", {"granules": granules})
    if status != 202:
        raise RuntimeError(f"the bulk request was refused ({status}): {answer}")
    last = {}

    def finished():
        last.update(web.call("GET", f"/api/v1/ingest/requests/{answer['id']}/?granules=0")[1])
        return last["state"] in ("completed", "failed")

    # four looks a second: a finer poll costs the web process (which shares the two cores with
    # the run it watches) more CPU than it saves in the clock's resolution
    web.wait(finished, 3600, "the bulk request", interval=0.25)
    if last["state"] != "completed":
        raise RuntimeError(f"the bulk request ended {last['state']}: {last}")
    return time.perf_counter() - started


def _cpu_delta(before, after):
    return {name: round(after[name] - before.get(name, 0), 2) for name in after}


def _small_figures(n, times, cpu):
    bulk, pdr = n / times["bulk_s"], n / times["pdr_s"]
    return {"bulk_api": round(bulk, 1), "pdr": round(pdr, 1),
            "granules_per_s": round(min(bulk, pdr), 1),
            "overall_granules_per_s": round(2 * n / (times["bulk_s"] + times["pdr_s"]), 1),
            **{k: round(v, 3) for k, v in times.items()}, "cpu_s": cpu,
            "cpu_ms_per_granule": round(1000 * sum(cpu.values()) / (2 * n), 3),
            "cpu_ms_per_granule_by_process": {k: round(1000 * v / (2 * n), 3)
                                              for k, v in cpu.items()}}


def _expect(collections, granules, copies):
    """Every granule of each collection ARCHIVED with `copies` verified copies per file."""
    from . import live

    for collection in collections:
        archived, verified = live.archived_counts(collection)
        if archived != granules or verified != copies[collection.pk] * granules:
            raise RuntimeError(f"{collection.key}: {archived}/{granules} granules archived, "
                               f"{verified}/{copies[collection.pk] * granules} verified copies")


def _object_copies(bucket):
    from backend.archive.models import FileCopy

    return FileCopy.objects.filter(bucket=bucket, state=FileCopy.State.VERIFIED).count()


# -- the run -------------------------------------------------------------------------------------

def run(options):
    from backend.accounts.models import Provider
    from backend.archive import operations
    from backend.archive.models import Bucket
    from backend.catalog.models import Collection
    from ingest.services import staging_area

    from . import ingest_small, live
    from .baseline import write_random_file
    from .s3server import S3Server

    n_files, size = options["files"], options["size_mib"] << 20
    n, per_pdr = options["granules"], max(1, options["pdr_granules"])
    threads, part = options["direct_threads"], settings.GRANARY_S3_PART_BYTES
    root = settings.DATA_ROOT

    access, secret = f"bench-{secrets.token_hex(6)}", secrets.token_hex(20)
    server = S3Server(root=root / "s3", access_key=access, secret_key=secret,
                      temp_dir=root).start()
    try:
        client = server.client(max_pool_connections=max(threads, 32))
        for name in (GRANARY_BUCKET, DIRECT_BUCKET):
            client.create_bucket(Bucket=name)
        store = {"endpoint_url": server.endpoint_url, "access_key": access,
                 "secret_key": secret, "region": "us-east-1"}
        settings.GRANARY_OBJECT_STORES = {"default": store}

        primary, backup = operations.install_layout(drives_per_silo=2, volumes_per_silo=2,
                                                    model=live.media())
        bucket = Bucket.objects.create(name="bench-objects", store="default",
                                       bucket=GRANARY_BUCKET)
        targets = {"primary": primary, "backup": backup, "bucket": bucket}
        collections, copies = {}, {}
        for short_name, names in [TAPE] + [(c, t) for _, c, t in LARGE_RUNS + SMALL_RUNS]:
            collection = Collection.objects.create(short_name=short_name, version="1",
                                                   title="bench")
            operations.set_policy(collection, [targets[t] for t in names])
            collections[short_name], copies[collection.pk] = collection, len(names)
        token = live.provider_token("BENCHS", list(collections.values()))
        area = staging_area(Provider.objects.get(name="BENCHS"))

        # large: written once, hard-linked into a folder per run (the same bytes, page-cached)
        (area / "large").mkdir(parents=True, exist_ok=True)
        paths, digests = [], []
        for i in range(n_files):
            path = area / "large" / f"large-{i:05d}.dat"
            h = hashlib.sha256()
            write_random_file(path, size, h)
            paths.append(path)
            digests.append(h.hexdigest())
        large_work = {}
        for run_name, short_name, _ in LARGE_RUNS:
            folder = f"large-{run_name}"
            (area / folder).mkdir()
            for path in paths:
                os.link(path, area / folder / path.name)
            large_work[run_name] = _large_granules(collections[short_name], folder,
                                                   [area / folder / p.name for p in paths],
                                                   digests)
        # small: ingest-small's own workload, delivered afresh per run
        small_work = {"tape_before": ingest_small.prepare(collections[TAPE[0]], n, per_pdr, "tb"),
                      "tape_after": ingest_small.prepare(collections[TAPE[0]], n, per_pdr, "ta")}
        for (run_name, short_name, _), tag in zip(SMALL_RUNS, ("o", "ot"), strict=True):
            small_work[run_name] = ingest_small.prepare(collections[short_name], n, per_pdr, tag)
        small_files = [area / g["files"][0]["path"]
                       for g in small_work["bucket"][0]["granules"]]

        cache_gb = str(max(64, 4 * len(LARGE_RUNS) * n_files * size / 2**30))
        env = {"GRANARY_S3_ENDPOINT": server.endpoint_url, "GRANARY_S3_ACCESS_KEY": access,
               "GRANARY_S3_SECRET_KEY": secret, "GRANARY_CACHE_GB": cache_gb}
        large, small, cpu, direct = {}, {}, {}, {}

        def own_cpu():
            """CPU seconds of the S3 server and of this process (the direct client)."""
            times = os.times()
            return {"s3": live._cpu(server.pid), "client": times.user + times.system}

        with live.running(token, env) as web:
            def cpu_now():
                return {**web.cpu_seconds(), "s3": live._cpu(server.pid)}

            def direct_run(name, files):
                """Granary's processes are running but idle meanwhile: their CPU seconds are
                counted too ("granary_idle"), to show that nothing of theirs slowed it."""
                os.sync()
                before, idle = own_cpu(), web.cpu_seconds()
                seconds, keys = direct_upload(client, DIRECT_BUCKET, files, part, threads)
                direct[name], cpu[f"direct_{name}"] = seconds, _cpu_delta(before, own_cpu())
                cpu[f"direct_{name}"]["granary_idle"] = round(
                    sum(_cpu_delta(idle, web.cpu_seconds()).values()), 2)
                _check_and_drop(client, DIRECT_BUCKET, keys, files)

            direct_run("large_before", paths)
            for run_name, _, _ in LARGE_RUNS:
                os.sync()
                before = cpu_now()
                seconds = _ingest_bulk(web, large_work[run_name])
                cpu[f"large_{run_name}"] = _cpu_delta(before, cpu_now())
                large[run_name] = {"s": round(seconds, 3),
                                   "mb_s": round(n_files * size / seconds / 1e6, 1)}
            direct_run("large_after", paths)

            direct_run("small", small_files)
            for run_name in ("tape_before", "bucket_tape", "bucket", "tape_after"):
                before = cpu_now()
                times = ingest_small.through_both(web, small_work[run_name])
                cpu[f"small_{run_name}"] = _cpu_delta(before, cpu_now())
                small[run_name] = _small_figures(n, times, cpu[f"small_{run_name}"])

        _expect([collections[c] for _, c, _ in LARGE_RUNS], n_files, copies)
        _expect([collections[c] for _, c, _ in SMALL_RUNS], 2 * n, copies)
        _expect([collections[TAPE[0]]], 4 * n, copies)
        objects = _object_copies(bucket)
        if objects != len(LARGE_RUNS) * n_files + len(SMALL_RUNS) * 2 * n:
            raise RuntimeError(f"{objects} verified object copies in {GRANARY_BUCKET}")
        s3_pid = server.pid
    finally:
        server.stop()   # by its PID (SIGTERM, then SIGKILL after 10 s)
    return _result(options, n_files, size, n, per_pdr, threads, part, direct, large, small, cpu,
                   objects, s3_pid)


def _result(options, n_files, size, n, per_pdr, threads, part, direct, large, small, cpu,
            objects, s3_pid):
    from . import ingest_small, live
    from .s3server import rclone_binary

    total = n_files * size
    direct_before, direct_after = direct["large_before"], direct["large_after"]
    small_direct_s = direct["small"]
    direct_s = (direct_before + direct_after) / 2
    direct_mb_s = total / direct_s / 1e6
    gb = total / 1e9
    for run_name, figures in large.items():
        figures["ratio_to_direct"] = round(figures["mb_s"] / direct_mb_s, 3)
        figures["cpu_s"] = cpu[f"large_{run_name}"]
        figures["cpu_s_per_gb"] = round(sum(figures["cpu_s"].values()) / gb, 2)
    direct_cpu = {k: round((cpu["direct_large_before"][k] + cpu["direct_large_after"][k]) / 2, 2)
                  for k in cpu["direct_large_before"] if k != "granary_idle"}
    tape = {way: (small["tape_before"][way] + small["tape_after"][way]) / 2
            for way in ("bulk_s", "pdr_s", "bulk_accepted_s", "pdr_accepted_s")}
    small["tape"] = _small_figures(n, tape, {
        k: round((small["tape_before"]["cpu_s"].get(k, 0)
                  + small["tape_after"]["cpu_s"].get(k, 0)) / 2, 2)
        for k in small["tape_before"]["cpu_s"]})
    for run_name, _, _ in SMALL_RUNS:
        small[run_name]["ratio_to_tape"] = round(
            small[run_name]["granules_per_s"] / small["tape"]["granules_per_s"], 3)
    ratios = {"large_bucket_to_direct": large["bucket"]["ratio_to_direct"],
              "large_bucket_tape_to_direct": large["bucket_tape"]["ratio_to_direct"],
              "small_bucket_to_tape": small["bucket"]["ratio_to_tape"],
              "small_bucket_tape_to_tape": small["bucket_tape"]["ratio_to_tape"]}
    goals = {"large_bucket_to_direct": f">= {GOAL}", "small_bucket_to_tape": f">= {GOAL}",
             "small_bucket_tape_to_tape": f">= {GOAL}"}
    result = {
        "files": n_files, "size_mib": options["size_mib"], "bytes_per_run": total,
        "checksum": "SHA256", "granules_per_way": n, "file_bytes": ingest_small.SIZE,
        "granules_per_pdr": per_pdr,
        "part_bytes": part, "object_concurrency": settings.GRANARY_OBJECT_CONCURRENCY,
        "object_movers": settings.GRANARY_OBJECT_MOVERS,
        "direct": {"method": "boto3 multipart, parts of part_bytes (one PUT when a file fits), "
                             "Content-MD5 on every request, ETag checked",
                   "threads": threads, "before_s": round(direct_before, 3),
                   "after_s": round(direct_after, 3), "mb_s": round(direct_mb_s, 1),
                   "mb_s_before": round(total / direct_before / 1e6, 1),
                   "mb_s_after": round(total / direct_after / 1e6, 1),
                   "cpu_s": direct_cpu,
                   "cpu_s_per_gb": round(sum(direct_cpu.values()) / gb, 2),
                   "small_puts_s": round(small_direct_s, 3),
                   "small_puts_per_s": round(n / small_direct_s, 1)},
        "large": large, "small": small, "cpu_s": cpu, "ratios": ratios, "goals": goals,
        "goals_met": {k: ratios[k] >= GOAL for k in goals},
        "object_copies_verified": objects,
        "s3_server": {"software": "rclone serve s3 (local folder)", "binary": rclone_binary(),
                      "pid": s3_pid},
        "workers": [f"{name}: -Q {queues} {' '.join(pool)}"
                    for name, queues, pool in live.WORKERS],
    }
    tape_s = small["tape"]
    result["table"] = [
        ("large files (SHA256), per run", f"{n_files} x {options['size_mib']} MiB"),
        (f"direct boto3, {part >> 20} MiB parts + Content-MD5, {threads} at once",
         f"{direct_mb_s:.1f} MB/s (before {result['direct']['mb_s_before']:.1f}; "
         f"after {result['direct']['mb_s_after']:.1f})"),
        ("  Granary's own CPU s meanwhile (idle): before | after",
         f"{cpu['direct_large_before']['granary_idle']} | "
         f"{cpu['direct_large_after']['granary_idle']}"),
        ("ingest, copy 1 in the bucket", f"{large['bucket']['mb_s']:.1f} MB/s "
                                         f"({large['bucket']['s']:.2f} s)"),
        (f"  ratio to direct (goal >= {GOAL})", f"{ratios['large_bucket_to_direct']:.3f}"),
        ("ingest, bucket + tape copy 2", f"{large['bucket_tape']['mb_s']:.1f} MB/s "
                                         f"({large['bucket_tape']['s']:.2f} s)"),
        ("  ratio to direct", f"{ratios['large_bucket_tape_to_direct']:.3f}"),
        ("CPU s per GB, all processes: direct | bucket | bucket + tape",
         f"{result['direct']['cpu_s_per_gb']} | {large['bucket']['cpu_s_per_gb']} | "
         f"{large['bucket_tape']['cpu_s_per_gb']}"),
        ("  bucket by process", ", ".join(f"{k} {round(v / gb, 2)}"
                                          for k, v in large["bucket"]["cpu_s"].items())),
        ("small granules per way in, per run", f"{n} of 4 KiB, bulk API and PDRs of {per_pdr}"),
        ("direct PUTs of the same 4 KiB files", f"{n / small_direct_s:.1f} objects/s "
                                                f"({threads} at once)"),
        ("tape + tape (ingest-small), lower of bulk/PDR",
         f"{tape_s['granules_per_s']:.1f} granules/s (bulk {tape_s['bulk_api']:.1f}, PDR "
         f"{tape_s['pdr']:.1f}; before {small['tape_before']['granules_per_s']:.1f}, "
         f"after {small['tape_after']['granules_per_s']:.1f})"),
    ]
    for run_name, label in (("bucket_tape", "bucket + tape copy 2"),
                            ("bucket", "bucket only")):
        s = small[run_name]
        result["table"] += [
            (f"{label}, lower of bulk/PDR", f"{s['granules_per_s']:.1f} granules/s (bulk "
                                            f"{s['bulk_api']:.1f}, PDR {s['pdr']:.1f})"),
            (f"  ratio to tape + tape (goal >= {GOAL})", f"{s['ratio_to_tape']:.3f}"),
        ]
    result["table"].append((
        "CPU ms per granule: tape+tape | bucket+tape | bucket",
        " | ".join(f"{small[r]['cpu_ms_per_granule']}" for r in ("tape", "bucket_tape",
                                                                  "bucket"))))
    for run_name in ("tape", "bucket_tape", "bucket"):
        by = small[run_name]["cpu_ms_per_granule_by_process"]
        result["table"].append((f"  {run_name} by process",
                                ", ".join(f"{k} {v}" for k, v in by.items())))
    return result
