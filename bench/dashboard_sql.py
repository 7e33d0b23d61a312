"""The dashboard benchmark's data made inside PostgreSQL: INSERT ... SELECT over generate_series,
with the loaded tables' secondary indexes and constraints dropped during the load and built
once after it, and foreign-key triggers off for the session (the rows are consistent by
construction). Three years of per-minute transfers and ten million granules load in minutes,
where building the rows in Python took hours.

The shapes follow dashboard_data (its Python loader stays the SQLite path and the reference):
the same collections, weights, states and failure texts. What does not grow with the archive
stays bounded, as it does in a real one: the cache holds the newest granules' share, recalls
and their failures are a few days' orders. A PDR's text is its header (the ingest lists never
read the body; at ten million granules the bodies would be gigabytes).
"""
import random
from contextlib import contextmanager
from datetime import timedelta

from django.core.management.color import no_style
from django.db import connection

from backend.archive import operations
from backend.archive.services import cache
from backend.catalog import completeness_days
from backend.catalog import counts as kept_counts
from backend.metrics import rollup

from . import dashboard_data as data

SEED = 0.11
RECENT = 200_000          # granules the cache and recalls draw from (the newest)


def _text(value):
    """A SQL string literal of a constant of ours."""
    return "'" + value.replace("'", "''") + "'"


def _exec(sql, params=None):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _one(sql, params=None):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


@contextmanager
def bulk_load(tables):
    """Drop the secondary indexes and unique constraints of `tables`, turn FK triggers off; on
    exit build them all again (one sort each instead of ten million inserts). Check
    constraints stay: checked row by row as they go in, where adding one back scans the
    table."""
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(
            "SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid) "
            "FROM pg_constraint c WHERE c.conrelid::regclass::text = ANY(%s) "
            "AND c.contype = 'u'", [list(tables)])
        constraints = cursor.fetchall()
        cursor.execute(
            "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i "
            "WHERE i.indrelid::regclass::text = ANY(%s) AND NOT i.indisprimary AND NOT EXISTS "
            "(SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)", [list(tables)])
        indexes = cursor.fetchall()
        for table, name, _ in constraints:
            cursor.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
        for name, _ in indexes:
            cursor.execute(f"DROP INDEX {name}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET maintenance_work_mem = '512MB'")
            for _, sql in indexes:
                cursor.execute(sql)
            for table, name, definition in constraints:
                cursor.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
            cursor.execute("SET session_replication_role = DEFAULT")


def _reset_sequences(*models):
    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_sql(no_style(), models):
            cursor.execute(sql)


def _collections_sql(collections):
    """VALUES rows (i, id, key, short name, family i) and the weighted pick array."""
    rows = ", ".join(
        f"({i}, {c.pk}, '{c.key}', '{c.short_name}', {data.FAMILIES.index(spec[2]) + 1})"
        for i, (c, spec) in enumerate(zip(collections, data.COLLECTIONS, strict=True), start=1))
    pick = [i for i, spec in enumerate(data.COLLECTIONS, start=1) for _ in range(spec[3])]
    return rows, f"(ARRAY[{','.join(map(str, pick))}])", len(pick)


def load_transfers(days, now, collections):
    """Per-minute records of four directions for `days` up to `now`, outage hours left empty,
    and their roll-ups by GROUP BY: no record crosses a minute (it starts in the minute's
    first 20 s and lasts at most 39 s), so each sits in one minute, hour and day, which is
    what rollup.tally gives such records."""
    from backend.metrics.models import TransferRecord, TransferRollup

    values, pick, weight = _collections_sql(collections)
    first = rollup.floor(now, rollup.DAY) - timedelta(days=days - 1)
    until = rollup.floor(now, rollup.MINUTE)
    directions = ", ".join(f"({i}, '{d}', {data.DAILY_BYTES[d]})"
                           for i, d in enumerate(data.DIRECTIONS, start=1))
    records, rollups = TransferRecord._meta.db_table, TransferRollup._meta.db_table
    with bulk_load([records, rollups]):
        _one("SELECT setseed(%s)", [SEED])
        _exec("CREATE TEMP TABLE bench_outage AS SELECT d.name, day, floor(random() * 24) "
              "AS hour FROM generate_series(%s::timestamptz, %s, '1 day') day CROSS JOIN "
              f"(VALUES {directions}) d(i, name, daily) WHERE random() < 0.08",
              [first, until])
        _exec(f"""
            INSERT INTO {records} (direction, collection_id, bytes, started_at, ended_at)
            SELECT name, c.id, b, s, s + make_interval(secs => 5 + random() * 34)
            FROM (SELECT d.name, m, {pick}[1 + floor(random() * {weight})::int] AS ci,
                    floor(d.daily / 1440
                          * (1 + 0.4 * sin(2 * pi() * (extract(hour from m)
                                                       + extract(minute from m) / 60 - 9) / 24))
                          * CASE WHEN d.name = 'ingest' AND extract(isodow from m) >= 6
                                 THEN 0.7 ELSE 1 END
                          * (0.6 + 0.8 * random()))::bigint AS b,
                    m + make_interval(secs => random() * 20) AS s
                  FROM generate_series(%s::timestamptz, %s::timestamptz - interval '1 minute',
                                       '1 minute') m
                  CROSS JOIN (VALUES {directions}) d(i, name, daily)
                  WHERE NOT EXISTS (SELECT 1 FROM bench_outage o WHERE o.name = d.name
                                    AND o.day = date_trunc('day', m)
                                    AND o.hour = extract(hour from m))) r
            JOIN (VALUES {values}) c(i, id, key, short, fam) ON c.i = r.ci""",
              [first, until])
        _exec("DROP TABLE bench_outage")
        n_records = _one(f"SELECT count(*) FROM {records}")[0]
        n_rollups = 0
        for period in rollup.PERIODS:
            n_rollups += _exec(f"""
                INSERT INTO {rollups} (period, start, direction, collection, bytes, transfers)
                SELECT %s, date_trunc(%s, r.ended_at), r.direction, c.key, sum(r.bytes),
                       count(*)
                FROM {records} r JOIN (VALUES {values}) c(i, id, key, short, fam)
                  ON c.id = r.collection_id
                GROUP BY 2, 3, 4""", [period, period])
    return {"records": n_records, "rollup_rows": n_rollups}


def load_archive(world, now, files, volumes_per_silo, days):
    """Volumes and drives (dashboard_data's, they are few), then granules with one file each,
    the cache, archive requests and the ingest history, in SQL; returns counts."""
    from backend.archive.models import ArchiveRequest, CacheEntry
    from backend.catalog.models import File, Granule
    from ingest.models import IngestGranule, IngestRequest, Pdr

    counts = data._volumes_and_drives(world, now, volumes_per_silo, random.Random(11))
    models = (Granule, File, CacheEntry, ArchiveRequest, IngestRequest, Pdr, IngestGranule)
    with bulk_load([m._meta.db_table for m in models]):
        _one("SELECT setseed(%s)", [SEED])
        _family_table(world)
        counts.update(_granules(world, now, files, days))
        counts.update(_requests(world, now, files, days))
        counts.update(_ingest(world, files, days))
        _exec("DROP TABLE bench_family")
        _exec("DROP TABLE bench_roll")
    _reset_sequences(*models)
    kept_counts.rebuild()              # the triggers that keep these were off for the load
    completeness_days.rebuild()
    cache.rebuild_totals()
    operations.rebuild_queue_totals()
    return counts


def _family_table(world):
    """bench_family: each collection with its family's groups and full primary volumes."""
    values, _, _ = _collections_sql(world["collections"])
    rows = []
    for family in data.FAMILIES:
        primary, backup = world["groups"][family, "primary"], world["groups"][family, "backup"]
        full = world["full"].get(primary.pk) or []
        volumes = "ARRAY[" + ",".join(map(str, full)) + "]::bigint[]"
        provider = world["providers"][family]
        rows.append(f"({data.FAMILIES.index(family) + 1}, {primary.pk}, {backup.pk}, "
                    f"{volumes}, {provider.pk}, '{provider.name}')")
    _exec(f"""CREATE TEMP TABLE bench_family AS
              SELECT c.*, f.primary_group, f.backup_group, f.full_volumes, f.provider,
                     f.provider_name
              FROM (VALUES {values}) c(i, id, key, short, fam)
              JOIN (VALUES {", ".join(rows)}) f(fam, primary_group, backup_group,
                                                 full_volumes, provider, provider_name)
                ON c.fam = f.fam""")


def _granules(world, now, files, days):
    from backend.archive.models import CacheEntry
    from backend.catalog.models import File, Granule

    _, pick, weight = _collections_sql(world["collections"])
    archived = files - data.fresh_count(files, days)
    span = days * 86400
    _exec(f"""
        INSERT INTO {Granule._meta.db_table} (id, collection_id, granule_id, version, state,
            temporal_start, temporal_end, west, south, east, north, attributes, total_size,
            created_at, updated_at, archived_at)
        SELECT g, f.id, f.short || '.A' || to_char(t, 'YYYYDDD.HH24MI') || '.'
                        || lpad(g::text, 8, '0'), 1,
               CASE WHEN g > %(archived)s THEN 'archiving' ELSE 'archived' END,
               t - interval '3 hours', t - interval '2 hours 55 minutes', -180, -90, 180, 90,
               '{{}}', size, t, t,
               CASE WHEN g > %(archived)s THEN NULL ELSE t + interval '20 minutes' END
        FROM (SELECT g, %(now)s::timestamptz
                        - make_interval(secs => %(span)s * (1 - g::float8 / %(n)s)) AS t,
                     (20 + floor(random() * 581))::bigint * 1000000 AS size,
                     {pick}[1 + (g * 7919) %% {weight}] AS ci
              FROM generate_series(1, %(n)s::bigint) g) s
        JOIN bench_family f ON f.i = s.ci
        ORDER BY g""", {"archived": archived, "now": now, "span": span, "n": files})
    _exec(f"""
        INSERT INTO {File._meta.db_table} (id, granule_id, name, role, size, checksum_type,
                                           checksum)
        SELECT id, id, granule_id || '.hdf', 'data', total_size, 'MD5',
               md5(granule_id || '.hdf')
        FROM {Granule._meta.db_table} ORDER BY id""")
    # the newest archived granules roll once: cached (a quarter), recalled (8 %) or neither
    _exec("""CREATE TEMP TABLE bench_roll AS
             SELECT g, random() AS roll, random() AS pick, random() AS age
             FROM generate_series(greatest(1, %s - %s + 1), %s) g""",
          [archived, RECENT, archived])
    cache = CacheEntry._meta.db_table
    granules = Granule._meta.db_table
    n = _exec(f"""
        INSERT INTO {cache} (file_id, state, pinned, size, last_access, keep_until, created_at,
                             checked)
        SELECT id, 'dirty', false, total_size, created_at, NULL, created_at, ''
        FROM {granules} WHERE id > %s""", [archived])
    n += _exec(f"""
        INSERT INTO {cache} (file_id, state, pinned, size, last_access, keep_until, created_at,
                             checked)
        SELECT r.g, CASE WHEN r.roll < 0.005 THEN 'pinned' ELSE 'clean' END, r.roll < 0.005,
               g.total_size, %s::timestamptz - r.age * CASE WHEN r.roll < 0.25
                   THEN interval '30 days' ELSE interval '48 hours' END, NULL, g.created_at, ''
        FROM bench_roll r JOIN {granules} g ON g.id = r.g
        WHERE r.roll < 0.25 OR (r.roll < 0.33 AND r.pick < 0.80)""", [now])
    total = _one(f"SELECT sum(total_size) FROM {granules}")[0]
    return {"granules": files, "granule_bytes": int(total), "cache_entries": n}


def _requests(world, now, files, days):
    """Archive requests: two done migrations per archived granule, two queued (a few
    running) per fresh one, recalls of the newest, failed migrations, queued audits."""
    from backend.archive.models import ArchiveRequest
    from backend.catalog.models import Granule

    granules = Granule._meta.db_table
    archived = files - data.fresh_count(files, days)
    params = {"now": now, "archived": archived, "files": files}
    migrations = f"""
        SELECT g.id AS file, cp.copy, CASE cp.copy WHEN 1 THEN f.primary_group
                                                   ELSE f.backup_group END AS grp,
               NULL::bigint AS vol, g.total_size AS s, g.created_at AS c
        FROM {granules} g JOIN bench_family f ON f.id = g.collection_id
        CROSS JOIN (VALUES (1), (2)) cp(copy)"""
    n = _insert_requests("migrate", "done", 2, migrations + " WHERE g.id <= %(archived)s",
                         params)
    running = "g.id > %(files)s - 9 AND cp.copy = 1"
    n += _insert_requests("migrate", "queued", 2, migrations
                          + f" WHERE g.id > %(archived)s AND NOT ({running})", params)
    n += _insert_requests("migrate", "running", 2, migrations + f" WHERE {running}", params)
    n += _insert_requests("migrate", "failed", 2, migrations
                          + " WHERE g.id > %(files)s - 59 AND cp.copy = 2", params)
    for state, low, high in (("done", 0, 0.80), ("queued", 0.80, 0.97),
                             ("running", 0.97, 0.98), ("failed", 0.98, 1.01)):
        n += _insert_requests("recall", state, 1, f"""
            SELECT g.id AS file, 1 AS copy, f.primary_group AS grp,
                   f.full_volumes[1 + g.id %% cardinality(f.full_volumes)] AS vol,
                   g.total_size AS s, %(now)s::timestamptz - r.age * interval '72 hours' AS c
            FROM bench_roll r JOIN {granules} g ON g.id = r.g
            JOIN bench_family f ON f.id = g.collection_id
            WHERE r.roll >= 0.25 AND r.roll < 0.33 AND r.pick >= {low} AND r.pick < {high}""",
                              params)
    n += _insert_requests("audit", "queued", 3, """
        SELECT 1 + floor(random() * (%(files)s - 1))::bigint AS file, 1 AS copy,
               NULL::bigint AS grp, NULL::bigint AS vol, 0::bigint AS s,
               %(now)s::timestamptz - k * interval '1 minute' AS c
        FROM generate_series(0, 39) k""", params)
    by_state = dict(_all(f"SELECT state, count(*) FROM {ArchiveRequest._meta.db_table} "
                         "GROUP BY state"))
    return {"archive_requests": n, "archive_requests_by_state": by_state}


# (started, bytes_done, attempts, error, finished) of a request in each state, from its
# created c, size s and a uniform u: what dashboard_data._request makes
_STARTED = "least(%(now)s::timestamptz, c + make_interval(secs => 60 + u * 1740))"
_SHAPES = {
    "done": f"{_STARTED}, s, 1, '', {_STARTED} + make_interval(secs => s / 3e8 + 20)",
    "queued": "NULL::timestamptz, 0::bigint, 0, '', NULL::timestamptz",
    "running": f"{_STARTED}, (s * (0.05 + 0.9 * u))::bigint, 1, '', NULL::timestamptz",
    "failed": f"{_STARTED}, 0::bigint, 3, (ARRAY[{', '.join(map(_text, data.FAILURES))}])"
              f"[1 + floor(u * {len(data.FAILURES)})::int], "
              f"{_STARTED} + make_interval(secs => 60 + u * 5340)",
}


def _insert_requests(kind, state, priority, source, params):
    """Archive requests of one kind and state for the rows (file, copy, grp, vol, s, c) of
    `source`."""
    from backend.archive.models import ArchiveRequest

    return _exec(f"""
        INSERT INTO {ArchiveRequest._meta.db_table} (kind, state, priority, file_id, copy_number,
            volume_group_id, volume_id, bytes_total, bytes_done, attempts, error, created_at,
            started_at, finished_at, share)
        SELECT '{kind}', '{state}', {priority}, file, copy, grp, vol, s, y.done, y.attempts,
               y.error, c, y.started, y.finished, ''
        FROM (SELECT src.*, random() AS u FROM ({source}) src) x,
        LATERAL (SELECT {_SHAPES[state]}) y(started, done, attempts, error, finished)""", params)


def _all(sql, params=None):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _ingest(world, files, days):
    """Ingest requests of 13 granules of a family each, in the order they came, one in 211
    with failed granules; a PDR (its header) and a PAN each; an ingest row per granule."""
    from backend.catalog.models import Granule
    from ingest.models import IngestGranule, IngestRequest, Pdr

    granules = Granule._meta.db_table
    archived = files - data.fresh_count(files, days)
    per = 13
    _exec(f"""CREATE TEMP TABLE bench_member AS
              SELECT g.id, g.granule_id, g.total_size, g.created_at, g.id > %s AS fresh,
                     f.fam, f.key, f.provider, f.provider_name,
                     (row_number() OVER (PARTITION BY f.fam ORDER BY g.id) - 1) AS rn
              FROM {granules} g JOIN bench_family f ON f.id = g.collection_id""", [archived])
    _exec(f"""CREATE TEMP TABLE bench_batch AS
              SELECT row_number() OVER (ORDER BY first) AS rid, b.*
              FROM (SELECT fam, rn / {per} AS b, min(id) AS first, count(*) AS n,
                           sum(total_size) AS bytes, bool_or(fresh) AS running,
                           min(created_at) - interval '30 minutes' AS created,
                           min(provider) AS provider, min(provider_name) AS provider_name
                    FROM bench_member GROUP BY fam, rn / {per}) b""")
    _exec("ALTER TABLE bench_batch ADD COLUMN failed int NOT NULL DEFAULT 0")
    _exec("UPDATE bench_batch SET failed = 1 + floor(random() * n) WHERE rid % 211 = 7")
    # a running request counts only the granules archived yet (fresh ones are archiving)
    _exec("ALTER TABLE bench_batch ADD COLUMN archived int")
    _exec(f"""UPDATE bench_batch b SET archived = a.n
              FROM (SELECT c.rid, count(*) FILTER (WHERE m.rn % {per} >= c.failed
                                                  AND NOT m.fresh) AS n
                    FROM bench_member m JOIN bench_batch c
                         ON c.fam = m.fam AND c.b = m.rn / {per} GROUP BY c.rid) a
              WHERE a.rid = b.rid""")
    requests = _exec(f"""
        INSERT INTO {IngestRequest._meta.db_table} (id, provider_id, way, label, state,
            granule_count, archived_count, failed_count, bytes_total, bytes_done, created_at,
            updated_at, finished_at)
        SELECT rid, provider, 'pdr', provider_name || '.' || to_char(created, 'YYYYDDDHH24MI')
                                     || '.PDR',
               CASE WHEN running THEN 'running' WHEN failed > 0 THEN 'failed'
                    ELSE 'completed' END,
               n, archived, failed, bytes, bytes, created, created + interval '40 minutes',
               CASE WHEN running THEN NULL ELSE created + interval '40 minutes' END
        FROM bench_batch ORDER BY rid""")
    _exec(f"""
        INSERT INTO {Pdr._meta.db_table} (id, provider_id, request_id, name, path, text,
            text_hash, state, disposition, detail, pdrd, pan, created_at, updated_at)
        SELECT rid, provider, rid, name, '', text, encode(sha256(convert_to(text, 'UTF8')),
                                                          'hex'),
               CASE WHEN running THEN 'accepted' ELSE 'answered' END,
               CASE WHEN running THEN '' ELSE 'SUCCESSFUL' END, '', '',
               CASE WHEN running THEN '' ELSE 'MESSAGE_TYPE = SHORTPAN;' || chr(10)
                    || 'DISPOSITION = "SUCCESSFUL";' || chr(10) END, created, created
        FROM (SELECT *, provider_name || '.' || to_char(created, 'YYYYDDDHH24MI') || '.PDR'
                        AS name,
                     'ORIGINATING_SYSTEM = ' || provider_name || ';' || chr(10)
                     || 'TOTAL_FILE_COUNT = ' || n || ';' || chr(10)
                     || 'EXPIRATION_TIME = 2099-01-10T12:00:00Z;' || chr(10)
                     || '/* request ' || rid || ' */' || chr(10) AS text
              FROM bench_batch) b ORDER BY rid""")
    codes = ", ".join(_text(code) for code, _ in data.INGEST_FAILURES)
    texts = ", ".join(_text(text) for _, text in data.INGEST_FAILURES)
    rows = _exec(f"""
        INSERT INTO {IngestGranule._meta.db_table} (request_id, position, collection_key,
            granule_id, state, disposition, reason, bytes_total, bytes_done, spec,
            catalog_granule_id, admitted, attempts, lease_owner, lease_until, staging_removed,
            created_at, updated_at, archived_at)
        SELECT b.rid, pos, m.key, m.granule_id,
               CASE WHEN bad THEN 'failed' WHEN m.fresh THEN 'archiving' ELSE 'archived' END,
               CASE WHEN bad THEN (ARRAY[{codes}])[k] ELSE '' END,
               CASE WHEN bad THEN (ARRAY[{texts}])[k] ELSE '' END,
               m.total_size, CASE WHEN bad THEN 0 ELSE m.total_size END,
               jsonb_build_object('collection', m.key, 'granule_id', m.granule_id,
                                  'files', jsonb_build_array(jsonb_build_object(
                                      'name', m.granule_id || '.hdf', 'size', m.total_size,
                                      'checksum_type', 'MD5'))),
               CASE WHEN bad THEN NULL ELSE m.id END, NOT bad, CASE WHEN bad THEN 3 ELSE 1 END,
               '', NULL, NOT m.fresh, m.created_at, m.created_at,
               CASE WHEN bad OR m.fresh THEN NULL ELSE m.created_at + interval '20 minutes' END
        FROM bench_member m JOIN bench_batch b ON b.fam = m.fam AND b.b = m.rn / {per},
        LATERAL (SELECT m.rn % {per} AS pos) p,
        LATERAL (SELECT p.pos < b.failed AS bad,
                        1 + floor(random() * {len(data.INGEST_FAILURES)})::int AS k) y
        ORDER BY b.rid, pos""")
    failing = _one("SELECT count(*) FROM bench_batch WHERE failed > 0")[0]
    _exec("DROP TABLE bench_member")
    _exec("DROP TABLE bench_batch")
    return {"ingest_requests": requests, "ingest_granules": rows,
            "ingest_requests_with_failures": failing}
