"""granary-get and the order's script against gunicorn, with real files: a download killed
mid-file and resumed by Range, a file made unavailable, bytes damaged on the client and on the
server, and a server that asks to come back later (429 with Retry-After).

Expected checksums are the catalog's, which the fixtures computed with hashlib from the bytes
they made; nothing here is timed."""
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from backend.accounts import tokens
from backend.archive import services as archive
from backend.archive.models import CacheEntry, FileCopy
from backend.catalog.models import File
from backend.metrics.models import TransferRecord
from distribution.models import OrderItem
from distribution.services import upkeep

from .live_web import CLIENT, gunicorn, run_client

# A real client over HTTP (as gfal2 is): the database behind gunicorn is incidental, so it runs
# once per `make test`.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.once]

BIG = 3 << 20


def _order(alice, inline, granules):
    response = inline(alice.post, "/api/v1/orders/", {"granules": [g.pk for g in granules]},
                      format="json")
    assert response.status_code == 201, response.json()
    order_id = response.json()["id"]
    assert alice.get(f"/api/v1/orders/{order_id}/").json()["state"] == "ready"
    return order_id


def _script(alice, web, order_id, folder):
    """The order's script as the order page offers it, saved where a user would."""
    host = web.url.removeprefix("http://")
    response = alice.get(f"/api/v1/orders/{order_id}/script/", HTTP_HOST=host)
    assert response.status_code == 200
    path = folder / f"granary-order-{order_id}.py"
    path.write_bytes(response.content)
    return path


def _manifest(out):
    document = json.loads((out / "granary-manifest.json").read_text())
    return document, {row["name"]: row for row in document["files"]}


def _md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


def _target(out, file):
    return out / str(file.granule).replace(":", "_") / file.name


def _wait_for(predicate, proc, what):
    for _ in range(3000):
        if predicate():
            return
        if proc.poll() is not None:
            raise AssertionError(f"{what}: the client ended first:\n{proc.stderr.read()}")
        time.sleep(0.01)
    raise AssertionError(f"{what} never happened")


def _swept(inline, item):
    """The item's state after one beat sweep (a pause first: the sweep is not a busy loop)."""
    time.sleep(0.05)
    inline(upkeep.sweep)
    return OrderItem.objects.get(pk=item.pk).state


def _killed_mid_file(script, out, part, at_least):
    """Run the script slowed to 256 KiB/s (its --limit-rate), SIGKILL it once `part` holds
    `at_least` bytes: a real interruption, the partial copy left as the kill found it."""
    proc = subprocess.Popen([sys.executable, str(script), "-o", str(out), "--limit-rate", "256k"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: part.exists() and part.stat().st_size >= at_least, proc,
                  f"{part.name} reaching {at_least} bytes")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    held = part.stat().st_size
    assert at_least <= held < BIG
    return held


def test_a_download_killed_mid_file_resumes_with_a_range_and_every_checksum_is_right(
        alice, collection, archived, inline, data_root, tmp_path):
    granules = archived(collection, 2, sizes=(BIG, 700))
    order_id = _order(alice, inline, granules)
    files = list(File.objects.filter(granule__in=granules).select_related("granule__collection")
                 .order_by("pk"))
    big = files[0]
    out = tmp_path / "downloads"
    # drop-behind on for every download: the resume also goes through the streaming path
    with gunicorn(data_root, GRANARY_DROP_BEHIND_BYTES="1") as web:
        script = _script(alice, web, order_id, tmp_path)
        part = _target(out, big).with_name(big.name + ".part")
        held = _killed_mid_file(script, out, part, 1 << 20)
        assert not _target(out, big).exists()

        done = run_client([str(script), "-o", str(out)])
        assert done.returncode == 0, done.stderr
        log = web.access_log()

    document, rows = _manifest(out)
    assert {row["outcome"] for row in rows.values()} == {"ok"}
    assert document["complete_percent"] == 100
    for file in files:
        assert _md5(_target(out, file)) == file.checksum
    assert rows[big.name]["resumed_from"] == held
    assert rows[big.name]["bytes_received"] == BIG - held
    assert f"resuming at byte {held} of {BIG}" in done.stderr
    # the server's side: a 206 for the big file, its log naming the range, and a transfer of
    # exactly the bytes that were missing
    assert re.search(rf'"GET /api/v1/files/{big.pk}/download\?[^"]*" 206 ', log), log[-3000:]
    assert f"bytes {held}-{BIG - 1} of {BIG} asked (range), {BIG - held} sent" in log
    assert TransferRecord.objects.filter(direction="distribution", bytes=BIG - held).exists()
    assert not list(out.rglob("*.part*"))

    again = run_client([str(script), "-o", str(out)])
    assert again.returncode == 0
    assert {row["outcome"] for row in _manifest(out)[1].values()} == {"skipped"}


def test_a_file_made_unavailable_is_in_the_failure_manifest_with_its_reason(
        alice, collection, archived, inline, data_root, tmp_path):
    good, lost = archived(collection, 2, sizes=(4000,))
    order_id = _order(alice, inline, [good, lost])
    out = tmp_path / "downloads"
    [lost_file] = lost.files.all()
    [good_file] = good.files.all()
    with gunicorn(data_root) as web:
        script = _script(alice, web, order_id, tmp_path)
        # its cached copy removed and every tape copy marked bad, after the script was made
        CacheEntry.objects.filter(file=lost_file).delete()
        archive.cache_path(lost_file).unlink()
        FileCopy.objects.filter(file=lost_file).update(state=FileCopy.State.BAD)

        proc = subprocess.Popen([sys.executable, str(script), "-o", str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        item = OrderItem.objects.get(order_id=order_id, file=lost_file)
        # the download found the file gone (503 with Retry-After): back to waiting; the beat's
        # sweep asks the archive again, which has no readable copy: the item fails
        _wait_for(lambda: OrderItem.objects.get(pk=item.pk).state == "waiting", proc,
                  "the item going back to waiting")
        # swept as the beat does, again until the item is final: on SQLite a sweep that meets
        # the web's write lock logs the error and leaves the order to the next sweep
        _wait_for(lambda: _swept(inline, item) != "waiting", proc, "the sweep settling the item")
        assert OrderItem.objects.get(pk=item.pk).state == "failed"
        _, stderr = proc.communicate(timeout=300)

        assert proc.returncode == 1, stderr
        assert "Retry-After" in stderr
        document, rows = _manifest(out)
        assert rows[good_file.name]["outcome"] == "ok"
        assert _md5(_target(out, good_file)) == good_file.checksum
        failure = rows[lost_file.name]
        error = OrderItem.objects.get(pk=item.pk).error
        assert failure["outcome"] == "failed" and error
        assert "HTTP 410" in failure["reason"] and error in failure["reason"]
        assert document["complete_percent"] < 100 and "100 %" not in stderr
        text = (out / "granary-manifest.txt").read_text()
        assert f"FAILED   {failure['path']}" in text and error in text
        assert not _target(out, lost_file).exists()

        # granary-get itself, by order id and token: the good file is skipped, the lost one
        # reported with the order's reason
        token = tokens.issue(alice.user, "granary-get")[1]
        again = run_client([str(CLIENT), str(order_id), "--server", web.url, "-o", str(out)],
                           env=dict(os.environ, GRANARY_TOKEN=token))
    assert again.returncode == 1
    _, rows = _manifest(out)
    assert rows[good_file.name]["outcome"] == "skipped"
    assert rows[lost_file.name]["outcome"] == "failed"
    assert rows[lost_file.name]["reason"] == error


def test_a_byte_damaged_in_the_partial_copy_is_caught_and_the_file_fetched_again(
        alice, collection, archived, inline, data_root, tmp_path):
    [granule] = archived(collection, 1, sizes=(BIG,))
    order_id = _order(alice, inline, [granule])
    [file] = granule.files.all()
    out = tmp_path / "downloads"
    with gunicorn(data_root) as web:
        script = _script(alice, web, order_id, tmp_path)
        part = _target(out, file).with_name(file.name + ".part")
        _killed_mid_file(script, out, part, 1 << 20)
        with open(part, "r+b") as f:          # a bad write on the client's disk
            f.seek(1000)
            byte = f.read(1)
            f.seek(1000)
            f.write(bytes([byte[0] ^ 0xFF]))
        done = run_client([str(script), "-o", str(out)])
    assert done.returncode == 0, done.stderr
    _, rows = _manifest(out)
    assert rows[file.name]["outcome"] == "ok"
    assert any("checksum mismatch after resuming" in note for note in rows[file.name]["notes"])
    assert _md5(_target(out, file)) == file.checksum


def test_a_rotten_copy_on_the_server_is_never_sent_and_the_exit_status_says_so(
        alice, collection, archived, inline, data_root, tmp_path):
    """Bit rot (the bytes change, size and mtime do not): gunicorn cuts the download before
    the damaged block, so the client gets a short read, never the wrong file; the server
    drops the copy and recalls it (the client gives up waiting for it after --max-wait)."""
    good, bad = archived(collection, 2, sizes=(5000,))
    order_id = _order(alice, inline, [good, bad])
    [bad_file] = bad.files.all()
    cached = archive.cache_path(bad_file)
    before = cached.stat()
    data = bytearray(cached.read_bytes())
    data[17] ^= 0x01
    cached.write_bytes(bytes(data))
    os.utime(cached, ns=(before.st_atime_ns, before.st_mtime_ns))
    out = tmp_path / "downloads"
    with gunicorn(data_root) as web:
        done = run_client([str(_script(alice, web, order_id, tmp_path)), "-o", str(out),
                           "--retries", "3", "--max-wait", "1"])
        log = web.access_log()
    assert done.returncode == 1
    _, rows = _manifest(out)
    assert rows[bad_file.name]["outcome"] == "failed"
    assert "the connection ended after 0 of 5000 bytes" in rows[bad_file.name]["reason"]
    assert "fails its check at byte 0 of 5000" in log
    assert rows[good.files.get().name]["outcome"] == "ok"
    assert not _target(out, bad_file).exists()
    assert not list(out.rglob("*.part")) or all(
        p.stat().st_size == 0 for p in out.rglob("*.part"))
    assert not CacheEntry.objects.filter(file=bad_file).exists() and not cached.exists()
    assert OrderItem.objects.get(file=bad_file).state == "waiting"
    assert "FAILED" in done.stderr and "100 %" not in done.stderr


def test_a_429_with_retry_after_is_waited_out(alice, collection, archived, inline, data_root,
                                              tmp_path):
    granules = archived(collection, 3, sizes=(1500,))
    order_id = _order(alice, inline, granules)
    out = tmp_path / "downloads"
    with gunicorn(data_root, GRANARY_DOWNLOAD_RATE="1/s") as web:
        done = run_client([str(_script(alice, web, order_id, tmp_path)), "-o", str(out)])
        log = web.access_log()
    assert done.returncode == 0, done.stderr
    assert re.search(r'"GET /api/v1/files/\d+/download\?[^"]*" 429 ', log)
    assert "HTTP 429" in done.stderr and "(Retry-After: 1 s, as the server asks)" in done.stderr
    _, rows = _manifest(out)
    assert {row["outcome"] for row in rows.values()} == {"ok"}
    for granule in granules:
        for file in granule.files.all():
            assert _md5(_target(out, file)) == file.checksum
