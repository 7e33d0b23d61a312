"""A granule's files are found through file_name_unique (granule, name) since the files' own
index on granule went (#33: one index less on every file's insert): a granule's page, its
deletion's cascade and the movers' reads by granule stay index lookups, not a walk of the
files."""
import json

import pytest
from django.db import connection

from backend.catalog import bulk
from backend.catalog.models import File
from tests.factories import GranuleFactory

pytestmark = pytest.mark.django_db


def _plan_nodes(plan):
    yield plan
    for child in plan.get("Plans", []):
        yield from _plan_nodes(child)


def test_files_by_granule_are_read_through_the_unique_index():
    if connection.vendor != "postgresql":
        pytest.skip("the planner under test is PostgreSQL's")
    granules = [GranuleFactory() for _ in range(30)]
    bulk.insert([File(granule=g, name=f"f{i:04d}.dat", size=1, checksum_type="MD5",
                      checksum="0" * 32) for g in granules for i in range(200)])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_file")
        for sql, params in (
                File.objects.filter(granule_id=granules[7].pk).query.sql_with_params(),
                ("DELETE FROM catalog_file WHERE granule_id = %s", [granules[7].pk])):
            cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
            plan = cursor.fetchone()[0]
            plan = json.loads(plan) if isinstance(plan, str) else plan
            nodes = list(_plan_nodes(plan[0]["Plan"]))
            files = [n for n in nodes if n.get("Relation Name") == "catalog_file"
                     or n.get("Index Name", "").startswith(("catalog_file", "file_"))]
            assert {n.get("Index Name") for n in files} - {None} == {"file_name_unique"}, files
            assert not any(n["Node Type"] == "Seq Scan" for n in files)
