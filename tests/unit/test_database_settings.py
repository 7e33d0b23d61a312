"""Settings of the database connection that the benchmarks found mattered."""
import pytest
from django.db import connection


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
    """A search page cost the database 14 ms of planning and executing before statements run
    again were prepared, 5 after (#33): the server's own list of prepared statements shows the
    ORM query once it ran the threshold's number of times, with its values bound, not inlined."""
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")
    from django.conf import settings

    from backend.catalog.models import Collection

    threshold = settings.DATABASES["default"]["OPTIONS"]["prepare_threshold"]
    for i in range(threshold + 1):
        list(Collection.objects.filter(short_name=f"NONE{i}").values_list("pk"))
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    mine = [s for s in prepared if "catalog_collection" in s and "short_name" in s]
    assert len(mine) == 1, prepared
    assert "$1" in mine[0] and "NONE" not in mine[0]
