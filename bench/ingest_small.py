"""ingest-small: many granules of one 4 KB file each, through the bulk API and through PDRs,
to ARCHIVED with two verified copies; granules per second end to end for each way in, and
CPU ms per granule of each process. Two archive policies are measured one after the other in
the same run: tape-only (both copies on tape) and object-store-first (copy 1 in an S3 bucket on
a real S3 server the run starts, copy 2 on tape); the S3 server's CPU is shown apart.

The floors to beat: HPSS managed 1.5 small files/s, Cumulus about 11 granules/s.
"""
import hashlib
import os
import secrets
import time
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

NAME = "ingest-small"
HELP = "small granules through the bulk API and PDRs to two verified copies, granules/s"
SIZE = 4096


def add_arguments(parser):
    parser.add_argument("--granules", type=int, default=10000, help="per way in")
    parser.add_argument("--pdr-granules", type=int, default=1000, help="granules per PDR")
    parser.add_argument("--policies", default="tape,object",
                        help="archive policies measured, one after the other in the same run: "
                             "tape (two tape copies), object (copy 1 in an S3 bucket on a "
                             "real S3 server, copy 2 on tape)")


def _deliver(area, folder, prefix, n):
    """n files of SIZE random bytes under area/folder: [(granule id, name, md5)]."""
    (area / folder).mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        name = f"{prefix}{i:06d}.dat"
        data = os.urandom(SIZE)
        with open(area / folder / name, "wb") as f:
            f.write(data)
        out.append((f"{prefix}{i:06d}", name, hashlib.md5(data).hexdigest()))
    return out


def _bulk_body(collection, folder, files):
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    granules = []
    for i, (granule_id, name, md5) in enumerate(files):
        start = t0 + timedelta(minutes=5 * i)
        granules.append({
            "collection": collection.key, "granule_id": granule_id,
            "temporal": {"start": start.isoformat(),
                         "end": (start + timedelta(minutes=5)).isoformat()},
            "bbox": [-10, -10, 10, 10],
            "files": [{"name": name, "path": f"{folder}/{name}", "size": SIZE,
                       "checksum_type": "MD5", "checksum": md5}]})
    return {"granules": granules}


def _pdr(collection, folder, files):
    """An S4PA-style PDR with one file group (one granule) per file."""
    lines = ["ORIGINATING_SYSTEM = BENCH;", f"TOTAL_FILE_COUNT = {len(files)};",
             "EXPIRATION_TIME = 2099-01-10T12:00:00Z;"]
    for _, name, md5 in files:
        lines += ["OBJECT = FILE_GROUP;", f"  DATA_TYPE = {collection.short_name};",
                  f"  DATA_VERSION = {collection.version};", "  NODE_NAME = bench;",
                  "  BEGINNING_DATE/TIME = 2026-01-01T00:05:00Z;",
                  "  ENDING_DATE/TIME = 2026-01-01T00:10:00Z;",
                  "  OBJECT = FILE_SPEC;", f"    DIRECTORY_ID = /{folder};",
                  f"    FILE_ID = {name};", "    FILE_TYPE = SCIENCE;",
                  f"    FILE_SIZE = {SIZE};", "    FILE_CKSUM_TYPE = MD5;",
                  f"    FILE_CKSUM_VALUE = {md5};", "  END_OBJECT = FILE_SPEC;",
                  "END_OBJECT = FILE_GROUP;"]
    return "\n".join(lines) + "\n"


def _through_bulk(web, body):
    started = time.perf_counter()
    status, answer = web.call("POST", "/api/v1/ingest/requests/", body)
    if status != 202:
        raise RuntimeError(f"the bulk request was refused ({status}): {answer}")
    accepted = time.perf_counter() - started
    last = {}

    def finished():
        last.update(web.call("GET", f"/api/v1/ingest/requests/{answer['id']}/?granules=0")[1])
        return last["state"] in ("completed", "failed")

    web.wait(finished, 3600, "the bulk request", interval=0.2)
    if last["state"] != "completed":
        raise RuntimeError(f"the bulk request ended {last['state']}: {last}")
    return time.perf_counter() - started, accepted


def _through_pdrs(web, pdrs):
    started, ids = time.perf_counter(), []
    for name, text in pdrs:
        status, answer = web.call("POST", f"/api/v1/ingest/pdrs/?name={name}", text,
                                  content_type="text/plain")
        if status != 202:
            raise RuntimeError(f"PDR {name} was refused ({status}): {answer}")
        ids.append(answer["id"])
    accepted = time.perf_counter() - started
    waiting = list(ids)

    def answered():
        while waiting:
            row = web.call("GET", f"/api/v1/ingest/pdrs/{waiting[0]}/")[1]
            if row["state"] != "answered":
                return False
            if row["disposition"] != "SUCCESSFUL":
                raise RuntimeError(f"PDR {row['name']} answered {row['disposition']}")
            waiting.pop(0)
        return True

    web.wait(answered, 3600, "the PDRs", interval=0.2)
    return time.perf_counter() - started, accepted


def prepare(collection, n, per_pdr, tag=""):
    """Deliver n files for the bulk API and n for PDRs into the staging area of the provider
    BENCHS (`tag` keeps the names of separate runs apart); what `through_both` sends."""
    from backend.accounts.models import Provider
    from ingest.services import staging_area

    area = staging_area(Provider.objects.get(name="BENCHS"))
    body = _bulk_body(collection, f"{tag}bulk", _deliver(area, f"{tag}bulk", f"{tag}B", n))
    pdr_files = _deliver(area, f"{tag}pdr", f"{tag}P", n)
    pdrs = [(f"{tag}BENCH{i // per_pdr:05d}.PDR",
             _pdr(collection, f"{tag}pdr", pdr_files[i:i + per_pdr]))
            for i in range(0, n, per_pdr)]
    return body, pdrs


def through_both(web, work):
    """Send a prepared workload through the bulk API, then through PDRs, each to ARCHIVED:
    {"bulk_s", "bulk_accepted_s", "pdr_s", "pdr_accepted_s"}."""
    body, pdrs = work
    bulk_s, bulk_accept_s = _through_bulk(web, body)
    pdr_s, pdr_accept_s = _through_pdrs(web, pdrs)
    return {"bulk_s": bulk_s, "bulk_accepted_s": bulk_accept_s, "pdr_s": pdr_s,
            "pdr_accepted_s": pdr_accept_s}


# (key, label, collection short name, copy targets): copy N goes to targets[N - 1]
POLICIES = {"tape": ("tape-only", "BENCHS", ("primary", "backup")),
            "object": ("object-store-first", "BENCHSO", ("bucket", "backup"))}
BUCKET = "ingest-small"


def _layout(keys):
    """Two silos, a bucket when a policy wants one, and a collection per policy."""
    from backend.archive import operations
    from backend.archive.models import Bucket
    from backend.catalog.models import Collection

    from . import live

    primary, backup = operations.install_layout(drives_per_silo=2, volumes_per_silo=2,
                                                model=live.media())
    targets = {"primary": primary, "backup": backup}
    if "object" in keys:
        targets["bucket"] = Bucket.objects.create(name="bench-objects", store="default",
                                                  bucket=BUCKET)
    collections = {}
    for key in keys:
        _, short_name, names = POLICIES[key]
        collections[key] = Collection.objects.create(short_name=short_name, version="1",
                                                     title="bench")
        operations.set_policy(collections[key], [targets[t] for t in names])
    return collections


@contextmanager
def _object_store(wanted):
    """A real S3 server (rclone, a loopback port) for the object-store-first policy:
    (its pid, the workers' environment); nothing when not wanted."""
    if not wanted:
        yield None, {}
        return
    from django.conf import settings

    from .s3server import S3Server

    access, secret = f"bench-{secrets.token_hex(6)}", secrets.token_hex(20)
    server = S3Server(root=settings.DATA_ROOT / "s3", access_key=access, secret_key=secret,
                      temp_dir=settings.DATA_ROOT).start()
    try:
        server.client().create_bucket(Bucket=BUCKET)
        settings.GRANARY_OBJECT_STORES = {"default": {
            "endpoint_url": server.endpoint_url, "access_key": access, "secret_key": secret,
            "region": "us-east-1"}}
        yield server.pid, {"GRANARY_S3_ENDPOINT": server.endpoint_url,
                           "GRANARY_S3_ACCESS_KEY": access, "GRANARY_S3_SECRET_KEY": secret}
    finally:
        server.stop()   # by its PID


def _check(collection, n, copies_in_bucket):
    """The brute-force check: every granule ARCHIVED with both copies verified, and the
    object-store-first policy's copy 1 in the bucket."""
    from backend.archive.models import FileCopy

    from . import live

    archived, verified = live.archived_counts(collection)
    if archived != 2 * n or verified != 4 * n:
        raise RuntimeError(f"{collection.key}: {archived}/{2 * n} granules archived, "
                           f"{verified}/{4 * n} verified copies")
    in_bucket = FileCopy.objects.filter(file__granule__collection=collection,
                                        bucket__isnull=False, copy_number=1,
                                        state=FileCopy.State.VERIFIED).count()
    if in_bucket != (2 * n if copies_in_bucket else 0):
        raise RuntimeError(f"{collection.key}: {in_bucket} verified copies in the bucket")


def _figures(n, times, cpu):
    bulk, pdr = n / times["bulk_s"], n / times["pdr_s"]
    granary = {k: v for k, v in cpu.items() if k != "s3"}
    return {
        "bulk_api": round(bulk, 1), "pdr": round(pdr, 1),
        "granules_per_s": round(min(bulk, pdr), 1),
        "overall_granules_per_s": round(2 * n / (times["bulk_s"] + times["pdr_s"]), 1),
        **{k: round(v, 3) for k, v in times.items()},
        "cpu_s": cpu, "cpu_ms_per_granule": round(1000 * sum(granary.values()) / (2 * n), 3),
        "cpu_ms_per_granule_by_process": {k: round(1000 * v / (2 * n), 3)
                                          for k, v in cpu.items()},
    }


def run(options):
    from . import live

    n, per_pdr = options["granules"], max(1, options["pdr_granules"])
    keys = [k.strip() for k in options["policies"].split(",") if k.strip()]
    if not keys or set(keys) - set(POLICIES):
        raise RuntimeError(f"--policies takes {', '.join(POLICIES)}")
    collections = _layout(keys)
    token = live.provider_token("BENCHS", list(collections.values()))
    work = {key: prepare(collections[key], n, per_pdr, "" if key == "tape" else f"{key}-")
            for key in keys}
    policies = {}
    with _object_store("object" in keys) as (s3_pid, env), live.running(token, env) as web:
        for key in keys:
            idle = web.cpu_seconds()
            s3_idle = live._cpu(s3_pid) if s3_pid else 0
            times = through_both(web, work[key])
            busy = web.cpu_seconds()
            cpu = {name: round(busy[name] - idle.get(name, 0), 2) for name in busy}
            if key == "object":
                cpu["s3"] = round(live._cpu(s3_pid) - s3_idle, 2)
            policies[key] = _figures(n, times, cpu)
    for key in keys:
        _check(collections[key], n, key == "object")
    first = policies[keys[0]]
    result = {
        "granules_per_way": n, "file_bytes": SIZE, "granules_per_pdr": per_pdr,
        **first, "policy": keys[0], "policies": policies,
        "granules_per_s_lowest": min(p["granules_per_s"] for p in policies.values()),
        "workers": [f"{name}: -Q {queues} {' '.join(pool)}" for name, queues, pool in live.WORKERS],
        "baselines": {"hpss_small_files_per_s": 1.5, "cumulus_granules_per_s": 11},
        "goals": {"granules_per_s": ">= 1800", "cpu_ms_per_granule": "<= 1.0"},
    }
    result["table"] = [("granules per way in (one 4 KB file each)", f"{n}")]
    for key, p in policies.items():
        label, _, targets = POLICIES[key]
        result["table"] += [
            (f"{label} ({' + '.join(targets)})", ""),
            ("  bulk API -> ARCHIVED, 2 copies",
             f"{p['bulk_api']:.1f} granules/s ({p['bulk_s']:.2f} s, "
             f"accepted in {p['bulk_accepted_s']:.2f} s)"),
            (f"  PDRs of {per_pdr} -> PAN, 2 copies",
             f"{p['pdr']:.1f} granules/s ({p['pdr_s']:.2f} s, "
             f"accepted in {p['pdr_accepted_s']:.2f} s)"),
            ("  granules/s, lower of the two (goal >= 1800)", f"{p['granules_per_s']:.1f}"),
            ("  CPU s used (both ways in)", ", ".join(f"{k} {v}" for k, v in p["cpu_s"].items())),
            ("  CPU ms per granule, Granary (goal <= 1.0)", f"{p['cpu_ms_per_granule']} ("
             + ", ".join(f"{k} {v}" for k, v in p["cpu_ms_per_granule_by_process"].items())
             + ")"),
        ]
    result["table"].append(("HPSS small files/s; Cumulus granules/s", "1.5; ~11"))
    return result
