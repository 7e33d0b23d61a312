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
