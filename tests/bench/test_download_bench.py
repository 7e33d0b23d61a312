"""The download benchmark's parts at a small size against a live server: a file archived and
ordered for real, its signed link fetched by curl and read by dd, cold and warm, and the
untimed checksum and Range check; and the memory cap its steady-state cold reads run in (what
it measures, never how fast)."""
import os
import subprocess
import sys
import time

import pytest

from backend.metrics.models import TransferRecord
from bench import download
from bench.baseline import drop_from_page_cache
from bench.memcap import MemoryCap
from distribution import services as distribution
from tests.pagecache import resident_bytes

SIZE = 1 << 20


@pytest.mark.django_db(transaction=True)
def test_a_small_run_of_the_download_core(live_server, data_root, settings, eager):
    settings.GRANARY_WRITE_MAX_WAIT_S = settings.GRANARY_READ_MAX_WAIT_S = 0
    settings.GRANARY_REMOUNT_DELAY_S = 0
    settings.GRANARY_CACHE_BYTES = 1 << 30
    path, order, md5, _ = download.ready_link(SIZE)
    assert path.stat().st_size == SIZE
    (link,) = distribution.links(order, site=live_server.url + "/")["links"]
    times = download.measure(str(path), link["url"], SIZE, repeats=2)
    assert {mode: {way: len(v) for way, v in ways.items()} for mode, ways in times.items()} == {
        "dropped": {"dd": 2, "http": 2}, "warm": {"dd": 2, "http": 2}}
    assert all(0 < t.own <= t.process for ways in times.values() for timings in ways.values()
               for t in timings)
    assert download.verify(link["url"], path, SIZE, md5)
    with pytest.raises(RuntimeError, match="MD5"):
        download.verify(link["url"], path, SIZE, "0" * 32)

    # Seven downloads left the server (four timed, the checked one, its Range, the refused one);
    # each is recorded as it closes, after its last byte: wait for the records, so the test ends
    # with no request still writing while the database is emptied for the next test.
    deadline = time.monotonic() + 60
    while (TransferRecord.objects.filter(direction="distribution").count() < 7
           and time.monotonic() < deadline):
        time.sleep(0.1)
    assert TransferRecord.objects.filter(direction="distribution").count() == 7


def test_a_reader_inside_the_memory_cap_keeps_no_more_of_a_file_in_memory_than_the_cap(
        data_root):
    cap = MemoryCap.create(f"granary-test-{os.getpid()}")
    if cap is None:
        pytest.skip("this process may not create a memory cgroup (the bench then drops instead)")
    path, size = data_root / "big.dat", 64 << 20
    path.write_bytes(os.urandom(size))
    try:
        drop_from_page_cache(path)
        # 16 MiB, a quarter of the file: dd, its shell and the kernel's own pages for them share
        # the cap; with 8 MiB the kernel once killed dd instead of reclaiming cache (CI, load 15)
        cap.limit(cap.usage() + (16 << 20))
        download.dd(path, cap)
        assert 0 < resident_bytes(path) <= 16 << 20
        cap.limit(None)
        download.dd(path, cap)
        assert resident_bytes(path) == size
    finally:
        cap.remove()
    assert not cap.directory.exists()


def test_the_capped_series_reads_in_the_cap_and_leaves_no_filler(data_root):
    """dd alone (no server in the cap here): two capped repeats each way, and the filler that
    fills the cap before each read is gone afterwards."""
    cap = MemoryCap.create(f"granary-test-{os.getpid()}")
    if cap is None:
        pytest.skip("this process may not create a memory cgroup (the bench then drops instead)")
    path, size = data_root / "big.dat", 16 << 20
    path.write_bytes(os.urandom(size))
    before = sorted(p.name for p in data_root.iterdir())
    local = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
                              "--directory", str(data_root)], stdout=subprocess.PIPE, text=True)
    try:
        port = int(local.stdout.readline().split("port ")[1].split(" ")[0])
        times = download.measure(str(path), f"http://127.0.0.1:{port}/big.dat", size, 2, cap)
    finally:
        local.terminate()
        local.wait()
        cap.remove()
    assert {way: len(v) for way, v in times["capped"].items()} == {"dd": 2, "http": 2}
    assert sorted(p.name for p in data_root.iterdir()) == before
