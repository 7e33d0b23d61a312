"""ingest-small: many granules of one 4 KB file each, through the bulk API and through PDRs,
to ARCHIVED with two verified copies; granules per second end to end for each way in.

The floors to beat: HPSS managed 1.5 small files/s, Cumulus about 11 granules/s.
"""
import hashlib
import os
import time
from datetime import UTC, datetime, timedelta

NAME = "ingest-small"
HELP = "small granules through the bulk API and PDRs to two verified copies, granules/s"
SIZE = 4096


def add_arguments(parser):
    parser.add_argument("--granules", type=int, default=10000, help="per way in")
    parser.add_argument("--pdr-granules", type=int, default=1000, help="granules per PDR")


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


def run(options):
    from . import live

    n, per_pdr = options["granules"], max(1, options["pdr_granules"])
    (collection,) = live.layout(["BENCHS"])
    token = live.provider_token("BENCHS", [collection])
    work = prepare(collection, n, per_pdr)

    with live.running(token) as web:
        idle = web.cpu_seconds()
        times = through_both(web, work)
        busy = web.cpu_seconds()
    bulk_s, bulk_accept_s = times["bulk_s"], times["bulk_accepted_s"]
    pdr_s, pdr_accept_s = times["pdr_s"], times["pdr_accepted_s"]
    cpu = {name: round(busy[name] - idle.get(name, 0), 2) for name in busy}
    archived, verified = live.archived_counts(collection)
    if archived != 2 * n or verified != 4 * n:
        raise RuntimeError(f"{archived}/{2 * n} granules archived, {verified}/{4 * n} "
                           "verified copies")
    bulk, pdr = n / bulk_s, n / pdr_s
    result = {
        "granules_per_way": n, "file_bytes": SIZE, "granules_per_pdr": per_pdr,
        "bulk_api": round(bulk, 1), "pdr": round(pdr, 1),
        "granules_per_s": round(min(bulk, pdr), 1),
        "overall_granules_per_s": round(2 * n / (bulk_s + pdr_s), 1),
        "bulk_s": round(bulk_s, 3), "bulk_accepted_s": round(bulk_accept_s, 3),
        "pdr_s": round(pdr_s, 3), "pdr_accepted_s": round(pdr_accept_s, 3),
        "cpu_s": cpu, "cpu_ms_per_granule": round(1000 * sum(cpu.values()) / (2 * n), 3),
        "cpu_ms_per_granule_by_process": {k: round(1000 * v / (2 * n), 3) for k, v in cpu.items()},
        "workers": [f"{name}: -Q {queues} {' '.join(pool)}" for name, queues, pool in live.WORKERS],
        "baselines": {"hpss_small_files_per_s": 1.5, "cumulus_granules_per_s": 11},
        "goals": {"granules_per_s": ">= 2000"},
    }
    result["table"] = [
        ("granules per way in (one 4 KB file each)", f"{n}"),
        ("bulk API -> ARCHIVED, 2 copies", f"{bulk:.1f} granules/s ({bulk_s:.2f} s, "
                                           f"accepted in {bulk_accept_s:.2f} s)"),
        (f"PDRs of {per_pdr} -> PAN, 2 copies", f"{pdr:.1f} granules/s ({pdr_s:.2f} s, "
                                                f"accepted in {pdr_accept_s:.2f} s)"),
        ("granules/s, lower of the two (goal >= 2000)", f"{result['granules_per_s']:.1f}"),
        ("CPU s used (both ways in)", ", ".join(f"{k} {v}" for k, v in cpu.items())),
        ("CPU ms per granule, all processes", f"{result['cpu_ms_per_granule']} ("
         + ", ".join(f"{k} {v}" for k, v in result["cpu_ms_per_granule_by_process"].items())
         + ")"),
        ("HPSS small files/s; Cumulus granules/s", "1.5; ~11"),
    ]
    return result
