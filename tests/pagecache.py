"""How much of a file the page cache holds, as util-linux fincore reports it, and what the
kernel must be nudged to do before it can be dropped."""
import os
import socket
import subprocess
import time


def resident_bytes(path):
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", str(path)],
                         check=True, capture_output=True, text=True).stdout
    return int(out)


def release_socket_buffers():
    """Have every CPU free the socket buffers it was left to free.

    A buffer received on one CPU is freed by the CPU that made it, when that CPU next handles
    the network; on an idle test machine that can be never, and the buffer keeps the page cache
    pages a sendfile() put in it. A short loopback exchange on each CPU does it."""
    cpus = os.sched_getaffinity(0)
    try:
        for cpu in sorted(cpus):
            os.sched_setaffinity(0, {cpu})
            client, peer = tcp_pair()
            with client, peer:
                client.sendall(b"x")
                peer.recv(1)
    finally:
        os.sched_setaffinity(0, cpus)


def tcp_pair():
    """(server side, client side) of a TCP connection on loopback."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname())
        sender, _ = server.accept()
    return sender, client


def wait_until(condition, seconds=20):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
