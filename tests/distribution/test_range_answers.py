"""What a download answers to Range and If-Range (RFC 9110 sections 13.1.5 and 14), and what a
signed link answers while its file is staged, after it failed, and when its order's expiry
moves. Multiple ranges are answered with the whole file (200): a server may ignore Range, and
clients resume with one range."""
import hashlib
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from backend.archive.models import CacheEntry, FileCopy
from distribution.models import Order, OrderItem
from distribution.services import orders

from .conftest import body, evict

pytestmark = pytest.mark.django_db

SIZE = 5000


@pytest.fixture
def link(alice, collection, archived, inline):
    [granule] = archived(collection, 1, sizes=(SIZE,))
    response = inline(alice.post, "/api/v1/orders/", {"granules": [granule.pk]}, format="json")
    [row] = alice.get(f"/api/v1/orders/{response.json()['id']}/links/").json()["links"]
    parts = urlsplit(row["url"])
    row["path"] = f"{parts.path}?{parts.query}"
    return row


def _get(link, **headers):
    return APIClient().get(link["path"], **{f"HTTP_{k.upper().replace('-', '_')}": v
                                            for k, v in headers.items()})


@pytest.fixture
def whole(link):
    response = _get(link)
    assert response.status_code == 200
    data = body(response)
    assert hashlib.md5(data).hexdigest() == link["checksum"]
    return data, response["ETag"]


@pytest.mark.parametrize("header", [
    "bytes=0-1,5-6",            # several ranges: the whole file
    "bytes=0-0,-1",
    "bytes=6000-7000,8000-",    # several, none satisfiable: still ignored
    "bytes=5-1",                # last before first: invalid, ignored
    "bytes=1_0-20", "bytes=+5-9", "bytes=0x10-", "bytes=-", "bytes=", "bytes", "items=0-9",
    "bytes=\u0661-\u0662",      # Arabic-Indic digits are not DIGIT
])
def test_ranges_that_are_ignored_get_the_whole_file(link, whole, header):
    response = _get(link, range=header)
    assert response.status_code == 200
    assert body(response) == whole[0]
    assert "Content-Range" not in response and response["Content-Length"] == str(SIZE)


@pytest.mark.parametrize("header", [
    f"bytes={SIZE}-", f"bytes={SIZE}-{SIZE + 10}", "bytes=99999999999999999999999999-",
    "bytes=-0", "bytes=" + "9" * 5000 + "-",
])
def test_ranges_past_the_end_are_416_with_the_size(link, header):
    response = _get(link, range=header)
    assert response.status_code == 416
    assert response["Content-Range"] == f"bytes */{SIZE}"
    assert "beyond" in response.json()["detail"]


@pytest.mark.parametrize("header, start, end", [
    ("bytes=0-499", 0, 499), ("bytes=4500-", 4500, SIZE - 1), ("bytes=-500", 4500, SIZE - 1),
    (f"bytes=4990-{10 ** 30}", 4990, SIZE - 1), ("Bytes = 10 - 19", 10, 19),
    ("bytes=-99999", 0, SIZE - 1),
])
def test_one_range_is_206_with_its_content_range(link, whole, header, start, end):
    response = _get(link, range=header)
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes {start}-{end}/{SIZE}"
    assert response["Content-Length"] == str(end - start + 1)
    assert body(response) == whole[0][start:end + 1]
    assert response["ETag"] == whole[1]


def test_if_range_honours_the_range_only_for_the_current_strong_etag(link, whole):
    data, etag = whole
    assert etag.startswith('"') and etag.endswith('"') and len(etag) > 2
    matched = _get(link, range="bytes=100-", if_range=etag)
    assert matched.status_code == 206 and body(matched) == data[100:]
    for other in ('"not-this-file"', f"W/{etag}", etag.strip('"'),
                  "Wed, 21 Oct 2015 07:28:00 GMT"):
        answer = _get(link, range="bytes=100-", if_range=other)
        assert answer.status_code == 200 and body(answer) == data, other
        assert answer["ETag"] == etag
    # without a Range, an If-Range means nothing
    assert _get(link, if_range='"x"').status_code == 200
    # and a mismatched If-Range turns even an unsatisfiable range into the whole file
    assert _get(link, range=f"bytes={SIZE}-", if_range='"x"').status_code == 200


def test_the_etag_follows_the_catalog_bytes(link, whole):
    """A file whose catalog checksum changes (its bytes were replaced) gets another ETag, so a
    client resuming a copy of the old bytes with If-Range is sent the file whole."""
    from backend.catalog.models import File

    data, etag = whole
    File.objects.filter(pk=link["file_id"]).update(checksum="0" * 32)
    answer = _get(link, range="bytes=100-", if_range=etag)
    assert answer.status_code == 200 and answer["ETag"] != etag
    assert body(answer) == data


def test_a_link_of_a_waiting_file_says_when_to_ask_again_and_works_once_staged(
        alice, collection, archived, inline, django_capture_on_commit_callbacks):
    from backend.archive import services as archive

    granules = archived(collection, 1, sizes=(SIZE,))
    evict(granules)
    with django_capture_on_commit_callbacks(execute=False):
        response = alice.post("/api/v1/orders/", {"granules": [granules[0].pk]}, format="json")
        orders.refresh_order(response.json()["id"])
    listing = alice.get(f"/api/v1/orders/{response.json()['id']}/links/").json()
    assert listing["state"] == "staging" and not listing["links"]
    [waiting] = listing["waiting"]
    assert waiting["expires_at"] is None
    path = urlsplit(waiting["url"])
    path = f"{path.path}?{path.query}"
    answer = APIClient().get(path)
    assert answer.status_code == 503
    assert int(answer["Retry-After"]) >= 5 and "being staged" in answer.json()["detail"]

    inline(archive.run_until_idle)
    answer = APIClient().get(path)
    assert answer.status_code == 200 and len(body(answer)) == SIZE
    ready = alice.get(f"/api/v1/orders/{response.json()['id']}/links/").json()
    assert ready["links"][0]["url"] == waiting["url"]
    assert ready["links"][0]["expires_at"] == ready["expires_at"]


def test_a_link_lives_as_long_as_its_order_not_a_time_it_was_signed_with(link, whole):
    """The order's expiry moving later (an order staged in parts becomes ready as a whole)
    keeps its old links working; once past the order's expiry they answer 410."""
    item = OrderItem.objects.get(file_id=link["file_id"])
    later = timezone.now() + timedelta(days=30)
    OrderItem.objects.filter(pk=item.pk).update(expires_at=later)
    Order.objects.filter(pk=item.order_id).update(expires_at=later)
    assert _get(link).status_code == 200
    past = timezone.now() - timedelta(seconds=1)
    OrderItem.objects.filter(pk=item.pk).update(expires_at=past)
    answer = _get(link)
    assert answer.status_code == 410 and "no longer work" in answer.json()["detail"]


def test_a_link_of_a_failed_file_is_410_with_the_reason(link, whole, inline):
    item = OrderItem.objects.get(file_id=link["file_id"])
    CacheEntry.objects.filter(file_id=link["file_id"]).delete()
    FileCopy.objects.filter(file_id=link["file_id"]).update(state=FileCopy.State.BAD)
    gone = inline(_get, link)               # the cache lost it: recalled, or failed
    assert gone.status_code == 503 and gone["Retry-After"]
    item.refresh_from_db()
    assert item.state == "failed" and item.error
    answer = _get(link)
    assert answer.status_code == 410
    assert item.error in answer.json()["detail"]


@pytest.mark.parametrize("query", [
    "order=abc&sig=x", "order=&sig=x", "order=1&expires=soon&sig=x", "order=1&sig=",
    "order=99999999999999999999999&sig=x", "order=1&sig=" + "A" * 5000,
])
def test_malformed_links_are_403(link, query):
    answer = APIClient().get(f"/api/v1/files/{link['file_id']}/download?{query}")
    assert answer.status_code == 403


def test_granary_get_is_served_to_anyone():
    answer = APIClient().get("/api/v1/granary-get")
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("text/x-python")
    assert answer.content.startswith(b"#!/usr/bin/env python3\n")
    compile(answer.content, "granary-get", "exec")
