"""Totals kept by PostgreSQL row triggers (granules per collection and state, cache bytes per
state): the migrations that install them and the refill after a load that bypassed them.
SQLite has no such triggers; the apps count the rows there instead."""
from django.db import connection, migrations, transaction


def on_postgresql(install_sql, functions, triggers_on):
    """A migration operation that runs `install_sql` on PostgreSQL only; reversed, it drops
    the `functions` and the triggers of table `triggers_on` (name, ...) it made."""
    table, *triggers = triggers_on
    drop = "".join(f"DROP TRIGGER IF EXISTS {t} ON {table};" for t in triggers) + "".join(
        f"DROP FUNCTION IF EXISTS {f}();" for f in functions)

    def run(sql):
        def apply(apps, schema_editor):
            if schema_editor.connection.vendor == "postgresql":
                schema_editor.execute(sql, params=None)
        return apply

    return migrations.RunPython(run(install_sql), run(drop))


def kept():
    """Whether the triggers keep the totals (PostgreSQL) or nothing does (SQLite)."""
    return connection.vendor == "postgresql"


def refill(totals_table, source_table, columns, select):
    """Replace the rows of `totals_table` with what `select` (over `source_table`) answers,
    the source locked against writes meanwhile; PostgreSQL only (elsewhere nothing is kept)."""
    if not kept():
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {source_table} IN SHARE MODE")
        cursor.execute(f"DELETE FROM {totals_table}")
        cursor.execute(f"INSERT INTO {totals_table} ({columns}) {select}")


# Totals kept as deltas: each statement that writes the source adds a row per key it changed
# (statement triggers over the transition tables) and never updates a shared row, so writers
# take no lock on the totals; readers sum per key and `compact` folds the rows now and then.
# Counters updated in place deadlocked under concurrent ingest: admission held a granule
# count row and waited for the cache's "dirty" row, which mark_archived held while it waited
# for the granule count row (issue #22, ingest-small: 159 of 10,000 granules failed).
_DELTA_FUNCTION = """
CREATE OR REPLACE FUNCTION {name}() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO {target} ({columns})
        SELECT {keys}, {sums} FROM (SELECT {picked} FROM new_rows {where}) d
        GROUP BY {keys} HAVING {nonzero};
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO {target} ({columns})
        SELECT {keys}, {sums} FROM (SELECT {negated} FROM old_rows {where}) d
        GROUP BY {keys} HAVING {nonzero};
    ELSE
        INSERT INTO {target} ({columns})
        SELECT {keys}, {sums} FROM (SELECT {picked} FROM new_rows {where}
                                    UNION ALL SELECT {negated} FROM old_rows {where}) d
        GROUP BY {keys} HAVING {nonzero};
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER {name}_insert AFTER INSERT ON {source} REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {name}();
CREATE TRIGGER {name}_update AFTER UPDATE ON {source}
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {name}();
CREATE TRIGGER {name}_delete AFTER DELETE ON {source} REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {name}();
"""


def delta_triggers(name, source, target, keys, values, where=""):
    """SQL installing function `name` and its three statement triggers on `source`: `keys`
    and `values` map target columns to expressions over the source's rows; `where` filters
    the rows that count (e.g. pending requests only)."""
    columns = [*keys, *values]
    return _DELTA_FUNCTION.format(
        name=name, source=source, target=target, columns=", ".join(columns),
        keys=", ".join(keys), sums=", ".join(f"sum({v})" for v in values),
        nonzero=" OR ".join(f"sum({v}) <> 0" for v in values),
        picked=", ".join(f"{e} AS {c}" for c, e in [*keys.items(), *values.items()]),
        negated=", ".join([*(f"{e} AS {c}" for c, e in keys.items()),
                           *(f"-({e}) AS {c}" for c, e in values.items())]),
        where=f"WHERE {where}" if where else "")


def drop_delta_triggers(name, source):
    return "".join(f"DROP TRIGGER IF EXISTS {name}_{event} ON {source};"
                   for event in ("insert", "update", "delete")) + (
        f"DROP FUNCTION IF EXISTS {name}();")


def compact(table, keys, values):
    """Fold a delta-kept table into one row per key (zero rows dropped); PostgreSQL only. One
    compaction at a time (an advisory lock; a second one returns at once); writers only
    insert, so it waits for none of them and none waits for it."""
    if not kept():
        return
    k, v = ", ".join(keys), ", ".join(values)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(hashtext(%s))", [table])
        if not cursor.fetchone()[0]:
            return
        cursor.execute(
            f"WITH gone AS (DELETE FROM {table} RETURNING {k}, {v}) "
            f"INSERT INTO {table} ({k}, {v}) SELECT {k}, "
            + ", ".join(f"sum({c})" for c in values)
            + f" FROM gone GROUP BY {k} HAVING "
            + " OR ".join(f"sum({c}) <> 0" for c in values))


def to_deltas(install_sql, name, source, target, row_trigger, truncate_trigger, old_sql):
    """A migration operation (PostgreSQL only) replacing the row trigger `row_trigger` on
    `source`, which updated `target` in place, by the delta triggers of `install_sql`
    (delta_triggers(name, ...)); its function stays, unused. Reversed, it drops the delta
    triggers and `truncate_trigger` and runs `old_sql` (the earlier migration's, which makes
    both triggers again and recounts) on an emptied `target`."""
    def forward(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {row_trigger} ON {source};")
            schema_editor.execute(install_sql, params=None)

    def backward(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(drop_delta_triggers(name, source)
                                  + f"DROP TRIGGER IF EXISTS {truncate_trigger} ON {source};"
                                  + f"DELETE FROM {target};")
            schema_editor.execute(old_sql, params=None)

    return migrations.RunPython(forward, backward)
