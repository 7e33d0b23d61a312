"""A chunk reads its rows' fields in one statement and writes them in bulk, whatever its size."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ingest.models import IngestGranule
from ingest.services import pipeline
from tests.ingest.builders import staged_granules

pytestmark = pytest.mark.django_db


def test_a_chunks_statements_do_not_grow_with_its_granules(client, provider, collection):
    """40 granules take the statements on ingest rows that 4 do: a field the chunk's read
    left out would be loaded row by row, a statement per granule."""
    counts = []
    for n, tag in ((4, "A"), (40, "B")):
        granules = staged_granules(provider, collection, n)
        for g in granules:
            g["granule_id"] = tag + g["granule_id"]
        body = client.post("/api/v1/ingest/requests/", {"granules": granules},
                           format="json").json()
        with CaptureQueriesContext(connection) as seen:
            pipeline.run_request(body["id"])
        counts.append(sum('"ingest_ingestgranule"' in q["sql"] for q in seen.captured_queries))
        assert IngestGranule.objects.filter(request_id=body["id"],
                                            state="archiving").count() == n
    assert counts[0] == counts[1], counts
