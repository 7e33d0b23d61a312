"""The bulk jobs API: dry runs count what a brute-force walk over the catalog counts and make
nothing; id lists (JSON, text or CSV files) report each unknown line; hostile input is a 4xx
that makes nothing; only operators reach it."""
import random

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from backend.archive.models import ArchiveRequest
from backend.catalog.models import Granule
from console.models import BulkItem, BulkJob
from tests.factories import CollectionFactory, GranuleFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/console/bulk/"


@pytest.fixture
def catalog(db):
    rnd = random.Random(7)
    collections = [CollectionFactory(short_name=n, version="061") for n in ("AAA", "BBB")]
    granules = []
    for n in range(30):
        g = GranuleFactory(collection=rnd.choice(collections), granule_id=f"G{n:03d}",
                           state=rnd.choice(["archived", "deleted", "registered"]))
        Granule.objects.filter(pk=g.pk).update(total_size=rnd.randrange(1, 10**12))
        granules.append(Granule.objects.get(pk=g.pk))
    return collections, granules


def _dry(client, **body):
    return client.post(URL, {"kind": "recall", "dry_run": True, **body}, format="json")


def test_dry_run_by_query_counts_what_brute_force_counts(operator_api, catalog):
    collections, granules = catalog
    for query, keep in [
        ({"collection": "AAA.061"}, lambda g: g.collection.short_name == "AAA"),
        ({"state": "archived"}, lambda g: g.state == "archived"),
        ({"collection": "BBB.061", "state": "deleted,registered"},
         lambda g: g.collection.short_name == "BBB" and g.state != "archived"),
        ({"granule_id": "G01*"}, lambda g: g.granule_id.startswith("G01")),
    ]:
        chosen = [g for g in granules if keep(g)]
        answer = _dry(operator_api, query=query)
        assert answer.status_code == 200, answer.json()
        body = answer.json()
        assert (body["granules"], body["bytes"]) == (len(chosen), sum(g.total_size
                                                                      for g in chosen))
    assert not BulkJob.objects.exists() and not ArchiveRequest.objects.exists()


def test_dry_run_by_ids_reports_each_unknown_line(operator_api, catalog):
    _, granules = catalog
    a, b = granules[0], granules[1]
    ids = [a.pk, f"{b.collection.key}:{b.granule_id}", "NOPE.1:x", "999999", "junk", a.pk,
           {"deep": 1}, -4, 2**80]
    body = _dry(operator_api, ids=ids).json()
    assert (body["granules"], body["bytes"]) == (2, a.total_size + b.total_size)
    assert body["duplicates"] == 1 and body["unknown_count"] == 6
    assert [u["line"] for u in body["unknown"]] == [3, 4, 5, 7, 8, 9]
    refused = operator_api.post(URL, {"kind": "recall", "ids": ids, "reason": "x"},
                                format="json")
    assert refused.status_code == 400
    assert {e["field"] for e in refused.json()["errors"]} == {
        f"line {n}" for n in (3, 4, 5, 7, 8, 9)}
    assert not BulkJob.objects.exists()


def test_latest_version_is_taken_for_a_key(operator_api, catalog):
    _, granules = catalog
    old = granules[0]
    new = GranuleFactory(collection=old.collection, granule_id=old.granule_id, version=2)
    answer = operator_api.post(URL, {"kind": "verify", "reason": "r",
                                     "ids": [f"{old.collection.key}:{old.granule_id}"]},
                               format="json")
    assert answer.status_code == 201, answer.json()
    assert list(BulkItem.objects.values_list("granule_id", flat=True)) == [new.pk]


def test_uploaded_csv_and_text_lists(operator_api, catalog):
    _, granules = catalog
    a, b = granules[2], granules[3]
    text = (f"# granules to recall\nid,comment\n{a.pk},first\n\n"
            f"{b.collection.key}:{b.granule_id},second\nMISSING.1:zz\n")
    upload = SimpleUploadedFile("list.csv", text.encode(), content_type="text/csv")
    answer = operator_api.post(URL, {"kind": "recall", "dry_run": "true", "file": upload},
                               format="multipart")
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    assert body["granules"] == 2
    assert [(u["line"], u["value"]) for u in body["unknown"]] == [(2, "id"), (6, "MISSING.1:zz")]


@pytest.mark.parametrize(("body", "status"), [
    ({"kind": "explode", "ids": [1]}, 400),
    ({"kind": "recall"}, 400),
    ({"kind": "recall", "ids": [1], "query": {"state": "archived"}}, 400),
    ({"kind": "recall", "ids": "1,2,3"}, 400),
    ({"kind": "recall", "query": ["state"]}, 400),
    ({"kind": "recall", "query": {"colour": "red"}}, 400),
    ({"kind": "recall", "query": {"state": {"nested": "x"}}}, 400),
    ({"kind": "recall", "query": {"state": "melted"}}, 400),
    ({"kind": "recall", "query": {"collection": "A" * 5000}}, 400),
    ({"kind": "move", "ids": [1]}, 400),
    ({"kind": "move", "ids": [1], "target_group": "nowhere"}, 400),
    ({"kind": "recall", "ids": [1], "target_group": "primary"}, 400),
    ({"kind": "recall", "ids": [1], "reason": ""}, 400),
    ({"kind": "recall", "ids": [1], "reason": "r" * 3000}, 400),
    ({"kind": "recall", "ids": [], "reason": "r"}, 400),
    ({"kind": "recall", "ids": [1], "dry_run": "maybe"}, 400),
    ([1, 2, 3], 400),
    ("just text", 400),
])
def test_hostile_bodies_are_a_4xx_that_makes_nothing(operator_api, catalog, body, status):
    if isinstance(body, dict) and body.get("ids") == [1]:
        body = {**body, "ids": [catalog[1][0].pk]}
    answer = operator_api.post(URL, body, format="json")
    assert answer.status_code == status, answer.content
    assert answer.json()["detail"]
    assert not BulkJob.objects.exists()


def test_lists_over_the_limit_are_refused(operator_api, catalog, settings):
    settings.GRANARY_BULK_MAX_GRANULES = 10
    _, granules = catalog
    answer = operator_api.post(URL, {"kind": "recall", "reason": "r",
                                     "ids": [g.pk for g in granules[:11]]}, format="json")
    assert answer.status_code == 413
    assert "at most 10" in answer.json()["detail"]
    answer = operator_api.post(URL, {"kind": "recall", "reason": "r", "query": {}},
                               format="json")
    assert answer.status_code == 413
    settings.GRANARY_BULK_MAX_UPLOAD_BYTES = 100
    upload = SimpleUploadedFile("big.txt", b"1\n" * 100, content_type="text/plain")
    answer = operator_api.post(URL, {"kind": "recall", "file": upload}, format="multipart")
    assert answer.status_code == 413
    binary = SimpleUploadedFile("x.bin", b"\xff\xfe\x00\x81", content_type="text/plain")
    answer = operator_api.post(URL, {"kind": "recall", "file": binary}, format="multipart")
    assert answer.status_code == 400
    assert not BulkJob.objects.exists()


def test_deep_body_is_a_400(operator_api):
    body = '{"kind": "recall", "ids": ' + "[" * 5000 + "]" * 5000 + "}"
    answer = operator_api.post(URL, body, content_type="application/json")
    assert answer.status_code == 400


@pytest.mark.parametrize("path", ["abc/", "abc/items/", f"{2**70}/", "1.5/cancel/"])
def test_ids_that_are_no_number_are_a_404(operator_api, path):
    method = operator_api.post if path.endswith("cancel/") else operator_api.get
    assert method(URL + path).status_code == 404


def test_unknown_item_state_is_a_400(operator_api, catalog):
    job = BulkJob.objects.create(kind="recall", reason="r")
    answer = operator_api.get(f"{URL}{job.pk}/items/?state=exploded")
    assert answer.status_code == 400 and "unknown state" in answer.json()["detail"]


@pytest.mark.parametrize("who", ["api", "user_api", "provider_api"])
def test_only_operators(request, who, catalog):
    client = request.getfixturevalue(who)
    job = BulkJob.objects.create(kind="recall", reason="r")
    g = catalog[1][0]
    for method, path, body in [("get", URL, None), ("post", URL, {"kind": "recall",
                                                                  "ids": [g.pk], "reason": "r"}),
                               ("get", f"{URL}{job.pk}/", None),
                               ("get", f"{URL}{job.pk}/items/", None),
                               ("post", f"{URL}{job.pk}/cancel/", {})]:
        answer = getattr(client, method)(path, body, format="json")
        assert answer.status_code in (401, 403), (path, answer.status_code)
    assert BulkJob.objects.count() == 1 and job.items.count() == 0
