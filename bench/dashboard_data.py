"""What the dashboard benchmark loads: a year of per-minute transfers with their roll-ups, and an
archive in full work (two silos of eight drives, thousands of volumes, a busy cache, queued,
running and failed requests, ingest requests with failed granules).

Rows go in with COPY on PostgreSQL (executemany elsewhere) with ids chosen here, into a fresh
database. The roll-ups are computed by rollup.tally, the function record_transfers uses, one
day of records at a time (no record spans midnight), so they are exactly what production would
have built from the same records.
"""
import hashlib
import json
import math
import random
from datetime import datetime, timedelta

from django.core.management.color import no_style
from django.db import connection, transaction

from backend.metrics import rollup

DIRECTIONS = ("ingest", "migrate", "recall", "distribution")
# Bytes per day around which each direction varies: the GSFC baseline (1 TB in, 2 TB out) with
# two tape copies of everything ingested and a recall load for the orders.
DAILY_BYTES = {"ingest": 1.1e12, "migrate": 2.2e12, "recall": 0.5e12, "distribution": 1.9e12}
COLLECTIONS = [  # (short name, version, family: its volume groups, share of the bytes)
    ("MOD021KM", "061", "modis", 5), ("MYD021KM", "061", "modis", 4),
    ("MOD10C1", "061", "modis", 1), ("GHRSST_OISST_L4", "2.1", "ocean", 2),
    ("AIRS2RET_NRT", "7.0", "atmos", 2), ("OMI_AURA_L2", "003", "atmos", 1),
]
FAMILIES = ("modis", "ocean", "atmos")
# (cadence s, latency target s) each collection declares: the overview's worst collections
# judge a week of every one's granules against them
CADENCES = {"MOD021KM": (300, 4 * 3600), "MYD021KM": (300, 4 * 3600),
            "MOD10C1": (86400, 4 * 3600), "GHRSST_OISST_L4": (86400, 4 * 3600),
            "AIRS2RET_NRT": (360, 3 * 3600), "OMI_AURA_L2": (5940, 4 * 3600)}
FAILURES = [
    "drive silo2-d8: injected read fault", "read-back checksum mismatch on copy 2",
    "volume B00417 is suspect: 3 read errors", "no scratch volume left in group backup-ocean",
    "recall timed out waiting for a drive (2 h)",
]
INGEST_FAILURES = [
    ("CHECKSUM_VERIFICATION_FAILURE", "MD5 of the staged file differs from the PDR's"),
    ("FILE_SIZE_MISMATCH", "the staged file has fewer bytes than declared"),
    ("MISSING_FILE", "the file named in the PDR is not in the staging area"),
    ("METADATA_PREPROCESSING_ERROR", "the .met file has no RangeBeginningDate"),
]


def insert(model, fields, rows):
    """Insert plain tuples fast: COPY on PostgreSQL, executemany elsewhere; returns the count."""
    qn = connection.ops.quote_name
    table = qn(model._meta.db_table)
    columns = ", ".join(qn(model._meta.get_field(f).column) for f in fields)
    count = 0
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
                    count += 1
            return count
        adapt = connection.ops.adapt_datetimefield_value
        sql = f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"
        batch = []
        for row in rows:
            batch.append([adapt(v) if isinstance(v, datetime) else v for v in row])
            if len(batch) == 5000:
                cursor.executemany(sql, batch)
                count, batch = count + len(batch), []
        if batch:
            cursor.executemany(sql, batch)
            count += len(batch)
    return count


def reset_sequences(*models):
    """After inserting rows with chosen ids, new rows (made by the app) get the next ones."""
    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_sql(no_style(), models):
            cursor.execute(sql)


def rate_factor(moment, direction, rng):
    """How busy a minute is: a day/night swing peaking mid-afternoon UTC, quieter weekends for
    ingest, noise."""
    hour = moment.hour + moment.minute / 60
    swing = 1 + 0.4 * math.sin(2 * math.pi * (hour - 9) / 24)
    weekend = 0.7 if direction == "ingest" and moment.weekday() >= 5 else 1.0
    return swing * weekend * rng.uniform(0.6, 1.4)


def day_transfers(day, until, collections, rng):
    """One record per minute and direction from `day` (UTC midnight) to `until` (exclusive):
    [(direction, collection id, collection key, bytes, started_at, ended_at)].

    Some hours are outages (nothing moved), so the charts have the gaps real archives have.
    """
    ids = [c.pk for c in collections]
    keys = [c.key for c in collections]
    weights = [share for *_, share in COLLECTIONS]
    outages = {(d, rng.randrange(24)) for d in DIRECTIONS if rng.random() < 0.08}
    out = []
    minute = day
    while minute < until and minute < day + timedelta(days=1):
        for direction in DIRECTIONS:
            if (direction, minute.hour) in outages:
                continue
            nbytes = int(DAILY_BYTES[direction] / 1440 * rate_factor(minute, direction, rng))
            i = rng.choices(range(len(ids)), weights)[0]
            started = minute + timedelta(seconds=rng.uniform(0, 20))
            ended = started + timedelta(seconds=rng.uniform(5, 39))
            out.append((direction, ids[i], keys[i], nbytes, started, ended))
        minute += timedelta(minutes=1)
    return out


def declare_cadences():
    """Give the bench collections their cadences and latency targets (also on a database an
    earlier run loaded)."""
    from backend.catalog.models import Collection

    for short_name, (cadence, latency) in CADENCES.items():
        Collection.objects.filter(short_name=short_name).update(
            cadence_seconds=cadence, latency_target_seconds=latency)


def load_transfers(days, now, collections, seed=7):
    """A year (or `days`) of per-minute records up to `now`, with roll-ups; returns counts."""
    from backend.metrics.models import TransferRecord, TransferRollup

    rng = random.Random(seed)
    first = rollup.floor(now, rollup.DAY) - timedelta(days=days - 1)
    until = rollup.floor(now, rollup.MINUTE)
    records = rollups = 0
    day = first
    while day < until:
        rows = day_transfers(day, until, collections, rng)
        sums = rollup.tally((d, key, b, s, e) for d, _, key, b, s, e in rows)
        with transaction.atomic():
            records += insert(TransferRecord, ["direction", "collection", "bytes", "started_at",
                                               "ended_at"],
                              ((d, cid, b, s, e) for d, cid, _, b, s, e in rows))
            rollups += insert(TransferRollup, ["period", "start", "direction", "collection",
                                               "bytes", "transfers"],
                              ((p, start, d, key, b, n)
                               for (p, start, d, key), (b, n) in sums.items()))
        day += timedelta(days=1)
    return {"records": records, "rollup_rows": rollups}


def make_collections():
    """The collections, their providers and two-copy policies in per-family volume groups."""
    from backend.accounts.models import Provider
    from backend.archive import operations
    from backend.archive.models import DriveModel, Silo, VolumeGroup
    from backend.catalog.models import Collection

    media, _ = DriveModel.objects.get_or_create(name="LTO-9 (emulated)", defaults={
        "rate_mb_s": 400, "mount_s_min": 10, "mount_s_max": 20, "unmount_s": 15,
        "position_s_per_gb": 0.3, "capacity_bytes": 18 * 10**12})
    silos = [Silo.objects.create(name=name, slots=6000) for name in ("silo1", "silo2")]
    groups = {}
    for family in FAMILIES:
        for role, silo in (("primary", silos[0]), ("backup", silos[1])):
            groups[family, role] = VolumeGroup.objects.create(
                name=f"{role}-{family}", role=role, silo=silo)
    providers = {"modis": "MODAPS", "ocean": "PODAAC_SIPS", "atmos": "GES_DISC_SIPS"}
    providers = {f: Provider.objects.create(name=n, title=n) for f, n in providers.items()}
    collections = []
    for short_name, version, family, _ in COLLECTIONS:
        c = Collection.objects.create(short_name=short_name, version=version,
                                      title=f"{short_name} (bench)")
        operations.set_policy(c, [groups[family, "primary"], groups[family, "backup"]])
        providers[family].collections.add(c)
        collections.append(c)
    declare_cadences()
    return {"media": media, "silos": silos, "groups": groups, "providers": providers,
            "collections": collections,
            "group_silo": {g.pk: g.silo_id for g in groups.values()}}


def fresh_count(files, days):
    """Granules still waiting for tape: a week of ingest (at most a fiftieth of them)."""
    return max(1, min(files // 50, files * 7 // max(days, 1)))


def load_archive(world, now, files, volumes_per_silo, days=365, seed=11):
    """Granules with one file each (arriving over `days`), volumes, drives, the cache,
    requests and ingest history."""
    rng = random.Random(seed)
    counts = {}
    counts.update(_volumes_and_drives(world, now, volumes_per_silo, rng))
    counts.update(_catalog_cache_requests(world, now, files, days, rng))
    counts.update(_ingest_history(world, now, files, rng))
    return counts


def _volumes_and_drives(world, now, per_silo, rng):
    from backend.archive.models import Drive, Volume

    media, cap = world["media"], world["media"].capacity_bytes
    rows, vid = [], 0
    world["filling"], world["full"] = {}, {}
    for s, silo in enumerate(world["silos"]):
        role = ("primary", "backup")[s]
        for n in range(per_silo):
            vid += 1
            label = f"{'AB'[s]}{n + 1:05d}"
            family = FAMILIES[n % 3] if n < per_silo * 0.7 else None
            group = world["groups"][family, role] if family else None
            if group is None:
                state, used = "scratch", 1024
            elif n < 3 * 3:
                state, used = "filling", int(cap * rng.uniform(0.1, 0.9))
                world["filling"].setdefault(group.pk, []).append(vid)
            else:
                state = rng.choices(["full", "read_only", "suspect", "retired"],
                                    [96, 2, 1, 1])[0]
                used = int(cap * rng.uniform(0.93, 1.0))
                world["full"].setdefault(group.pk, []).append(vid)
            live = int(used * rng.uniform(0.4, 1.0)) if group else 0
            rows.append((vid, label, silo.pk, media.pk, group.pk if group else None, state, cap,
                         used, live, live // 300_000_000, rng.randrange(1, 400),
                         now - timedelta(hours=rng.uniform(1, 2000)), "bad" if state == "suspect"
                         else "", "media errors (seeded)" if state == "suspect" else "",
                         now - timedelta(days=rng.uniform(30, 900))))
    insert(Volume, ["id", "label", "silo", "media", "group", "state", "capacity_bytes",
                    "end_of_data", "live_bytes", "file_count", "mount_count", "last_dismounted_at",
                    "fault", "state_reason", "created_at"], rows)
    reset_sequences(Volume)
    filling = [v for ids in world["filling"].values() for v in ids]
    plans = ["writing", "writing", "writing", "reading", "reading", "mounting", "idle", "offline"]
    for s, silo in enumerate(world["silos"]):
        full = rng.sample([v for g, ids in world["full"].items() for v in ids
                           if world["group_silo"][g] == silo.pk], 3)
        for d, state in enumerate(plans):
            mounted = None
            if state == "writing":
                mounted = filling.pop(0) if s == 0 else filling.pop()
            elif state in ("reading", "mounting"):
                mounted = full.pop()
            Drive.objects.create(
                name=f"{silo.name}-d{d + 1}", silo=silo, model=world["media"], state=state,
                mode={"writing": "write", "reading": "read"}.get(state, ""),
                mounted_volume_id=mounted, mounted_at=now - timedelta(minutes=d * 7 + 3)
                if mounted else None, last_used_at=now - timedelta(seconds=d * 40),
                current_rate_b_s=rng.uniform(250e6, 390e6) if state in ("writing", "reading")
                else 0, error_count=rng.randrange(0, 4) if state != "offline" else 9,
                consecutive_errors=3 if state == "offline" else 0,
                last_error="read fault at block 88112" if state == "offline" else "",
                offline_reason="3 errors in a row: cleaning cartridge due"
                if state == "offline" else "")
    return {"volumes": vid, "drives": Drive.objects.count()}


def _catalog_cache_requests(world, now, files, days, rng):
    """Granules (one file each), cache entries and the archive requests a year leaves."""
    from backend.archive.models import ArchiveRequest, CacheEntry
    from backend.catalog.models import File, Granule

    collections = world["collections"]
    weights = [share for *_, share in COLLECTIONS]
    family_of = {c.pk: COLLECTIONS[i][2] for i, c in enumerate(collections)}
    span = timedelta(days=days)
    granules, file_rows, cache, requests = [], [], [], []
    world["granules"] = []
    rid = 0
    queued_migrate = fresh_count(files, days)
    for gid in range(1, files + 1):
        c = collections[rng.choices(range(len(collections)), weights)[0]]
        created = now - span * (1 - gid / files)
        fresh = gid > files - queued_migrate         # the newest still wait for tape
        size = rng.randint(20, 600) * 10**6
        name = f"{c.short_name}.A{created:%Y%j.%H%M}.{gid:07d}.hdf"
        granules.append((gid, c.pk, name[:-4], 1, "archiving" if fresh else "archived",
                         created - timedelta(hours=3), created - timedelta(hours=2, minutes=55),
                         -180.0, -90.0, 180.0, 90.0, "{}", size, created, created,
                         None if fresh else created + timedelta(minutes=20)))
        file_rows.append((gid, gid, name, "data", size, "MD5",
                          hashlib.md5(name.encode()).hexdigest()))
        world["granules"].append((gid, c, name, size, created, fresh))
        family = family_of[c.pk]
        groups = (world["groups"][family, "primary"], world["groups"][family, "backup"])
        if fresh:
            cache.append((gid, "dirty", False, size, created, None, created))
            for copy, group in enumerate(groups, start=1):
                rid += 1
                running = gid > files - 3 * len(FAMILIES) and copy == 1
                requests.append(_request(rid, "migrate", "running" if running else "queued", 2,
                                         gid, copy, group.pk, None, size, created, rng, now))
            continue
        for copy, group in enumerate(groups, start=1):
            rid += 1
            requests.append(_request(rid, "migrate", "done", 2, gid, copy, group.pk,
                                     None, size, created, rng, now))
        roll = rng.random()
        if roll < 0.25:
            state = "pinned" if roll < 0.005 else "clean"
            cache.append((gid, state, state == "pinned", size,
                          now - timedelta(hours=rng.uniform(0, 24 * 30)), None, created))
        elif roll < 0.33:                      # recalled for an order: done, waiting, failed
            full = world["full"].get(groups[0].pk) or [None]
            volume = full[rng.randrange(len(full))]
            state = rng.choices(["done", "queued", "running", "failed"], [80, 17, 1, 2])[0]
            rid += 1
            requests.append(_request(rid, "recall", state, 1, gid, 1, groups[0].pk, volume,
                                     size, now - timedelta(hours=rng.uniform(0, 72)), rng, now))
            if state == "done":
                cache.append((gid, "clean", False, size, now - timedelta(hours=rng.uniform(0, 48)),
                              None, now - timedelta(hours=rng.uniform(0, 72))))
    for gid in range(1, 60):                     # failed migrations, retried in vain
        rid += 1
        g = world["granules"][-gid]
        group = world["groups"][family_of[g[1].pk], "backup"]
        requests.append(_request(rid, "migrate", "failed", 2, g[0], 2, group.pk, None, g[3],
                                 g[4], rng, now))
    for n in range(40):
        rid += 1
        requests.append(_request(rid, "audit", "queued", 3, rng.randrange(1, files), 1, None,
                                 None, 0, now - timedelta(minutes=n), rng, now))
    insert(Granule, ["id", "collection", "granule_id", "version", "state", "temporal_start",
                     "temporal_end", "west", "south", "east", "north", "attributes", "total_size",
                     "created_at", "updated_at", "archived_at"], granules)
    insert(File, ["id", "granule", "name", "role", "size", "checksum_type", "checksum"],
           file_rows)
    insert(CacheEntry, ["file", "state", "pinned", "size", "last_access", "keep_until",
                        "created_at", "checked"], [row + ("",) for row in cache])
    insert(ArchiveRequest, ["id", "kind", "state", "priority", "file", "copy_number",
                            "volume_group", "volume", "drive", "bytes_total", "bytes_done",
                            "attempts", "error", "created_at", "started_at", "finished_at",
                            "share"], [row + ("",) for row in requests])
    reset_sequences(Granule, File, CacheEntry, ArchiveRequest)
    by_state = {}
    for r in requests:
        by_state[r[2]] = by_state.get(r[2], 0) + 1
    return {"granules": files, "granule_bytes": sum(g[3] for g in world["granules"]),
            "cache_entries": len(cache), "archive_requests": len(requests),
            "archive_requests_by_state": by_state}


def _request(rid, kind, state, priority, file_id, copy, group, volume, size, created, rng, now):
    started = finished = None
    done, error, attempts = 0, "", 0
    if state in ("running", "done", "failed"):
        started = min(now, created + timedelta(minutes=rng.uniform(1, 30)))
        attempts = 1
    if state == "running":
        done = int(size * rng.uniform(0.05, 0.95))
    if state == "done":
        done, finished = size, started + timedelta(seconds=size / 3e8 + 20)
    if state == "failed":
        attempts, error = 3, rng.choice(FAILURES)
        finished = started + timedelta(minutes=rng.uniform(1, 90))
    return (rid, kind, state, priority, file_id, copy, group, volume, None, size, done,
            attempts, error, created, started, finished)


def _pdr(name, provider, granules):
    lines = [f"ORIGINATING_SYSTEM = {provider};", f"TOTAL_FILE_COUNT = {len(granules)};",
             "EXPIRATION_TIME = 2099-01-10T12:00:00Z;"]
    for _, c, fname, size, created, _ in granules:
        lines += ["OBJECT = FILE_GROUP;", f"  DATA_TYPE = {c.short_name};",
                  f"  DATA_VERSION = {c.version};", "  NODE_NAME = sips.example.org;",
                  f"  BEGINNING_DATE/TIME = {created:%Y-%m-%dT%H:%M:%SZ};",
                  f"  ENDING_DATE/TIME = {created:%Y-%m-%dT%H:%M:%SZ};",
                  "  OBJECT = FILE_SPEC;", f"    DIRECTORY_ID = /data/{provider}/{created:%Y%j};",
                  f"    FILE_ID = {fname};", "    FILE_TYPE = SCIENCE;",
                  f"    FILE_SIZE = {size};", "    FILE_CKSUM_TYPE = MD5;",
                  f"    FILE_CKSUM_VALUE = {hashlib.md5(fname.encode()).hexdigest()};",
                  "  END_OBJECT = FILE_SPEC;", "END_OBJECT = FILE_GROUP;"]
    return "\n".join(lines) + "\n"


def _ingest_history(world, now, files, rng, per_request=13):
    """Ingest requests (PDRs with their PANs) holding every granule, some with failures."""
    from ingest.models import IngestGranule, IngestRequest, Pdr

    family_of = {c.pk: COLLECTIONS[i][2] for i, c in enumerate(world["collections"])}
    by_family = {}
    for g in world["granules"]:
        by_family.setdefault(family_of[g[1].pk], []).append(g)
    batches = [(world["providers"][family], granules[i:i + per_request])
               for family, granules in by_family.items()
               for i in range(0, len(granules), per_request)]
    batches.sort(key=lambda b: b[1][0][4])      # ids in the order the requests came
    requests, pdrs, rows = [], [], []
    gid = 0
    failing = set()
    for rid, (provider, batch) in enumerate(batches, start=1):
        created = batch[0][4] - timedelta(minutes=30)
        failed = 0
        if rid % 211 == 7:
            failed = rng.randint(1, len(batch))
            failing.add(rid)
        running = any(g[5] for g in batch)
        state = "running" if running else ("failed" if failed else "completed")
        total = sum(g[3] for g in batch)
        name = f"{provider.name}.{created:%Y%j%H%M}.PDR"
        ended = created + timedelta(minutes=40)
        # a running request counts only the granules archived yet (fresh ones are archiving)
        archived = sum(1 for position, g in enumerate(batch) if position >= failed and not g[5])
        requests.append((rid, provider.pk, "pdr", name, state, len(batch),
                         archived, failed, total, total, created, ended,
                         None if running else ended))
        text = _pdr(name, provider.name, batch)
        pan = "MESSAGE_TYPE = LONGPAN;\n" + "".join(
            f"FILE_NAME = {g[2]};\nDISPOSITION = \"SUCCESSFUL\";\n" for g in batch)
        pdrs.append((rid, provider.pk, rid, name, "", text,
                     hashlib.sha256(text.encode()).hexdigest(),
                     "accepted" if running else "answered", "" if running else "SUCCESSFUL",
                     "", "", "" if running else pan, created, created))
        for position, (cat_id, c, fname, size, made, fresh) in enumerate(batch):
            gid += 1
            bad = position < failed
            state = "failed" if bad else ("archiving" if fresh else "archived")
            disposition, reason = rng.choice(INGEST_FAILURES) if bad else ("", "")
            spec = json.dumps({"collection": c.key, "granule_id": fname[:-4],
                               "files": [{"name": fname, "size": size,
                                          "checksum_type": "MD5"}]})
            rows.append((gid, rid, position, c.key, fname[:-4], state, disposition, reason,
                         size, 0 if bad else size, spec, None if bad else cat_id,
                         not bad, 3 if bad else 1, "", None, not fresh, made, made,
                         None if bad or fresh else made + timedelta(minutes=20)))
    insert(IngestRequest, ["id", "provider", "way", "label", "state", "granule_count",
                           "archived_count", "failed_count", "bytes_total", "bytes_done",
                           "created_at", "updated_at", "finished_at"], requests)
    insert(Pdr, ["id", "provider", "request", "name", "path", "text", "text_hash", "state",
                 "disposition", "detail", "pdrd", "pan", "created_at", "updated_at"], pdrs)
    insert(IngestGranule, ["id", "request", "position", "collection_key", "granule_id", "state",
                           "disposition", "reason", "bytes_total", "bytes_done", "spec",
                           "catalog_granule", "admitted", "attempts", "lease_owner",
                           "lease_until", "staging_removed", "created_at", "updated_at",
                           "archived_at"], rows)
    reset_sequences(IngestRequest, Pdr, IngestGranule)
    return {"ingest_requests": len(requests), "ingest_granules": len(rows),
            "ingest_requests_with_failures": len(failing)}
