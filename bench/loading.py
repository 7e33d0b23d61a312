"""Loading synthetic granules fast: COPY on PostgreSQL, bulk_create in big batches elsewhere.

The rows are what ingest would have left behind for archived granules (state ARCHIVED, two
files each); the archive tier is not involved, since the benchmarks that load this many
measure searching and matching, not archiving. load_synthetic loads a whole synthetic catalog
into empty tables: on PostgreSQL with their indexes and constraints dropped and rebuilt after
(one sort per index instead of ten million insertions into each), by a process per product.
"""
import json
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from datetime import timedelta
from itertools import islice
from multiprocessing import get_context

from django.db import connection, connections, transaction

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


def load_synthetic(collections, n, years, seed, workers=2):
    """synthetic.granules(n, years, seed) into `collections` (one per synthetic product), the
    tables being empty. On PostgreSQL each product is loaded by its own process (`workers`
    at a time) into ids reserved for it, with the tables' indexes and constraints (but their
    primary keys) dropped for the load and built again after."""
    if connection.vendor != "postgresql":
        load_granules(collections, synthetic.granules(n, years, seed))
        return
    granule_pk, file_pk = _next_ids()
    parts, offset = [], 0
    for index in range(len(synthetic.PRODUCTS)):
        parts.append((index, granule_pk + offset, file_pk + 2 * offset))
        offset += synthetic.share(n, index)
    keys = [c.pk for c in collections]
    with _without_indexes(("catalog_file", "catalog_granule")):
        connections.close_all()         # each process opens its own connection
        with ProcessPoolExecutor(workers, mp_context=get_context("fork")) as pool:
            list(pool.map(_load_part, [(keys, n, years, seed, *part) for part in parts]))
    _after_load()


def _load_part(args):
    keys, n, years, seed, index, granule_pk, file_pk = args
    try:
        _store(keys, synthetic.product_granules(n, years, seed, index), granule_pk, file_pk)
    finally:
        connections.close_all()


@contextmanager
def _without_indexes(tables):
    """Drop the indexes and the unique and foreign-key constraints of `tables` (keeping their
    primary keys), then build them again: foreign keys last, each checked in one pass."""
    rebuild, foreign = [], []
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute("SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint"
                           " WHERE conrelid = %s::regclass AND contype IN ('u', 'f')"
                           " ORDER BY contype DESC", [table])
            for name, kind, definition in cursor.fetchall():
                cursor.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
                (foreign if kind == "f" else rebuild).append(
                    f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
            cursor.execute("SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)"
                           " FROM pg_index i WHERE i.indrelid = %s::regclass AND NOT"
                           " i.indisprimary", [table])
            for name, definition in cursor.fetchall():
                cursor.execute(f"DROP INDEX {name}")
                rebuild.append(definition)
    yield
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '512MB'")
        for statement in rebuild + foreign:
            cursor.execute(statement)
        cursor.execute("RESET maintenance_work_mem")


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
        sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
        with cursor.cursor.copy(sql) as copy:
            copy.write(text)


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
    """Move the id sequences past the loaded rows and refresh the planner's statistics (and,
    on PostgreSQL, the visibility map that index-only scans rely on)."""
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
