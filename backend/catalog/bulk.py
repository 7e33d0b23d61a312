"""Inserting thousands of rows at once: COPY on PostgreSQL, bulk_create elsewhere.

An ingest chunk or a tape write batch inserts thousands of granules, files, copies and
requests. bulk_create spells each value into the SQL text (psycopg quotes them one at a time
and the server parses it all); COPY streams the rows, about three times less work on both
sides. Ids, when the caller needs them, are taken from the table's own sequence first, so they
are the ids an INSERT would have given."""
import operator

from django.db import connection
from django.db import models as m
from django.utils import timezone

# Fields whose attribute psycopg takes as it is (ForeignKey's attname is the id).
_AS_IS = (m.IntegerField, m.BigIntegerField, m.SmallIntegerField, m.CharField, m.TextField,
          m.BooleanField, m.FloatField, m.DateTimeField, m.ForeignKey)

# Below this many rows a plain INSERT is as cheap.
MIN_ROWS = 50


def insert(objs, *, need_ids=False):
    """Insert unsaved objects of one model (auto_now fields filled, as save() would); with
    `need_ids` each gets its primary key. Returns `objs`."""
    objs = list(objs)
    if not objs:
        return objs
    model = type(objs[0])
    if connection.vendor != "postgresql" or len(objs) < MIN_ROWS:
        model.objects.bulk_create(objs, batch_size=1000)
        return objs
    meta = model._meta
    fields = [f for f in meta.concrete_fields if not f.primary_key]
    if need_ids:
        _take_ids(meta, objs)
        fields = [meta.pk, *fields]
    _fill_timestamps(fields, objs)
    row_of = _row_maker(fields)
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    with connection.cursor() as cursor, connection.wrap_database_errors:
        with cursor.cursor.copy(
                f"COPY {connection.ops.quote_name(meta.db_table)} ({columns}) FROM STDIN") as copy:
            for obj in objs:
                copy.write_row(row_of(obj))
    for obj in objs:
        obj._state.adding, obj._state.db = False, "default"
    return objs


def _fill_timestamps(fields, objs):
    """auto_now and auto_now_add fields get one time for the batch, as save() would set."""
    stamped = [f for f in fields if getattr(f, "auto_now", False)
               or getattr(f, "auto_now_add", False)]
    if stamped:
        now = timezone.now()
        for obj in objs:
            for f in stamped:
                setattr(obj, f.attname, now)


def _row_maker(fields):
    """obj -> the COPY row: attributes read in one call; only fields whose database value is
    not the attribute itself (JSON, say) go through Django's own preparation."""
    read = operator.attrgetter(*(f.attname for f in fields))
    if len(fields) == 1:
        single = read
        read = lambda obj: (single(obj),)  # noqa: E731
    prepared = [(i, f) for i, f in enumerate(fields) if not isinstance(f, _AS_IS)]
    if not prepared:
        return read

    def row_of(obj):
        row = list(read(obj))
        for i, f in prepared:
            row[i] = f.get_db_prep_save(row[i], connection)
        return row
    return row_of


def _take_ids(meta, objs):
    table, column = meta.db_table, meta.pk.column
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, %s)) "
                       "FROM generate_series(1, %s)", [table, column, len(objs)])
        for obj, (pk,) in zip(objs, cursor.fetchall(), strict=True):
            obj.pk = pk
