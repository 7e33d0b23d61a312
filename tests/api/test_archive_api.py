"""Operator functions through the API: each answers, and refuses clearly when it must."""
import pytest

from backend.accounts import roles
from backend.archive import services
from backend.archive.models import ArchiveRequest, Drive, Volume
from tests.archive_fixtures import archived_collection, small_layout, staged_granule
from tests.contract import call
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def archived(data_root, settings):
    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    settings.GRANARY_READ_MAX_WAIT_S = 0
    settings.GRANARY_REMOUNT_DELAY_S = 0
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    granule, sources = staged_granule(collection, data_root / "staging", sizes=(5000, 7000))
    services.archive_granule(granule, sources)
    services.run_until_idle()
    return granule


def test_archive_api_is_for_operators_only(api, user_api, archived):
    for client in (api, user_api):
        for url in ("/api/v1/archive/drives/", "/api/v1/archive/volumes/",
                    "/api/v1/archive/volume-groups/", "/api/v1/archive/requests/"):
            assert client.get(url).status_code in (401, 403)


def test_volume_groups_with_percent_full(operator_api, archived):
    groups = {g["name"]: g for g in operator_api.get("/api/v1/archive/volume-groups/").json()}
    assert set(groups) == {"primary", "backup"}
    assert groups["primary"]["volumes"] == 1 and groups["primary"]["live_bytes"] == 12000
    assert 0 < groups["primary"]["percent_full"] < 1


def test_media_by_state_and_files_on_a_volume(operator_api, archived):
    filling = operator_api.get("/api/v1/archive/volumes/?state=filling").json()["results"]
    assert sorted(v["label"] for v in filling) == ["A00001", "B00001"]
    scratch = operator_api.get("/api/v1/archive/volumes/?state=scratch").json()["results"]
    assert len(scratch) == 6
    files = operator_api.get("/api/v1/archive/volumes/A00001/files/").json()["results"]
    assert [f["granule_id"] for f in files] == [archived.granule_id] * 2
    assert files[0]["position"] < files[1]["position"]


def test_file_status_shows_cache_and_every_copy(operator_api, archived):
    f = archived.files.order_by("name").first()
    body = operator_api.get(f"/api/v1/archive/files/{f.pk}/").json()
    assert body["cache"]["state"] == "clean" and body["complete"] is True
    assert body["required_copies"] == [1, 2]
    assert sorted((c["copy_number"], c["volume"]) for c in body["copies"]) == [
        (1, "A00001"), (2, "B00001")]


def test_drive_status_and_vary_off_and_on(operator_api, archived):
    drives = operator_api.get("/api/v1/archive/drives/").json()
    assert {d["name"] for d in drives} == {"silo1-d1", "silo1-d2", "silo2-d1", "silo2-d2"}
    off = operator_api.post("/api/v1/archive/drives/silo1-d1/vary/",
                            {"online": False, "reason": "cleaning"}, format="json").json()
    assert off["state"] == "offline" and off["offline_reason"] == "cleaning"
    on = operator_api.post("/api/v1/archive/drives/silo1-d1/vary/", {"online": True},
                           format="json").json()
    assert on["state"] == "idle"


def test_vary_off_a_busy_drive_is_a_conflict(operator_api, archived):
    Drive.objects.filter(name="silo1-d1").update(state=Drive.State.WRITING)
    response = operator_api.post("/api/v1/archive/drives/silo1-d1/vary/", {"online": False},
                                 format="json")
    assert response.status_code == 409
    assert response.json()["detail"] == "drive silo1-d1 is writing; try again when idle"


def test_vary_on_leaves_a_drive_at_work_as_it_is(operator_api, archived):
    """It marked a writing drive idle while its mover held the lease (issue 34, item 24);
    the errors are still forgiven."""
    Drive.objects.filter(name="silo1-d1").update(state=Drive.State.WRITING, consecutive_errors=2)
    on = operator_api.post("/api/v1/archive/drives/silo1-d1/vary/", {"online": True},
                           format="json").json()
    assert on["state"] == "writing"
    assert Drive.objects.get(name="silo1-d1").consecutive_errors == 0


def test_request_queue_with_percent_done_and_cancel(operator_api, archived):
    f = archived.files.first()
    from backend.archive.models import CacheEntry

    CacheEntry.objects.filter(file=f).delete()
    services.make_available([f])
    queue = operator_api.get("/api/v1/archive/requests/").json()["results"]
    assert [(r["kind"], r["state"], r["percent_done"]) for r in queue] == [
        ("recall", "queued", 0.0)]
    done = operator_api.get("/api/v1/archive/requests/?state=done").json()["results"]
    assert len(done) == 4 and all(r["percent_done"] == 100.0 for r in done)
    cancelled = operator_api.post(f"/api/v1/archive/requests/{queue[0]['id']}/cancel/").json()
    assert cancelled["state"] == "cancelled"
    again = operator_api.post(f"/api/v1/archive/requests/{queue[0]['id']}/cancel/")
    assert again.status_code == 409 and "not queued" in again.json()["detail"]


def test_label_new_volumes(operator_api, archived, data_root):
    response = operator_api.post("/api/v1/archive/volumes/label/", {
        "silo": "silo2", "media": "test-media", "count": 3, "prefix": "C"}, format="json")
    assert response.status_code == 201
    labels = [v["label"] for v in response.json()]
    assert labels == ["C00001", "C00002", "C00003"]
    assert all((data_root / "volumes" / "silo2" / label).exists() for label in labels)
    bad = operator_api.post("/api/v1/archive/volumes/label/", {
        "silo": "silo2", "media": "nope", "count": 1, "prefix": "C"}, format="json")
    assert bad.status_code == 400 and "no drive model 'nope'" in bad.json()["detail"]


@pytest.mark.usefixtures("wsgi_keeps_the_test_connection")
def test_label_and_repack_answer_as_the_schema_says(archived):
    """The schema said 200 for both (the fuzzer never names a real silo or volume, so never
    saw the 201 and the 202): each answer is checked against it, status and body."""
    operator = UserFactory(role=roles.OPERATOR)
    made = call(operator, "post", "/api/v1/archive/volumes/label/", 201,
                body={"silo": "silo2", "media": "test-media", "count": 2, "prefix": "D"}).json()
    assert [v["label"] for v in made] == ["D00001", "D00002"]
    job = call(operator, "post", "/api/v1/archive/volumes/{label}/repack/", 202,
               path_parameters={"label": "A00001"}).json()
    assert job["kind"] == "repack"


def test_repack_and_audit_start(operator_api, archived):
    response = operator_api.post("/api/v1/archive/volumes/A00001/repack/")
    assert response.status_code == 202 and response.json()["kind"] == "repack"
    assert Volume.objects.get(label="A00001").state == "read_only"
    twice = operator_api.post("/api/v1/archive/volumes/A00001/repack/")
    assert twice.status_code == 409 and "already being repacked" in twice.json()["detail"]
    audit = operator_api.post("/api/v1/archive/volumes/B00001/audit/")
    assert audit.json() == {"queued": 2}
    assert ArchiveRequest.objects.filter(kind="audit").count() == 2


def test_pin_and_cache_gauge(operator_api, archived):
    ids = list(archived.files.values_list("pk", flat=True))
    assert operator_api.post("/api/v1/archive/cache/pin/", {"files": ids},
                             format="json").status_code == 200
    cache = operator_api.get("/api/v1/archive/cache/").json()
    assert cache["pinned_bytes"] == 12000 and cache["clean_bytes"] == 0
    assert cache["high_watermark"] == 0.8
    operator_api.post("/api/v1/archive/cache/pin/", {"files": ids, "pinned": False},
                      format="json")
    assert operator_api.get("/api/v1/archive/cache/").json()["clean_bytes"] == 12000
    missing = operator_api.post("/api/v1/archive/cache/pin/", {"files": [999999]}, format="json")
    assert missing.status_code == 400 and "no such files: [999999]" in missing.json()["detail"]


def test_queue_summary_per_group_with_oldest_age(operator_api, archived):
    f = archived.files.first()
    from backend.archive.models import CacheEntry

    CacheEntry.objects.filter(file=f).delete()
    services.make_available([f])
    rows = operator_api.get("/api/v1/archive/queues/").json()
    assert [(r["kind"], r["volume_group"], r["queued"], r["running"]) for r in rows] == [
        ("recall", None, 1, 0)]
    assert rows[0]["queued_bytes"] == f.size and rows[0]["oldest_age_s"] >= 0


def test_bulk_retry_and_cancel(operator_api, archived):
    f = archived.files.first()
    failed = ArchiveRequest.objects.create(kind="recall", priority=1, file=f, state="failed",
                                           attempts=5, error="drive x: broken", bytes_total=1)
    queued = ArchiveRequest.objects.create(kind="audit", priority=3, file=f, state="queued",
                                           bytes_total=1)
    response = operator_api.post("/api/v1/archive/requests/bulk/",
                                 {"action": "retry", "all": True, "kind": "recall"},
                                 format="json")
    assert response.json() == {"action": "retry", "count": 1}
    failed.refresh_from_db()
    assert (failed.state, failed.attempts, failed.error) == ("queued", 0, "")
    response = operator_api.post("/api/v1/archive/requests/bulk/",
                                 {"action": "cancel", "ids": [queued.pk]}, format="json")
    assert response.json()["count"] == 1
    nothing = operator_api.post("/api/v1/archive/requests/bulk/", {"action": "retry"},
                                format="json")
    assert nothing.status_code == 400 and "name the requests (ids)" in nothing.json()["detail"]


def test_audit_a_sample(operator_api, archived):
    assert operator_api.post("/api/v1/archive/volumes/audit-sample/", {"sample": 3},
                             format="json").json() == {"queued": 3}
    missing = operator_api.post("/api/v1/archive/volumes/audit-sample/", {}, format="json")
    assert missing.status_code == 400
    assert missing.json()["errors"] == {"sample": ["This field is required."]}
