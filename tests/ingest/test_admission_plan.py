"""Admission writes each ingest row's catalog granule in one statement that stays cheap when the
planner's statistics are stale: a collection analysed while nearly empty, then filled by one
large ingest, is what a new collection's first delivery looks like. The update used to find
each row's granule by a correlated subquery, planned on those statistics as a walk of the
collection's granules per row (bench mixed: 0.3-0.45 ms a row, 360-740 pages; issue #33)."""
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from backend.catalog import bulk
from backend.catalog.models import Granule
from ingest.models import IngestGranule
from tests.factories import CollectionFactory
from tests.ingest.builders import staged_granules

pytestmark = pytest.mark.django_db

URL = "/api/v1/ingest/requests/"
T0 = datetime(2020, 1, 1, tzinfo=UTC)


def _fill(collection, n):
    bulk.insert([Granule(collection=collection, granule_id=f"OLD{i:05d}",
                         temporal_start=T0 + timedelta(minutes=i),
                         temporal_end=T0 + timedelta(minutes=i + 5), west=-10, south=-10,
                         east=10, north=10) for i in range(n)])


def _pages(plan):
    """Shared pages a plan node and those under it read (hit or read), from EXPLAIN JSON."""
    return plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0)


def test_admission_reads_a_few_pages_per_granule_on_stale_statistics(client, provider,
                                                                      collection, drain):
    if connection.vendor != "postgresql":
        pytest.skip("the planner under test is PostgreSQL's")
    other = CollectionFactory()
    _fill(other, 4000)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_granule")        # the collection holds nothing yet
    _fill(collection, 4000)
    answer = client.post(URL, {"granules": staged_granules(provider, collection, 120)},
                         format="json")
    assert answer.status_code == 202
    with CaptureQueriesContext(connection) as seen:
        drain()
    assert IngestGranule.objects.filter(state="archived",
                                        catalog_granule__isnull=False).count() == 120
    assert set(IngestGranule.objects.values_list("catalog_granule__granule_id", flat=True)) == {
        g.granule_id for g in IngestGranule.objects.all()}
    admissions = [q["sql"] for q in seen.captured_queries
                  if q["sql"].startswith('UPDATE "ingest_ingestgranule"')
                  and "catalog_granule_id" in q["sql"]]
    assert admissions, "no admission update was seen"
    for sql in admissions:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}")
            (answer,) = cursor.fetchone()
            transaction.set_rollback(True)
        plan = (json.loads(answer) if isinstance(answer, str) else answer)[0]
        rows = max(1, plan["Plan"]["Plans"][0]["Actual Rows"])
        # a row's own pages and its indexes' are about 20 (17 when written); a walk of the
        # collection's granules is hundreds
        assert _pages(plan["Plan"]) / rows < 40, json.dumps(plan["Plan"])[:2000]
