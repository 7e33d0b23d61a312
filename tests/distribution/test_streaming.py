"""Large downloads stream through the page cache: the pages behind what the client has
acknowledged leave memory while the transfer runs, and the whole range when it ends; smaller
downloads stay cached for the next one. Real TCP sockets, real files, fincore to look."""
import os
import socket
import threading

import pytest

from backend import host
from distribution import streaming
from tests.pagecache import release_socket_buffers, resident_bytes, tcp_pair, wait_until

MIB = 1 << 20


@pytest.mark.parametrize("nbytes, memory, threshold, expected", [
    (300 * MIB, 1024 * MIB, None, True),       # above a quarter of memory
    (256 * MIB, 1024 * MIB, None, False),      # a quarter exactly stays cached
    (10 * MIB, 1024 * MIB, 0, True),           # the operator's threshold wins
    (300 * MIB, 1024 * MIB, 400 * MIB, False),
])
def test_which_downloads_stream_through(nbytes, memory, threshold, expected):
    assert streaming.streams_through(nbytes, threshold, lambda: memory) is expected


def test_the_default_threshold_is_a_quarter_of_this_servers_memory():
    memory = host.memory_limit()
    assert 0 < memory <= os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert not streaming.streams_through(memory // 4)
    assert streaming.streams_through(memory // 4 + 1)


def written(path, data):
    """A file on disk as the cache holds one: written and synced (dirty pages cannot be
    dropped), and still in the page cache."""
    with open(path, "wb") as f:
        f.write(data)
        os.fsync(f.fileno())
    assert resident_bytes(path) == len(data)
    return path


def test_a_followed_download_leaves_memory_behind_the_client(tmp_path):
    size = 128 * MIB
    data = os.urandom(size)
    path = written(tmp_path / "big.dat", data)
    sender, client = tcp_pair()
    follower = streaming.DropBehind()
    received, paused, resume = bytearray(), threading.Event(), threading.Event()

    def receive():
        while chunk := client.recv(MIB):
            received.extend(chunk)
            if len(received) >= 96 * MIB and not resume.is_set():
                paused.set()
                resume.wait()

    reader = threading.Thread(target=receive)
    reader.start()
    with open(path, "rb") as f:
        key = follower.follow(f.fileno(), sender, 0, size - 1)
        assert key is not None and follower.following() == (1, 0)
        sending = threading.Thread(target=sender.sendfile, args=(f,), kwargs={"count": size})
        sending.start()
        try:
            assert paused.wait(20)
            # 96 MiB read, the rest waits in socket buffers or on disk: most of what was read
            # has left memory while the transfer is still open (the kernel frees the socket
            # buffers that held the last pages a little later)
            wait_until(lambda: resident_bytes(path) <= size // 2)
            assert sending.is_alive()
        finally:
            resume.set()
            sending.join()
        follower.forget(key, finished=True)      # the server closes the body, then the socket
        assert follower.following() == (0, 1)
    sender.close()
    reader.join()
    client.close()
    assert bytes(received) == data
    release_socket_buffers()
    wait_until(lambda: resident_bytes(path) == 0)      # at once, or at a later pass
    wait_until(lambda: follower.following() == (0, 0))


def test_a_download_stopped_early_keeps_the_rest_of_the_file(tmp_path):
    size = 64 * MIB
    path = written(tmp_path / "big.dat", os.urandom(size))
    sender, client = tcp_pair()
    follower = streaming.DropBehind()
    with open(path, "rb") as f:
        key = follower.follow(f.fileno(), sender, 0, size - 1)
        sending = threading.Thread(target=sender.sendfile, args=(f,),
                                   kwargs={"count": 32 * MIB})
        sending.start()
        got = 0
        while got < 32 * MIB:
            got += len(client.recv(MIB))
        sending.join()
        wait_until(lambda: resident_bytes(path) <= size - 16 * MIB)
        follower.forget(key, finished=False)
        assert follower.following() == (0, 0)
    sender.close()
    client.close()
    assert resident_bytes(path) >= size - 32 * MIB      # what was never sent stays cached


def test_a_socket_that_is_not_tcp_is_not_followed(tmp_path):
    path = tmp_path / "f.dat"
    path.write_bytes(b"x" * 4096)
    ours, theirs = socket.socketpair()
    with ours, theirs, open(path, "rb") as f:
        assert streaming.DropBehind().follow(f.fileno(), ours, 0, 4095) is None
