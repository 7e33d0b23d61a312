"""The object tier in the operator API: the buckets as copy targets, and the archive board's
figures per bucket (each equal to a count made here over the rows the test made), with the
store's health asked on a real S3 server, on one that is not configured and on one that never
answers (the board still answers at once)."""
import socket
import time
from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from backend.archive import object_board, operations
from backend.archive.models import ArchiveRequest, Bucket
from tests.archive_fixtures import object_tier_rows, small_layout
from tests.s3_server import ACCESS_KEY, SECRET_KEY

pytestmark = pytest.mark.django_db
Req = ArchiveRequest
URL = "/api/v1/archive/buckets/"


def store(endpoint):
    return {"endpoint_url": endpoint, "access_key": ACCESS_KEY, "secret_key": SECRET_KEY,
            "region": "us-east-1"}


@pytest.fixture
def stores(settings, s3_bucket):
    """Three buckets: one on the real S3 server, one whose store has no endpoint configured, one
    on a bucket the server does not have."""
    server, name = s3_bucket
    settings.GRANARY_OBJECT_STORES = {"default": store(server.endpoint_url),
                                      "unset": store("")}
    return (Bucket.objects.create(name="archive-s3", bucket=name, prefix="granary/"),
            Bucket.objects.create(name="elsewhere", store="unset", bucket="far"),
            Bucket.objects.create(name="missing", bucket=f"{name}-gone"))


def test_the_buckets_are_listed_for_operators_only(stores, operator_api, user_api, api):
    listed = operator_api.get(URL)
    assert listed.status_code == 200
    assert listed.json()[0] == {"name": "archive-s3", "medium": "object", "store": "default",
                                "bucket": stores[0].bucket, "prefix": "granary/",
                                "created_at": listed.json()[0]["created_at"]}
    assert [b["name"] for b in listed.json()] == ["archive-s3", "elsewhere", "missing"]
    for path in (URL, f"{URL}board/"):
        assert user_api.get(path).status_code == 403
        assert api.get(path).status_code == 401
        assert operator_api.post(path, {}, format="json").status_code == 405


def _expected(buckets, copies, requests, now):
    """The board's figures, counted here in Python over the rows made."""
    out = {}
    for b in buckets:
        held = [c for c in copies if c.bucket_id == b.pk and c.state == "verified"]
        mine = [r for r in requests if r.bucket_id == b.pk]
        pending = Counter()
        for r in mine:
            if r.state in ("queued", "running"):
                pending[(r.kind, r.state)] += 1
                pending[(r.kind, r.state, "bytes")] += r.bytes_total
        recent = [r for r in mine if r.state == "done"
                  and r.finished_at >= now - timedelta(hours=1)]
        failing = [r for r in mine if r.state in ("queued", "failed") and r.error
                   and not r.error.startswith("waiting for")]
        latest = max(failing, key=lambda r: (r.finished_at or r.started_at or r.created_at,
                                             r.pk), default=None)
        out[b.name] = {
            "objects": len(held), "bytes": sum(c.length for c in held),
            "work": [{"kind": kind, "queued": pending[(kind, "queued")],
                      "queued_bytes": pending[(kind, "queued", "bytes")],
                      "running": pending[(kind, "running")],
                      "running_bytes": pending[(kind, "running", "bytes")]}
                     for kind in ("migrate", "recall")],
            "last_hour": {
                "puts": sum(r.kind == "migrate" for r in recent),
                "put_bytes": sum(r.bytes_done for r in recent if r.kind == "migrate"),
                "gets": sum(r.kind == "recall" for r in recent),
                "get_bytes": sum(r.bytes_done for r in recent if r.kind == "recall")},
            "failures": {"requests": len(failing),
                         "last_error": latest.error if latest else ""},
        }
    return out


def test_the_board_counts_each_buckets_copies_work_transfers_and_failures(stores, operator_api):
    small_layout()
    now = timezone.now()
    copies, requests = object_tier_rows(stores, now)
    assert any(r.bucket_id is None for r in requests)   # tape work the board leaves out

    board = operator_api.get(f"{URL}board/")
    assert board.status_code == 200
    rows = {row["name"]: row for row in board.json()}
    want = _expected(stores, copies, requests, now)
    for name, expected in want.items():
        got = rows[name]
        assert {k: got[k] for k in ("objects", "bytes", "work", "last_hour")} == {
            k: expected[k] for k in ("objects", "bytes", "work", "last_hour")}, name
        assert got["failures"]["requests"] == expected["failures"]["requests"], name
        assert got["failures"]["last_error"] == expected["failures"]["last_error"], name
        assert (got["failures"]["last_error_at"] is None) == (not expected["failures"]
                                                              ["last_error"])
    assert sum(w["queued"] for row in rows.values() for w in row["work"]) > 0
    assert sum(row["failures"]["requests"] for row in rows.values()) > 0

    health = {name: row["health"] for name, row in rows.items()}
    assert health["archive-s3"] == {"ok": True, "reason": ""}
    assert health["elsewhere"]["ok"] is False
    assert "not configured" in health["elsewhere"]["reason"]
    assert health["missing"]["ok"] is False
    assert "does not exist" in health["missing"]["reason"]
    assert (rows["archive-s3"]["store"], rows["archive-s3"]["prefix"]) == ("default", "granary/")


def test_a_store_that_never_answers_costs_the_board_a_short_wait(operator_api, settings):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)        # connections complete in the kernel; nobody ever reads or answers
    try:
        settings.GRANARY_OBJECT_STORES = {
            "default": store(f"http://127.0.0.1:{silent.getsockname()[1]}")}
        Bucket.objects.create(name="silent", bucket="silent")
        took = []
        for _ in range(2):      # the second board finds the first question still out
            began = time.monotonic()
            board = operator_api.get(f"{URL}board/")
            took.append(time.monotonic() - began)
            assert board.status_code == 200
            (row,) = board.json()
            assert row["health"]["ok"] is False
            assert "did not answer within" in row["health"]["reason"]
        assert object_board.HEALTH_WAIT_S <= took[0] < object_board.HEALTH_WAIT_S + 2.5, took
        assert took[1] < 1.0, took      # it does not wait for that question again
    finally:
        silent.close()


def test_no_bucket_no_rows(operator_api):
    assert operator_api.get(f"{URL}board/").json() == []
    assert operator_api.get(URL).json() == []


def test_file_status_says_where_an_object_copy_lies(stores, operator_api):
    small_layout()
    copies, _ = object_tier_rows(stores[:1], timezone.now())
    copy = next(c for c in copies if c.bucket_id and c.state == "verified")
    operations.set_policy(copy.file.granule.collection, [stores[0]])
    body = operator_api.get(f"/api/v1/archive/files/{copy.file_id}/")
    assert body.status_code == 200, body.content
    (shown,) = body.json()["copies"]
    assert {k: shown[k] for k in ("medium", "volume", "silo", "position", "bucket", "key")} == {
        "medium": "object", "volume": None, "silo": None, "position": copy.position,
        "bucket": "archive-s3", "key": copy.key}
