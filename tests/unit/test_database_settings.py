"""Settings of the database connection that the benchmarks found mattered."""
import pytest
from django.db import DEFAULT_DB_ALIAS, connection, connections


@pytest.mark.django_db
def test_postgresql_connections_never_compile_queries_with_jit():
    """The collections list with 100,000 granules took 3 s on PostgreSQL, 2.8 s of them JIT
    compiling a query whose row estimate was 500 times too high (bench mixed)."""
    if connection.vendor != "postgresql":
        pytest.skip("JIT is PostgreSQL's")
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone()[0] == "off"


@pytest.mark.django_db
def test_postgresql_prepares_a_statement_the_connection_runs_again():
    """GRANARY_DB_PREPARE_THRESHOLD's options (server-side binding and psycopg's threshold):
    the server's own list of prepared statements shows an ORM query once a connection ran it
    the threshold's number of times, with its value bound, not inlined (#33)."""
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")
    from backend.catalog.models import Collection

    threshold = 3
    options = {**connection.settings_dict["OPTIONS"], "server_side_binding": True,
               "prepare_threshold": threshold}
    wrapper = type(connections[DEFAULT_DB_ALIAS])
    prepared = wrapper({**connection.settings_dict, "OPTIONS": options}, DEFAULT_DB_ALIAS)
    try:
        with prepared.cursor() as cursor:
            for i in range(threshold + 1):
                sql, params = (Collection.objects.filter(short_name=f"NONE{i}")
                               .values_list("pk").query.sql_with_params())
                cursor.execute(sql, params)
                cursor.fetchall()
            cursor.execute("SELECT statement FROM pg_prepared_statements")
            statements = [row[0] for row in cursor.fetchall()]
    finally:
        prepared.close()
    mine = [s for s in statements if "catalog_collection" in s and "short_name" in s]
    assert len(mine) == 1, statements
    assert "$1" in mine[0] and "NONE" not in mine[0]
