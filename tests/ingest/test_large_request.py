"""A request of 10,000 granules completes with none stuck (pytest -m slow)."""
import time

import pytest

from ingest.models import IngestGranule, IngestRequest
from ingest.services import reporting
from ingest.services.pipeline import run_request
from tests.ingest.builders import granule, stage

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_ten_thousand_granules(client, provider, collection, drain, settings):
    settings.GRANARY_CACHE_BYTES = 4 << 30
    granules = [granule(collection, f"L{i:05d}", [stage(provider, f"l/{i % 100}/L{i:05d}.dat",
                                                        size=64)], hour=i)
                for i in range(10_000)]
    began = time.monotonic()
    answer = client.post("/api/v1/ingest/requests/", {"granules": granules}, format="json")
    accepted = time.monotonic() - began
    assert answer.status_code == 202, answer.content[:3000]
    request_id = answer.json()["id"]
    began = time.monotonic()
    run_request(request_id)
    pipeline = time.monotonic() - began
    drain()
    request = IngestRequest.objects.get(pk=request_id)
    assert request.state == "completed", reporting.state_counts(request)
    assert not IngestGranule.objects.exclude(state="archived").exists()
    detail = client.get(answer.json()["url"]).json()
    assert len(detail["granules"]) == 10_000 and detail["percent_done"] == 100.0
    print(f"\naccepted in {accepted:.1f} s, ingest pipeline {pipeline:.1f} s "
          f"({10_000 / pipeline:.0f} granules/s)")
