"""A download's body as gunicorn sends it: a range by socket.sendfile() straight from the
cached file, a whole file read in checked blocks (it has no fileno, so socket.sendfile falls
back to reading it). The bytes on the wire are the file's, and what is recorded is what left,
also when the transfer stops early."""
import os
import socket
import threading
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import AnonymousUser
from gunicorn import util

from backend.archive import services as archive
from backend.metrics.models import TransferRecord
from distribution.models import OrderItem
from distribution.services import downloads
from tests.pagecache import release_socket_buffers, resident_bytes, tcp_pair, wait_until

pytestmark = pytest.mark.django_db

SIZE = 300_000


@pytest.fixture
def download(alice, collection, archived, inline):
    """(Download by signed link, the file's bytes) for a ready order of one file."""
    granule = archived(collection, 1, sizes=(SIZE,))[0]
    response = inline(alice.post, "/api/v1/orders/", {"granules": [granule.pk]}, format="json")
    order_id = response.json()["id"]
    [link] = alice.get(f"/api/v1/orders/{order_id}/links/").json()["links"]
    query = {k: v[0] for k, v in parse_qs(urlsplit(link["url"]).query).items()}
    found = downloads.authorize_download(AnonymousUser(), link["file_id"], query)
    return found, archive.cache_path(found.file).read_bytes()


def send(body, offset, count):
    """socket.sendfile(body) into a socket pair, as gunicorn does; the bytes received."""
    ours, theirs = socket.socketpair()
    received = bytearray()

    def read():
        while chunk := theirs.recv(1 << 16):
            received.extend(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        ours.sendfile(body, offset=offset, count=count)
    finally:
        ours.close()
        reader.join()
        theirs.close()
    return bytes(received)


def iter_recv(sock):
    while chunk := sock.recv(1 << 16):
        yield chunk


def test_the_whole_file_read_in_checked_blocks_is_recorded_and_completes_the_item(download):
    found, data = download
    body, span = downloads.open_download(found, None)
    assert span is None and not util.has_fileno(body)   # gunicorn reads it, no sendfile
    assert send(body, body.start, SIZE) == data
    body.close()
    assert TransferRecord.objects.get(direction="distribution").bytes == SIZE
    assert OrderItem.objects.get(pk=found.item.pk).downloaded_at is not None


def test_a_transfer_that_stops_early_records_what_left_and_leaves_the_item_open(download):
    found, data = download
    body, span = downloads.open_download(found, "bytes=1000-")
    assert span == (1000, SIZE - 1) and util.has_fileno(body)   # a range goes by sendfile
    assert send(body, body.start, 4096) == data[1000:5096]
    body.close()
    body.close()                    # a second close (Django and gunicorn both close) is a no-op
    assert TransferRecord.objects.get(direction="distribution").bytes == 4096
    assert OrderItem.objects.get(pk=found.item.pk).downloaded_at is None


def test_read_in_blocks_stops_at_the_end_of_the_range(download):
    found, data = download
    body, _ = downloads.open_download(found, "bytes=10-109")
    blocks = iter(lambda: body.read(64), b"")
    assert b"".join(blocks) == data[10:110]
    assert not body.seekable()       # Django's FileResponse must not measure it by reading
    body.close()
    assert TransferRecord.objects.get(direction="distribution").bytes == 100


@pytest.mark.parametrize("threshold, stays_cached", [(0, False), (None, True)])
def test_a_large_download_leaves_the_page_cache_behind_it(download, settings, threshold,
                                                         stays_cached):
    """Over TCP, as gunicorn sends it: above the threshold (a quarter of memory unless set) the
    file's pages are dropped once it is sent; below it, the file stays cached."""
    settings.GRANARY_DROP_BEHIND_BYTES = threshold
    found, data = download
    path = archive.cache_path(found.file)
    with open(path, "rb") as f:
        os.fsync(f.fileno())        # long on disk (dirty pages cannot be dropped), and cached
        f.read()
    assert resident_bytes(path) >= SIZE        # whole pages: the last one is partly used
    sender, client = tcp_pair()
    body, _ = downloads.open_download(found, None, sender)
    received = bytearray()
    reader = threading.Thread(target=lambda: received.extend(b"".join(iter_recv(client))))
    reader.start()
    sender.sendfile(body, offset=body.start, count=SIZE)
    sender.close()
    reader.join()
    client.close()
    body.close()
    assert bytes(received) == data
    assert TransferRecord.objects.get(direction="distribution").bytes == SIZE
    if stays_cached:
        assert resident_bytes(path) >= SIZE
    else:
        release_socket_buffers()
        wait_until(lambda: resident_bytes(path) == 0)
