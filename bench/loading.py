"""Loading synthetic granules fast: COPY on PostgreSQL, bulk_create in big batches elsewhere.

The rows are what ingest would have left behind for archived granules (state ARCHIVED, two
files each); the archive tier is not involved, since the benchmarks that load this many
measure searching and matching, not archiving. load_synthetic loads a whole synthetic catalog
into empty tables: on PostgreSQL made in SQL from its columns, with the tables' indexes and
constraints dropped and rebuilt after (one sort per index instead of ten million insertions
into each).
"""
import json
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from itertools import islice

import numpy as np
from django.db import connection, transaction

from . import synthetic

GRANULE_COLUMNS = ("id", "collection_id", "granule_id", "version", "state", "temporal_start",
                   "temporal_end", "west", "south", "east", "north", "attributes", "total_size",
                   "created_at", "updated_at", "archived_at")
FILE_COLUMNS = ("id", "granule_id", "name", "role", "size", "checksum_type", "checksum")


def _next_ids():
    from backend.catalog.models import File, Granule

    last_granule = Granule.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    last_file = File.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    return last_granule + 1, last_file + 1


def load_granules(collections, items, batch=50000, on_batch=None):
    """Store synthetic granules (synthetic.SyntheticGranule, `product` indexing `collections`)
    as archived; returns their primary keys in order. `on_batch(granules)` sees each batch."""
    pks = _store([c.pk for c in collections], items, *_next_ids(), batch, on_batch)
    _after_load()
    return pks


def load_synthetic(collections, n, years, seed):
    """synthetic.granules(n, years, seed) into `collections` (one per synthetic product), the
    tables being empty. On PostgreSQL the numpy columns are COPYed in binary to a staging
    table, and the granule and file rows (ids, names, JSON, MD5s) are made from it in SQL,
    side by side, with the tables' indexes and constraints (but their primary keys) dropped
    for the load and built again after: no row passes through Python."""
    if connection.vendor != "postgresql":
        load_granules(collections, synthetic.granules(n, years, seed))
        return
    granule_pk, file_pk = _next_ids()
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {STAGE}")
        staged = ", ".join(f"{column} {kind}" for column, kind in STAGED)
        cursor.execute(f"CREATE UNLOGGED TABLE {STAGE} ({staged})")
        first = granule_pk
        for index, collection in enumerate(collections):
            columns = synthetic.product_columns(n, years, seed, index)
            _copy_binary(cursor, columns, first, collection.pk)
            first += len(columns.seq)
    products = ", ".join(f"({i}, '{p.short_name}', '{p.data_suffix}', '{p.extra_suffix}', "
                         f"'{p.extra_role}')" for i, p in enumerate(synthetic.PRODUCTS))
    joined = (f"FROM {STAGE} s JOIN (VALUES {products}) AS p(product, short_name, data_suffix,"
              " extra_suffix, extra_role) ON p.product = s.product")
    with _without_indexes(("catalog_granule", "catalog_file")):
        _side_by_side([
            [f"SET {TRIGGERS_OFF}",
             f"INSERT INTO catalog_granule ({', '.join(GRANULE_COLUMNS)}) SELECT s.id, "
             f"s.collection_id, {GRANULE_ID_SQL}, 1, 'archived', s.t_start, s.t_end, s.west, "
             f"s.south, s.east, s.north, {ATTRIBUTES_SQL}, s.data_size + s.extra_size, "
             f"{', '.join(['s.t_end + interval ' + repr('3 hours')] * 3)} {joined}"],
            [f"INSERT INTO catalog_file ({', '.join(FILE_COLUMNS)}) SELECT "
             f"{file_pk - 2 * granule_pk} + 2 * s.id + f.k, s.id, {GRANULE_ID_SQL} || f.suffix, "
             f"f.role, f.size, 'MD5', md5({GRANULE_ID_SQL} || f.suffix) {joined} CROSS JOIN "
             "LATERAL (VALUES (0, p.data_suffix, 'data', s.data_size), (1, p.extra_suffix, "
             "p.extra_role, s.extra_size)) AS f(k, suffix, role, size)"],
        ])
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {STAGE}")
    _after_load()


# The granule counts' row trigger (catalog 0010) off for a load: ten million increments of one
# counter row in one statement grow its version chain without end (a 10 M load ran over 50 min
# at INSERT before it was killed; 19 min without); _after_load counts the rows once instead.
# Foreign keys are off with it; the loaded rows are consistent by construction.
TRIGGERS_OFF = "session_replication_role = replica"
STAGE = "bench_synthetic_stage"
# The staging table: synthetic.Columns plus ids, every column 8 bytes (one numpy record type)
STAGED = (("id", "int8"), ("collection_id", "int8"), ("product", "int8"), ("seq", "int8"),
          ("t_start", "timestamptz"), ("t_end", "timestamptz"), ("west", "float8"),
          ("south", "float8"), ("east", "float8"), ("north", "float8"), ("cloud", "float8"),
          ("flag", "int8"), ("number", "int8"), ("data_size", "int8"), ("extra_size", "int8"))
# synthetic.granule_id and the attributes product_granules gives, in SQL
GRANULE_ID_SQL = ("(p.short_name || '.A' || to_char(s.t_start AT TIME ZONE 'UTC', "
                  "'YYYYDDD.HH24MI') || '.' || lpad(s.seq::text, greatest(7, "
                  "length(s.seq::text)), '0'))")
ATTRIBUTES_SQL = ("CASE WHEN s.flag < 0 THEN jsonb_build_object('tile', 'h' || "
                  "lpad((s.number / 100)::text, 2, '0') || 'v' || lpad((s.number % 100)::text, "
                  "2, '0'), 'cloud_cover', round(s.cloud::numeric, 1)) ELSE jsonb_build_object("
                  "'day_night', CASE WHEN s.flag = 1 THEN 'Day' ELSE 'Night' END, "
                  "'cloud_cover', round(s.cloud::numeric, 1), 'orbit', s.number) END")
# PostgreSQL's binary COPY: a signature, flags and header extension; timestamps count
# microseconds from 2000-01-01
COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
PG_EPOCH_US = int((synthetic.EPOCH - datetime(2000, 1, 1, tzinfo=UTC)).total_seconds()) * 10**6


def _copy_binary(cursor, c, first_pk, collection_pk):
    """COPY one product's synthetic.Columns into the staging table, in binary."""
    count = len(c.seq)
    values = {"id": first_pk + np.arange(count), "collection_id": np.full(count, collection_pk),
              "product": np.full(count, c.product), "seq": c.seq,
              "t_start": PG_EPOCH_US + c.start_s * 10**6, "t_end": PG_EPOCH_US + c.end_us,
              "west": c.west, "south": c.south, "east": c.east, "north": c.north,
              "cloud": c.cloud, "flag": c.flag, "number": c.number, "data_size": c.data_size,
              "extra_size": c.extra_size}
    record = np.dtype([("count", ">i2")] + [
        field for name, kind in STAGED for field in (
            (f"{name}_length", ">i4"), (name, ">f8" if kind == "float8" else ">i8"))])
    rows = np.empty(count, dtype=record)
    rows["count"] = len(STAGED)
    for name, _ in STAGED:
        rows[f"{name}_length"] = 8
        rows[name] = values[name]
    with cursor.cursor.copy(f"COPY {STAGE} FROM STDIN (FORMAT binary)") as copy:
        copy.write(COPY_HEADER + rows.tobytes() + b"\xff\xff")


def _side_by_side(groups):
    """Run each group of statements in its own thread and connection, the groups at once."""
    def run(statements):
        try:
            with connection.cursor() as cursor:
                cursor.execute("SET maintenance_work_mem = '512MB'")
                for statement in statements:
                    cursor.execute(statement)
        finally:
            connection.close()

    with ThreadPoolExecutor(len(groups)) as pool:
        list(pool.map(run, groups))


@contextmanager
def _without_indexes(tables):
    """Drop the indexes and the unique and foreign-key constraints of `tables` (keeping their
    primary keys), then build them again, a thread per table, foreign keys last (each
    checked in one pass)."""
    rebuild, foreign = {table: [] for table in tables}, []
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute("SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint"
                           " WHERE conrelid = %s::regclass AND contype IN ('u', 'f')"
                           " ORDER BY contype DESC", [table])
            for name, kind, definition in cursor.fetchall():
                cursor.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
                (foreign if kind == "f" else rebuild[table]).append(
                    f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
            cursor.execute("SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)"
                           " FROM pg_index i WHERE i.indrelid = %s::regclass AND NOT"
                           " i.indisprimary", [table])
            for name, definition in cursor.fetchall():
                cursor.execute(f"DROP INDEX {name}")
                rebuild[table].append(definition)
    yield
    _side_by_side(list(rebuild.values()))
    _side_by_side([foreign])


def _store(collection_pks, items, granule_pk, file_pk, batch=50000, on_batch=None):
    """COPY (or bulk insert) `items` with ids from granule_pk and file_pk on; their pks."""
    pks = []
    items = iter(items)
    while chunk := list(islice(items, batch)):
        granule_rows, file_rows = [], []
        for g in chunk:
            archived = g.end + timedelta(hours=3)
            granule_rows.append((granule_pk, collection_pks[g.product], g.granule_id, 1,
                                 "archived", g.start, g.end, *g.bbox, g.attributes,
                                 sum(f[2] for f in g.files), archived, archived, archived))
            for name, role, size, md5 in g.files:
                file_rows.append((file_pk, granule_pk, name, role, size, "MD5", md5))
                file_pk += 1
            pks.append(granule_pk)
            granule_pk += 1
        if connection.vendor == "postgresql":
            _copy("catalog_granule", GRANULE_COLUMNS, granule_rows)
            _copy("catalog_file", FILE_COLUMNS, file_rows)
        else:
            _bulk_create(granule_rows, file_rows)
        if on_batch:
            on_batch(chunk)
    return pks


def _text(value):
    if value is None:
        return "\\N"
    if isinstance(value, dict):
        value = json.dumps(value, separators=(",", ":"))
    elif hasattr(value, "isoformat"):
        value = value.isoformat()
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def _copy(table, columns, rows):
    text = "".join("\t".join(_text(v) for v in row) + "\n" for row in rows)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL {TRIGGERS_OFF}")
        sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
        with cursor.cursor.copy(sql) as copy:
            copy.write(text)
        cursor.execute("SET LOCAL session_replication_role = origin")


def _bulk_create(granule_rows, file_rows):
    from backend.catalog.models import File, Granule

    with transaction.atomic():
        Granule.objects.bulk_create(
            [Granule(**dict(zip(GRANULE_COLUMNS, row, strict=True))) for row in granule_rows],
            batch_size=5000)
        File.objects.bulk_create(
            [File(**dict(zip(FILE_COLUMNS, row, strict=True))) for row in file_rows],
            batch_size=5000)


def _after_load():
    """Count the granules per collection and state (their trigger was off), move the id
    sequences past the loaded rows and refresh the planner's statistics (and, on PostgreSQL,
    the visibility map that index-only scans rely on)."""
    from backend.catalog import counts

    counts.rebuild()
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            for table in ("catalog_granule", "catalog_file"):
                cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                               f"(SELECT max(id) FROM {table}))")
                # VACUUM cannot run inside a transaction (as in a test); ANALYZE can
                verb = "ANALYZE" if connection.in_atomic_block else "VACUUM ANALYZE"
                cursor.execute(f"{verb} {table}")
        else:
            cursor.execute("ANALYZE")
