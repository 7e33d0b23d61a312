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
