"""A real Celery worker on the ingest and archive queues carries a bulk request to ARCHIVED."""
import shutil
import uuid

import pytest
from django.conf import settings

from backend.accounts import roles
from backend.catalog.models import Granule
from ingest.models import IngestRequest
from tests.archive_fixtures import archived_collection, small_layout
from tests.factories import ProviderFactory, UserFactory
from tests.ingest.builders import staged_granules
from tests.workers import celery_worker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services]

ZERO_WAITS = {"GRANARY_WRITE_MAX_WAIT_S": "0", "GRANARY_READ_MAX_WAIT_S": "0",
              "GRANARY_REMOUNT_DELAY_S": "0"}


@pytest.fixture
def delivery(settings):
    """A provider and collection of their own (the worker shares this data root)."""
    for name, value in ZERO_WAITS.items():
        setattr(settings, name, float(value))
    suffix = uuid.uuid4().hex[:6].upper()
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup], short_name=f"W{suffix}", version="001")
    provider = ProviderFactory(name=f"WORKER-{suffix}")
    provider.collections.add(collection)
    yield provider, collection
    shutil.rmtree(settings.STAGING_ROOT / provider.name, ignore_errors=True)
    shutil.rmtree(settings.CACHE_ROOT / collection.key, ignore_errors=True)


def test_worker_takes_a_bulk_request_to_archived(delivery):
    from rest_framework.test import APIClient

    provider, collection = delivery
    user = UserFactory(role=roles.PROVIDER)
    provider.members.add(user)
    client = APIClient()
    client.force_authenticate(user)
    granules = staged_granules(provider, collection, 12, sizes=(2000, 300))
    assert str(settings.STAGING_ROOT).startswith(str(settings.DATA_ROOT))
    with celery_worker(["ingest", "archive"], extra_env=ZERO_WAITS) as worker:
        answer = client.post("/api/v1/ingest/requests/", {"granules": granules}, format="json")
        assert answer.status_code == 202
        request_id = answer.json()["id"]
        wait_for(lambda: IngestRequest.objects.get(pk=request_id).finished, worker,
                 what="the ingest request")
    request = IngestRequest.objects.get(pk=request_id)
    assert request.state == "completed", request.__dict__
    assert request.archived_count == 12 and request.bytes_done == request.bytes_total
    assert Granule.objects.filter(collection=collection, state="archived").count() == 12


def test_a_request_submitted_while_the_broker_is_down_is_stored_and_started_by_the_sweeper(
        delivery, broker_down):
    from datetime import timedelta

    from django.db.models import F
    from rest_framework.test import APIClient

    from ingest.models import IngestGranule
    from ingest.services import periodic

    provider, collection = delivery
    user = UserFactory(role=roles.PROVIDER)
    provider.members.add(user)
    client = APIClient()
    client.force_authenticate(user)
    granules = staged_granules(provider, collection, 3, sizes=(2000, 300))
    with broker_down():
        answer = client.post("/api/v1/ingest/requests/", {"granules": granules}, format="json")
    assert answer.status_code == 202, answer.content
    request_id = answer.json()["id"]
    assert answer.json()["state"] == "received"
    assert IngestGranule.objects.filter(request_id=request_id).count() == 3

    # a minute later, the broker back: the sweeper's next run starts the stored request
    ago = timedelta(seconds=settings.GRANARY_INGEST_UNSENT_S + 1)
    IngestRequest.objects.filter(pk=request_id).update(updated_at=F("updated_at") - ago)
    IngestGranule.objects.filter(request_id=request_id).update(updated_at=F("updated_at") - ago)
    with celery_worker(["ingest", "archive"], extra_env=ZERO_WAITS) as worker:
        periodic.sweep()
        wait_for(lambda: IngestRequest.objects.get(pk=request_id).finished, worker,
                 what="the ingest request")
    request = IngestRequest.objects.get(pk=request_id)
    assert request.state == "completed" and request.archived_count == 3
