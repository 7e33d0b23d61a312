"""Inserting thousands of rows at once: COPY on PostgreSQL, bulk_create elsewhere.

An ingest chunk or a tape write batch inserts thousands of granules, files, copies and
requests. bulk_create spells each value into the SQL text (psycopg quotes them one at a time
and the server parses it all); COPY streams the rows, about three times less work on both
sides. Ids, when the caller needs them, are taken from the table's own sequence first, so they
are the ids an INSERT would have given."""
import functools
import operator

from django.db import connection
from django.db import models as m
from django.db.models.base import ModelState
from django.utils import timezone

from .lookups import array_of

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


def upsert(objs, *, unique_fields, update_fields, batch=5000):
    """Insert unsaved objects of one model; where a row with the same `unique_fields` exists,
    set its `update_fields` from the object instead (bulk_create's update_conflicts). On
    PostgreSQL one INSERT ... SELECT FROM unnest(an array per column) ON CONFLICT per `batch`
    rows: bulk_create spells a placeholder per value, and psycopg splitting a statement of
    thousands of them was a third of a small-file recall's CPU (issue #28). Objects get no
    ids. Returns `objs`."""
    objs = list(objs)
    if not objs:
        return objs
    model = type(objs[0])
    if connection.vendor != "postgresql" or len(objs) < MIN_ROWS:
        model.objects.bulk_create(objs, batch_size=1000, update_conflicts=True,
                                  unique_fields=unique_fields, update_fields=update_fields)
        return objs
    meta, qn = model._meta, connection.ops.quote_name
    fields = [f for f in meta.concrete_fields if not f.primary_key]
    _fill_timestamps(fields, objs)
    row_of = _row_maker(fields)
    updated = [qn(meta.get_field(name).column) for name in update_fields]
    sql = (f"INSERT INTO {qn(meta.db_table)} ({', '.join(qn(f.column) for f in fields)}) "
           f"SELECT * FROM unnest({', '.join(f'%s::{f.db_type(connection)}[]' for f in fields)})"
           f" ON CONFLICT ({', '.join(qn(meta.get_field(n).column) for n in unique_fields)}) "
           f"DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in updated)}")
    with connection.cursor() as cursor:
        for at in range(0, len(objs), batch):
            rows = [row_of(obj) for obj in objs[at:at + batch]]
            cursor.execute(sql, [list(column) for column in zip(*rows, strict=True)])
    for obj in objs:
        obj._state.adding, obj._state.db = False, "default"
    return objs


def new(model, related=None, **values):
    """An unsaved `model` instance with `values` (by attname: `file_id`, not `file`) and every
    other field's default, as model(**values) would make it, without Model.__init__: building
    the tens of thousands of rows of a batch that way cost more than inserting them.
    `related` ({field name: object}) sets related objects the caller already holds, so reading
    them later costs no query. No pre_init or post_init signal is sent."""
    obj = model.__new__(model)
    state = obj._state = ModelState()
    attrs = obj.__dict__
    constants, makers = _defaults(model)
    attrs.update(constants)
    for attname, make in makers:
        attrs[attname] = make()
    attrs.update(values)
    if related:
        state.fields_cache.update(related)
        for name, value in related.items():
            attrs[model._meta.get_field(name).attname] = value.pk
    return obj


def loaded(model, attnames, values):
    """A `model` instance as read from the database with only `attnames` loaded (the others
    load on first use, as Model.from_db leaves deferred fields), without Model.__init__: a
    mover's batch builds thousands."""
    obj = model.__new__(model)
    state = obj._state = ModelState()
    state.adding, state.db = False, "default"
    obj.__dict__.update(zip(attnames, values, strict=True))
    return obj


@functools.cache
def _defaults(model):
    """({attname: default} of the fields whose default is a constant, as Django's own maker
    returns the same value each time; [(attname, maker)] of those with a callable default)."""
    constants, makers = {}, []
    for f in model._meta.concrete_fields:
        if f.has_default() and callable(f.default):
            makers.append((f.attname, f._get_default))
        else:
            constants[f.attname] = f._get_default()
    return constants, tuple(makers)


def update_returning(model, pks, assign, returning, where="", params=()):
    """UPDATE the rows of `model` whose ids are in `pks` (and `where`, SQL with %s
    placeholders for `params`) by `assign` ({column: value, or (SQL expression,)}); returns
    the `returning` columns of the rows it changed. What Django's update() cannot say in the
    same statement: which rows matched, and what they held."""
    qn = connection.ops.quote_name
    sets, values = [], []
    for column, value in assign.items():
        if isinstance(value, tuple):
            sets.append(f"{qn(column)} = {value[0]}")
        else:
            sets.append(f"{qn(column)} = %s")
            values.append(connection.ops.adapt_datetimefield_value(value)
                          if hasattr(value, "tzinfo") else value)
    head = (f"UPDATE {qn(model._meta.db_table)} SET {', '.join(sets)} WHERE "
            f"{' AND '.join(filter(None, [where, '{ids}']))} "
            f"RETURNING {', '.join(qn(c) for c in returning)}")
    pks, out = list(pks), []
    with connection.cursor() as cursor:
        for at in range(0, len(pks), 500):
            part = pks[at:at + 500]
            if connection.vendor == "postgresql":
                ids = f"{qn(model._meta.pk.column)} = ANY(%s::{array_of(model._meta.pk)})"
                id_params = [part]
            else:
                ids = f"{qn(model._meta.pk.column)} IN ({', '.join(['%s'] * len(part))})"
                id_params = part
            cursor.execute(head.format(ids=ids), [*values, *params, *id_params])
            out += cursor.fetchall()
    return out


def update_each(model, name, values, **assign):
    """Set field `name` of each row of `model` whose id is a key of `values` to its value, and
    the `assign` fields (a value, or F() of another column of the same row) alike on all, in
    one statement; returns the rows changed. On PostgreSQL an UPDATE ... FROM unnest(ids,
    values): a correlated subquery finding each row's value was planned once for the batch on
    statistics the batch had just made stale, and walked a whole collection per row (#33)."""
    if not values:
        return 0
    meta = model._meta
    field = meta.get_field(name)
    if connection.vendor != "postgresql":
        target = field.target_field if field.is_relation else field
        each = m.Case(*[m.When(pk=pk, then=m.Value(v)) for pk, v in values.items()],
                      output_field=target)
        return model.objects.filter(pk__in=list(values)).update(**{field.attname: each},
                                                                **assign)
    qn, table = connection.ops.quote_name, connection.ops.quote_name(meta.db_table)
    sets, params = [f"{qn(field.column)} = v.value"], []
    for other, value in assign.items():
        column = qn(meta.get_field(other).column)
        if isinstance(value, m.F):
            sets.append(f"{column} = {table}.{qn(meta.get_field(value.name).column)}")
        else:
            sets.append(f"{column} = %s")
            params.append(meta.get_field(other).get_db_prep_save(value, connection))
    sql = (f"UPDATE {table} SET {', '.join(sets)} FROM unnest(%s::{array_of(meta.pk)}, "
           f"%s::{field.db_type(connection)}[]) AS v(id, value) "
           f"WHERE {table}.{qn(meta.pk.column)} = v.id")
    with connection.cursor() as cursor, connection.wrap_database_errors:
        cursor.execute(sql, [*params, list(values), list(values.values())])
        return cursor.rowcount


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
