"""The WLCG Tape REST API v1 through Django's test client: stage, poll, cancel, release,
delete and archiveinfo over real recalls from the archive's tape layout, and the spec's
problem+json answers to hostile input. Expected states come from the spec's vocabulary and
the archive's own tables (cache entries, recalls), never from the API's own output."""
import json
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from backend.archive import services as archive
from backend.archive.models import ArchiveRequest, CacheEntry, Drive
from distribution.models import StageFile, StageRequest

from .conftest import evict

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "/api/tape/v1"


def path_of(f):
    return f"/{f.granule.collection.key}/{f.granule.granule_id}/{f.name}"


def files_of(granules):
    return [f for g in granules for f in g.files.select_related("granule__collection")
            .order_by("pk")]


def post(client, url, document, **kwargs):
    return client.post(url, json.dumps(document), content_type="application/json", **kwargs)


def problem(response, status):
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status and body["title"] and body["detail"]
    return body["detail"]


def test_discovery_names_the_v1_endpoint(api):
    response = api.get("/.well-known/wlcg-tape-rest-api")
    assert response.status_code == 200
    endpoints = response.json()["endpoints"]
    assert [e["version"] for e in endpoints] == ["v1"]
    assert endpoints[0]["uri"] == "http://testserver/api/tape/v1"


def test_stage_recalls_from_tape_and_keeps_the_file_for_its_lifetime(
        alice, collection, archived, inline):
    granules = archived(collection, 2)
    evict(granules)
    files = files_of(granules)
    document = {"files": [{"path": path_of(f), "diskLifetime": "PT2H"} for f in files]}
    before = timezone.now()
    response = inline(post, alice, f"{BASE}/stage", document)
    assert response.status_code == 201, response.content
    stage_id = response.json()["requestId"]
    assert response["Location"].endswith(f"{BASE}/stage/{stage_id}")
    # the inline workers ran the drives at once: each file came back through one recall
    inline(archive.run_until_idle)
    recalls = ArchiveRequest.objects.filter(kind="recall", file__in=files)
    assert sorted(recalls.values_list("state", flat=True)) == ["done"] * len(files)
    status = alice.get(f"{BASE}/stage/{stage_id}").json()
    assert status["id"] == stage_id
    assert {f["path"] for f in status["files"]} == {path_of(f) for f in files}
    assert {f["state"] for f in status["files"]} == {"COMPLETED"}
    assert all(f["onDisk"] and f["startedAt"] <= f["finishedAt"] for f in status["files"])
    assert status["completedAt"] >= status["createdAt"]
    kept = CacheEntry.objects.filter(file__in=files)
    assert kept.count() == len(files)
    for entry in kept:
        assert before + timedelta(hours=2) - timedelta(minutes=1) <= entry.keep_until
        assert entry.keep_until <= timezone.now() + timedelta(hours=2)

    released = [path_of(files[0])]
    assert post(alice, f"{BASE}/release/{stage_id}", {"paths": released}).status_code == 200
    assert CacheEntry.objects.get(file=files[0]).keep_until is None
    assert CacheEntry.objects.get(file=files[1]).keep_until is not None

    response = alice.delete(f"{BASE}/stage/{stage_id}")
    assert response.status_code == 200
    assert not StageRequest.objects.filter(pk=stage_id).exists()
    assert not CacheEntry.objects.filter(file__in=files, keep_until__isnull=False).exists()
    problem(alice.get(f"{BASE}/stage/{stage_id}"), 404)


def test_cancel_leaves_done_files_and_a_failed_recall_fails_the_file_with_its_reason(
        alice, collection, archived, inline):
    granules = archived(collection, 2)
    evict(granules[1:])
    files = files_of(granules)
    Drive.objects.update(state=Drive.State.OFFLINE)  # the recalls stay queued
    response = inline(post, alice, f"{BASE}/stage", {"files": [{"path": path_of(f)}
                                                               for f in files]})
    stage_id = response.json()["requestId"]
    states = {f["path"]: f["state"] for f in alice.get(f"{BASE}/stage/{stage_id}").json()["files"]}
    assert [states[path_of(f)] for f in files] == ["COMPLETED", "COMPLETED", "SUBMITTED",
                                                   "SUBMITTED"]
    cancelled, failing = files[2], files[3]
    response = post(alice, f"{BASE}/stage/{stage_id}/cancel",
                    {"paths": [path_of(files[0]), path_of(cancelled)]})
    assert response.status_code == 200
    recall = ArchiveRequest.objects.get(kind="recall", file=failing)
    ArchiveRequest.objects.filter(pk=recall.pk).update(state="failed", error="drive on fire")
    ArchiveRequest.objects.filter(kind="recall", file=cancelled).update(state="cancelled")
    from distribution.services import staging_progress

    inline(staging_progress.sweep_stages)
    rows = {f["path"]: f for f in alice.get(f"{BASE}/stage/{stage_id}").json()["files"]}
    assert rows[path_of(files[0])]["state"] == "COMPLETED"
    assert rows[path_of(cancelled)]["state"] == "CANCELLED"
    assert rows[path_of(failing)]["state"] == "FAILED"
    assert "drive on fire" in rows[path_of(failing)]["error"]
    assert StageRequest.objects.get(pk=stage_id).completed_at is not None


def test_archiveinfo_says_where_each_file_is(alice, collection, archived):
    granules = archived(collection, 2)
    evict(granules[1:])
    files = files_of(granules)
    paths = [path_of(f) for f in files] + ["/NOPE.1/x/y"]
    response = post(alice, f"{BASE}/archiveinfo", {"paths": paths})
    assert response.status_code == 200
    rows = {r["path"]: r for r in response.json()}
    assert [rows[path_of(f)]["locality"] for f in files] == [
        "DISK_AND_TAPE", "DISK_AND_TAPE", "TAPE", "TAPE"]
    assert "error" in rows["/NOPE.1/x/y"] and "locality" not in rows["/NOPE.1/x/y"]


def test_hostile_stage_bodies_are_refused_whole(alice, bob, collection, archived, inline,
                                                settings):
    files = files_of(archived(collection, 1))
    good = {"path": path_of(files[0])}
    cases = [
        (b"{not json", 400), (b"[]", 400), (b'{"files": "x"}', 400), (b'{"files": []}', 400),
        (b'{"files": [7]}', 400), (b'{"files": [{"path": 7}]}', 400),
        (json.dumps({"files": [good, {"path": "/NOPE.1/g/f"}]}).encode(), 400),
        (json.dumps({"files": [good, good]}).encode(), 400),
        (json.dumps({"files": [{**good, "diskLifetime": "forever"}]}).encode(), 400),
        (json.dumps({"files": [{**good, "diskLifetime": "P400D"}]}).encode(), 400),
        (json.dumps({"files": [{"path": "/a/b/c"}] * 1_000_000}).encode(), 413),
    ]
    for body, status in cases:
        response = inline(alice.post, f"{BASE}/stage", body, content_type="application/json")
        problem(response, status)
    settings.GRANARY_STAGE_MAX_BODY_BYTES = 1000
    problem(post(alice, f"{BASE}/stage", {"files": [good] * 100}), 413)
    assert not StageRequest.objects.exists() and not StageFile.objects.exists()
    assert not ArchiveRequest.objects.filter(kind="recall").exists()

    settings.GRANARY_STAGE_MAX_BODY_BYTES = 1 << 20
    stage_id = inline(post, alice, f"{BASE}/stage", {"files": [good]}).json()["requestId"]
    for url in (f"{BASE}/stage/{stage_id}", f"{BASE}/stage/{uuid.uuid4()}",
                f"{BASE}/stage/not-a-uuid", f"{BASE}/stage/12"):
        if url.endswith(stage_id):
            problem(bob.get(url), 404)
            problem(post(bob, f"{url}/cancel", {"paths": [good["path"]]}), 404)
            problem(post(bob, url.replace("/stage/", "/release/"), {"paths": [good["path"]]}),
                    404)
            problem(bob.delete(url), 404)
        else:
            problem(alice.get(url), 404)
    problem(post(alice, f"{BASE}/stage/{stage_id}/cancel", {"paths": ["/x/y/z"]}), 400)
    problem(post(alice, f"{BASE}/stage/{stage_id}/cancel", {"paths": "x"}), 400)
    assert StageRequest.objects.filter(pk=stage_id).exists()


def test_a_restricted_collection_answers_as_if_its_files_were_not_there(
        alice, collection, archived, inline):
    files = files_of(archived(collection, 1))
    collection.access = collection.Access.RESTRICTED
    collection.save(update_fields=["access"])
    detail = problem(inline(post, alice, f"{BASE}/stage", {"files": [{"path": path_of(files[0])}]}),
                     400)
    assert "No archived file" in detail
    rows = post(alice, f"{BASE}/archiveinfo", {"paths": [path_of(files[0])]}).json()
    assert "error" in rows[0] and "locality" not in rows[0]
    assert not StageRequest.objects.exists()


def test_a_token_is_needed_and_bearer_is_taken(api, alice):
    from backend.accounts import tokens

    problem(post(api, f"{BASE}/stage", {"files": []}), 401)
    token = tokens.issue(alice.user, "tape")[1]
    response = post(api, f"{BASE}/archiveinfo", {"paths": ["/a/b/c"]},
                    HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
