"""The chaos run's client judges a download by its whole body: one cut short (the web server
killed mid-send, as the run does) is asked again, never counted as a corrupt file served.
Found when a kill during a download made urllib hand back an empty 200 (CI, 2026-11-29)."""
import hashlib
import http.client
import socket
import threading

import pytest

from bench.chaos.client import _download


def serve_once(body, declared):
    """A one-shot HTTP server on a free loopback port: it declares `declared` bytes, sends
    `body`, then closes the connection. Returns its URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def answer():
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                               b"Content-Length: %d\r\n\r\n" % declared + body)
        listener.close()

    threading.Thread(target=answer, daemon=True).start()
    return f"http://127.0.0.1:{port}/file"


def test_a_body_cut_short_is_an_incomplete_read_not_a_download():
    with pytest.raises(http.client.IncompleteRead):
        _download(serve_once(b"x" * 10, 100))


def test_an_empty_body_where_bytes_were_declared_is_an_incomplete_read():
    with pytest.raises(http.client.IncompleteRead):
        _download(serve_once(b"", 41955))


def test_a_whole_body_is_its_status_md5_and_size():
    body = bytes(range(256)) * 4
    assert _download(serve_once(body, len(body))) == (200, hashlib.md5(body).hexdigest(),
                                                      len(body))
