"""A granule delivered again: per the collection's duplicate policy; identical is a no-op."""
import pytest

from backend.archive.models import ArchiveRequest
from backend.catalog.models import Granule
from ingest.models import IngestGranule, IngestRequest
from tests.ingest.builders import granule, stage

pytestmark = pytest.mark.django_db

URL = "/api/v1/ingest/requests/"


def deliver(client, collection, provider, drain, granule_id="G1", folder="one", data=None):
    spec = granule(collection, granule_id, [stage(provider, f"{folder}/{granule_id}.dat",
                                                  data=data)])
    answer = client.post(URL, {"granules": [spec]}, format="json")
    assert answer.status_code == 202, answer.json()
    drain()
    return IngestGranule.objects.get(request_id=answer.json()["id"])


def test_identical_redelivery_is_a_noop(client, provider, collection, drain):
    first = deliver(client, collection, provider, drain, data=b"same bytes" * 100)
    migrations = ArchiveRequest.objects.count()
    again = deliver(client, collection, provider, drain, folder="two", data=b"same bytes" * 100)
    assert again.state == "archived"
    assert again.catalog_granule_id == first.catalog_granule_id
    assert "identical to the granule already archived" in again.reason
    assert Granule.objects.count() == 1
    assert ArchiveRequest.objects.count() == migrations
    assert IngestRequest.objects.filter(state="completed").count() == 2


def test_policy_error_refuses_a_different_granule(client, provider, collection, drain):
    deliver(client, collection, provider, drain)
    again = deliver(client, collection, provider, drain, folder="two")
    assert again.state == "failed" and again.disposition == "DATA ARCHIVE ERROR"
    assert "already exists in MOD021KM.061 (version 1)" in again.reason
    assert "duplicate policy 'error'" in again.reason
    assert Granule.objects.count() == 1


def test_policy_skip_keeps_the_archived_granule(client, provider, collection, drain):
    collection.duplicate_policy = "skip"
    collection.save()
    first = deliver(client, collection, provider, drain)
    again = deliver(client, collection, provider, drain, folder="two")
    assert again.state == "archived" and again.catalog_granule_id == first.catalog_granule_id
    assert "duplicate policy 'skip'" in again.reason
    assert Granule.objects.count() == 1


@pytest.mark.parametrize(("policy", "old_state"), [("version", "superseded"),
                                                   ("replace", "deleted")])
def test_new_version_retires_the_old_once_archived(client, provider, collection, drain,
                                                   policy, old_state):
    collection.duplicate_policy = policy
    collection.save()
    first = deliver(client, collection, provider, drain)
    again = deliver(client, collection, provider, drain, folder="two")
    assert again.state == "archived"
    new = again.catalog_granule
    assert (new.version, new.replaces_id, new.state) == (2, first.catalog_granule_id, "archived")
    first.catalog_granule.refresh_from_db()
    assert first.catalog_granule.state == old_state


def test_a_deleted_granule_can_be_delivered_again(client, provider, collection, drain):
    first = deliver(client, collection, provider, drain)
    Granule.objects.filter(pk=first.catalog_granule_id).update(state=Granule.State.DELETED)
    again = deliver(client, collection, provider, drain, folder="two")
    assert again.state == "archived"
    assert (again.catalog_granule.version, again.catalog_granule.replaces_id) == (2, None)
