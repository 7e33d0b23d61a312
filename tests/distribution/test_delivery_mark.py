"""A delivery is recorded before the client holds every byte (the landing CI's chaos run: a
mark made only when the response closed was lost, and the order staged in parts it belonged
to held its share of the cache for a delivery that had happened, so its other files were
never asked for). Whatever kills the server after the last byte, the item is already marked;
a mark that cannot be made cuts the body short, so the client asks again; a range the server
sends by itself is marked when it closes, also across a database connection cut meanwhile.

Expected bytes come from the bytes the fixtures wrote; connections are cut by PostgreSQL's own
pg_terminate_backend."""
import os
import socket
import threading
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import OperationalError, connection, connections
from rest_framework.test import APIClient

from backend.archive import services as archive
from distribution.models import Order, OrderItem
from distribution.services import downloads

pytestmark = pytest.mark.django_db

SIZE = 9 * (1 << 20) + 4321      # three checked blocks of 4 MiB, the last one short


@pytest.fixture
def ordered(alice, collection, archived, inline):
    """alice's ready order of one file of SIZE bytes: (order, its link's path, the bytes)."""
    [granule] = archived(collection, 1, sizes=(SIZE,))
    response = inline(alice.post, "/api/v1/orders/", {"granules": [granule.pk]}, format="json")
    order = Order.objects.get(pk=response.json()["id"])
    [link] = alice.get(f"/api/v1/orders/{order.pk}/links/").json()["links"]
    parts = urlsplit(link["url"])
    data = archive.cache_path(order.items.get().file).read_bytes()
    return order, f"{parts.path}?{parts.query}", data


def _cut_our_connection():
    """Cut this thread's database connection as a restarted server would."""
    pid = connection.cursor().connection.info.backend_pid
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()


def _found(order, path):
    query = dict(part.split("=", 1) for part in urlsplit(path).query.split("&"))
    return downloads.authorize_download(AnonymousUser(), order.items.get().file_id, query)


def _downloaded_at(order):
    return OrderItem.objects.get(order=order).downloaded_at


def test_the_client_never_holds_every_byte_of_an_undelivered_item(ordered):
    """Read by the server's writes (any WSGI server): the last block comes out marked, before
    the response is closed (a server killed there never closes it)."""
    order, path, data = ordered
    response = APIClient().get(path)
    got = bytearray()
    chunks = iter(response.streaming_content)
    while len(got) < SIZE:
        assert _downloaded_at(order) is None
        got += next(chunks)
    assert bytes(got) == data
    marked = _downloaded_at(order)
    assert marked is not None
    assert Order.objects.get(pk=order.pk).state == "completed"
    assert next(chunks, None) is None           # the response closes: marked once
    assert _downloaded_at(order) == marked


def test_the_direct_sendfile_path_marks_the_item_before_its_last_block_leaves(ordered):
    order, path, data = ordered
    ours, theirs = socket.socketpair()
    got = bytearray()
    reader = threading.Thread(target=lambda: got.extend(b"".join(iter(
        lambda: theirs.recv(1 << 16), b""))))
    reader.start()
    body, _ = downloads.open_download(_found(order, path), None, ours)
    assert body.sock is ours
    try:
        for _ in body:
            sent = body.position
            assert (_downloaded_at(order) is not None) == (sent >= SIZE), sent
    finally:
        ours.close()
        reader.join()
        theirs.close()
    assert bytes(got) == data
    body.close()
    assert Order.objects.get(pk=order.pk).state == "completed"


@pytest.mark.django_db(transaction=True)
def test_a_mark_that_cannot_be_made_cuts_the_body_before_its_last_block(ordered):
    """The database connection is cut before the last block: the client is short of it, and
    asking again delivers the file and marks it."""
    if connection.vendor != "postgresql":
        pytest.skip("cuts the connection with PostgreSQL's pg_terminate_backend")
    order, path, data = ordered
    got = bytearray()
    with pytest.raises(OperationalError):
        for chunk in APIClient().get(path).streaming_content:
            got += chunk
            if len(got) >= SIZE - SIZE % (4 << 20):
                _cut_our_connection()
    assert len(got) == SIZE - SIZE % (4 << 20) and data.startswith(bytes(got))
    connection.close()
    assert _downloaded_at(order) is None
    assert b"".join(APIClient().get(path).streaming_content) == data
    assert _downloaded_at(order) is not None


@pytest.mark.django_db(transaction=True)
def test_a_range_sent_by_the_server_is_marked_across_a_cut_connection(ordered):
    """A range to the end goes out by sendfile from fileno(), as gunicorn sends it: marked when
    it closes, and the database connection cut meanwhile (PostgreSQL's pg_terminate_backend)
    costs a retry, not the mark."""
    if connection.vendor != "postgresql":
        pytest.skip("cuts the connection with PostgreSQL's pg_terminate_backend")
    order, path, data = ordered
    found = _found(order, path)
    body, span = downloads.open_download(found, "bytes=0-", None)
    assert span == (0, SIZE - 1)
    sent = os.pread(body.fileno(), SIZE, 0)
    body.seek(SIZE)                   # where socket.sendfile leaves the file
    assert sent == data
    _cut_our_connection()
    body.close()
    assert _downloaded_at(order) is not None
