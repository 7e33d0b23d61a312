"""Each kind of bulk job on real bytes: recalls end with the files in the cache, re-verify
re-reads every copy and catches a damaged one, a move leaves the copy on the new group only,
reingest sends failed ingest round again. The API makes the jobs; the runner and the movers
finish them, as the workers would."""
import hashlib

import pytest

from backend.accounts.models import AuditEvent
from backend.archive import operations, services
from backend.archive.models import CacheEntry, Drive, FileCopy, Silo, VolumeGroup
from backend.archive.services.paths import volume_path
from backend.catalog.models import Granule
from console.models import BulkItem, BulkJob
from ingest.models import IngestGranule, IngestRequest
from tests.console.bulk_helpers import archive, drive_to_end, release
from tests.factories import ProviderFactory
from tests.s3_fixtures import copy_bytes

pytestmark = pytest.mark.django_db


def _job(client, kind, **body):
    answer = client.post("/api/v1/console/bulk/", {"kind": kind, "reason": "test", **body},
                         format="json")
    assert answer.status_code == 201, answer.json()
    return BulkJob.objects.get(pk=answer.json()["id"])


def _items(job):
    return {i.granule_id: (i.state, i.outcome) for i in job.items.all()}


def test_recall_by_ids_brings_every_file_back_and_the_job_reaches_100(
        operator_api, layout, data_root):
    collection = layout[0]
    granules = archive(collection, data_root, 4)
    released, kept = granules[:3], granules[3]
    release(released)
    job = _job(operator_api, "recall", ids=[g.pk for g in granules])

    assert drive_to_end(job) == "done"
    files = [f for g in granules for f in g.files.all()]
    assert CacheEntry.objects.filter(file__in=files).exclude(state="staging").count() == 8
    for f in files:
        assert services.cache_path(f).exists()
    items = _items(job)
    assert {items[g.pk][0] for g in released} == {"done"}
    assert items[kept.pk] == ("skipped", "every file is in the cache already")
    shown = operator_api.get(f"/api/v1/console/bulk/{job.pk}/").json()
    assert shown["percent_done"] == 100.0
    assert shown["counts"]["done"] == 3 and shown["counts"]["skipped"] == 1


def test_recall_by_query_takes_what_the_filter_shows(operator_api, layout, data_root):
    collection = layout[0]
    granules = archive(collection, data_root, 3)
    release(granules)
    job = _job(operator_api, "recall", query={"collection": collection.key, "state": "archived"})
    assert job.granules_total == 3
    assert drive_to_end(job) == "done"
    assert {s for s, _ in _items(job).values()} == {"done"}


def _corrupt(copy):
    path = volume_path(copy.volume)
    with open(path, "r+b") as tape:
        tape.seek(copy.data_offset)
        first = tape.read(1)
        tape.seek(copy.data_offset)
        tape.write(bytes([first[0] ^ 0xFF]))


def test_verify_rereads_every_copy_and_fails_the_damaged_one(operator_api, layout, data_root):
    collection = layout[0]
    good, damaged = archive(collection, data_root, 2)
    bad_copy = FileCopy.objects.filter(file__granule=damaged, copy_number=2,
                                       state="verified").first()
    _corrupt(bad_copy)
    job = _job(operator_api, "verify", ids=[good.pk, damaged.pk])

    drive_to_end(job)
    items = _items(job)
    assert items[good.pk] == ("done", "4 copies re-read: each matches its checksum")
    assert items[damaged.pk][0] == "failed"
    assert bad_copy.volume.label in items[damaged.pk][1]
    bad_copy.refresh_from_db()
    assert bad_copy.state != "verified"


def _offsite_group(media):
    """A third silo with a drive, its own scratch volumes and a group there."""
    silo = Silo.objects.create(name="silo3")
    Drive.objects.create(name="silo3-d1", silo=silo, model=media)
    operations.label_volumes(silo, media, 3, "Z")
    return VolumeGroup.objects.create(name="offsite", role=VolumeGroup.Role.BACKUP, silo=silo)


def test_move_writes_the_copy_on_the_new_group_and_releases_the_old(
        operator_api, layout, data_root):
    collection, primary, backup, media = layout
    granules = archive(collection, data_root, 2)
    originals = {f.pk: f.checksum for g in granules for f in g.files.all()}
    offsite = _offsite_group(media)
    operations.set_policy(collection, [primary, offsite])

    job = _job(operator_api, "move", ids=[g.pk for g in granules], target_group="offsite")
    assert drive_to_end(job) == "done"

    for f_pk, checksum in originals.items():
        live = FileCopy.objects.filter(file_id=f_pk, copy_number=2, state="verified")
        assert {c.volume.group_id for c in live} == {offsite.pk}
        assert {c.checksum for c in live} == {checksum}
        assert FileCopy.objects.filter(file_id=f_pk, copy_number=2, state="released",
                                       volume__group=backup).exists()
    assert {s for s, _ in _items(job).values()} == {"done"}
    again = _job(operator_api, "move", ids=[granules[0].pk], target_group="offsite")
    drive_to_end(again)
    assert _items(again)[granules[0].pk] == ("skipped", "copy 2 is on offsite already")


def test_move_keeps_copies_in_different_silos_and_follows_the_policy(
        operator_api, layout, data_root):
    collection, primary, backup, media = layout
    granule = archive(collection, data_root, 1)[0]
    same_silo = VolumeGroup.objects.create(name="second-primary", silo=primary.silo)
    operations.set_policy(collection, [primary, same_silo])
    job = _job(operator_api, "move", ids=[granule.pk], target_group="second-primary")
    drive_to_end(job)
    state, why = _items(job)[granule.pk]
    assert state == "failed" and "copies are kept in different silos" in why

    elsewhere = _offsite_group(media)  # named by no policy copy of this collection
    job = _job(operator_api, "move", ids=[granule.pk], target_group=elsewhere.name)
    drive_to_end(job)
    state, why = _items(job)[granule.pk]
    assert state == "failed" and "puts no copy on offsite" in why
    assert not FileCopy.objects.filter(volume__group=elsewhere).exists()


def test_reingest_sends_a_failed_ingest_round_again_and_skips_the_rest(operator_api, db):
    from tests.factories import CollectionFactory, GranuleFactory

    collection = CollectionFactory(short_name="MOD10A1", version="061")
    failed, fine = (GranuleFactory(collection=collection) for _ in range(2))
    request = IngestRequest.objects.create(provider=ProviderFactory(), way="bulk",
                                           failed_count=1, granule_count=2)
    for position, (g, state) in enumerate([(failed, "failed"), (fine, "archived")]):
        IngestGranule.objects.create(request=request, position=position, spec={},
                                     collection_key=collection.key, granule_id=g.granule_id,
                                     state=state, reason="checksum mismatch")
    job = _job(operator_api, "reingest", ids=[failed.pk, fine.pk])
    assert drive_to_end(job) == "done"
    row = IngestGranule.objects.get(request=request, position=0)
    assert row.state == "received" and row.reason == ""
    request.refresh_from_db()
    assert request.failed_count == 0
    items = _items(job)
    assert items[failed.pk][0] == "done" and "checksum mismatch" in items[failed.pk][1]
    assert items[fine.pk][0] == "skipped"
    assert Granule.objects.get(pk=fine.pk).state == fine.state


def test_bytes_recalled_are_the_archived_bytes(operator_api, layout, data_root):
    collection = layout[0]
    granule = archive(collection, data_root, 1, sizes=(4096,))[0]
    f = granule.files.get()
    release([granule])
    drive_to_end(_job(operator_api, "recall", ids=[granule.pk]))
    assert hashlib.md5(services.cache_path(f).read_bytes()).hexdigest() == f.checksum
    assert BulkItem.objects.get(granule=granule).state == "done"


def test_withdraw_by_query_hides_archived_granules_and_says_why_not_for_others(
        operator_api, layout, data_root):
    collection = layout[0]
    granules = archive(collection, data_root, 3)
    Granule.objects.filter(pk=granules[2].pk).update(state="deleted")
    job = _job(operator_api, "withdraw", query={"collection": collection.key})
    assert drive_to_end(job) == "done"
    states = dict(Granule.objects.filter(pk__in=[g.pk for g in granules])
                  .values_list("pk", "state"))
    assert [states[g.pk] for g in granules] == ["withdrawn", "withdrawn", "deleted"]
    items = _items(job)
    assert items[granules[2].pk][0] == "failed" and items[granules[2].pk][1]
    recorded = AuditEvent.objects.filter(action="withdraw", target_type="granule")
    assert sorted(int(e.target_id) for e in recorded) == sorted(g.pk for g in granules[:2])
    assert {e.reason for e in recorded} == {"test"}
    assert {e.actor_id for e in recorded} == {operator_api.user.pk}


def test_delete_by_ids_releases_the_tape_copies(operator_api, layout, data_root):
    collection = layout[0]
    gone, kept = archive(collection, data_root, 2)
    job = _job(operator_api, "delete", ids=[gone.pk])
    assert drive_to_end(job) == "done"
    assert Granule.objects.get(pk=gone.pk).state == "deleted"
    assert Granule.objects.get(pk=kept.pk).state == "archived"
    assert not FileCopy.objects.filter(file__granule=gone, state="verified").exists()
    assert FileCopy.objects.filter(file__granule=kept, state="verified").count() == 4
    state, why = _items(job)[gone.pk]
    assert state == "done" and f"{gone.total_size * 2:,} bytes released" in why


def test_move_copies_from_tape_to_the_object_store_and_back(
        operator_api, layout, data_root, s3_bucket, settings, django_capture_on_commit_callbacks):
    """An operator sends copy 1 to a bucket (the policy, in the configuration API), then a move
    job writes the copies already on tape there, verified, and releases the tape segments;
    moved back to tape, the objects are removed from the bucket."""
    from backend.archive.models import Bucket
    from tests.s3_server import ACCESS_KEY, SECRET_KEY

    server, name = s3_bucket
    settings.GRANARY_OBJECT_STORES = {"default": {
        "endpoint_url": server.endpoint_url, "access_key": ACCESS_KEY, "secret_key": SECRET_KEY,
        "region": "us-east-1"}}
    collection, primary, backup, _ = layout
    granules = archive(collection, data_root, 2)
    release(granules)        # the bytes come back from tape for the move
    files = {f.pk: f for g in granules for f in g.files.all()}
    Bucket.objects.create(name="objects", bucket=name)
    policy = operator_api.patch(f"/api/v1/config/collections/{collection.key}/",
                                {"policy": {"copies": ["objects", "backup"]}}, format="json")
    assert policy.status_code == 200, policy.content

    job = _job(operator_api, "move", ids=[g.pk for g in granules], target_group="objects")
    assert drive_to_end(job) == "done"
    s3 = server.client()
    for f in files.values():
        live = FileCopy.objects.get(file=f, copy_number=1, state="verified")
        assert live.medium == "object" and live.bucket.bucket == name
        assert hashlib.md5(copy_bytes(s3, live)).hexdigest() == f.checksum   # the demo's: MD5
        assert FileCopy.objects.filter(file=f, copy_number=1, state="released",
                                       volume__group=primary).exists()
    assert {s for s, _ in _items(job).values()} == {"done"}
    assert BulkJob.objects.get(pk=job.pk).target.name == "objects"
    shown = operator_api.get(f"/api/v1/console/bulk/{job.pk}/").json()
    assert shown["target_group"] == "objects"

    # and back to tape: the objects leave the bucket once the tape copies are verified
    operator_api.patch(f"/api/v1/config/collections/{collection.key}/",
                       {"policy": {"copies": ["primary", "backup"]}}, format="json")
    back = _job(operator_api, "move", ids=[g.pk for g in granules], target_group="primary")
    with django_capture_on_commit_callbacks(execute=True):
        assert drive_to_end(back) == "done"
    for f in files.values():
        live = FileCopy.objects.filter(file=f, copy_number=1, state="verified")
        assert {c.volume.group_id for c in live} == {primary.pk}
    assert "Contents" not in s3.list_objects_v2(Bucket=name)
