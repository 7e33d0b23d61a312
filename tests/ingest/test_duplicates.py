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


def redeliver_changed(client, collection, provider, drain, **changes):
    """The same bytes delivered twice, the second time with changed metadata."""
    data = b"same bytes" * 100
    first = deliver(client, collection, provider, drain, data=data)
    spec = granule(collection, "G1", [stage(provider, "two/G1.dat", data=data)])
    spec.update(changes)
    answer = client.post(URL, {"granules": [spec]}, format="json")
    assert answer.status_code == 202, answer.json()
    drain()
    return first, IngestGranule.objects.get(request_id=answer.json()["id"])


CHANGES = {"attributes": {"day_night": "Night", "orbit": 7},
           "bbox": [-20, -10, 10, 10],
           "temporal": {"start": "2024-01-01T00:00:00Z", "end": "2024-01-01T00:07:00Z"}}


def test_changed_attributes_are_refused_saying_which_differ(client, provider, collection, drain):
    first, again = redeliver_changed(client, collection, provider, drain, **CHANGES)
    assert again.state == "failed" and again.disposition == "DATA ARCHIVE ERROR"
    assert "identical" not in again.reason
    assert again.reason.endswith("this delivery differs in temporal end, bbox, "
                                 "attribute day_night, attribute orbit")
    granule_row = Granule.objects.get()
    assert granule_row.attributes == {"day_night": "Day"}


def test_changed_attributes_under_skip_say_they_were_not_taken(client, provider, collection,
                                                               drain):
    collection.duplicate_policy = "skip"
    collection.save()
    first, again = redeliver_changed(client, collection, provider, drain,
                                     attributes={"day_night": "Night"})
    assert again.state == "archived" and again.catalog_granule_id == first.catalog_granule_id
    assert "attribute day_night were not taken" in again.reason
    assert Granule.objects.get().attributes == {"day_night": "Day"}


def test_changed_attributes_under_version_make_a_new_version(client, provider, collection,
                                                             drain):
    collection.duplicate_policy = "version"
    collection.save()
    first, again = redeliver_changed(client, collection, provider, drain,
                                     attributes={"day_night": "Night"})
    assert again.state == "archived"
    new = again.catalog_granule
    assert (new.version, new.replaces_id) == (2, first.catalog_granule_id)
    assert new.attributes == {"day_night": "Night"}
    assert again.reason == "version 2: differs from version 1 in attribute day_night"
