"""HTTP as a client meets it under chaos: the web server, the database or the broker may be
down for a moment, so each call is retried (connection refused, reset, 5xx) until it answers
or its time is up. Idempotent calls only, or calls made idempotent by an Idempotency-Key."""
import hashlib
import http.client
import time
import urllib.error
import urllib.request

from bench import live

RETRYABLE = (OSError, http.client.HTTPException, ValueError)


class Unanswered(RuntimeError):
    """The server never gave a usable answer in time."""


class Api:
    """One account's API client (token auth) with retries; counts the 5xx it met."""

    def __init__(self, base_url, token, patience_s=240):
        self.live = live.Live(base_url, token, {}, {})
        self.base_url, self.token, self.patience_s = base_url, token, patience_s
        self.server_errors = 0

    def call(self, method, path, body=None, ok=(200, 201, 202), **kwargs):
        """(status, answer); retried until the status is in `ok` or a 4xx other than 409/429
        (a 4xx is the server's answer, not an outage)."""
        deadline = time.monotonic() + self.patience_s
        last = None
        while time.monotonic() < deadline:
            try:
                status, answer = self.live.call(method, path, body, timeout=120, **kwargs)
            except RETRYABLE as exc:
                last = repr(exc)
            else:
                if status in ok or (400 <= status < 500 and status not in (409, 429)):
                    return status, answer
                if status >= 500:
                    self.server_errors += 1
                last = f"{status}: {answer}"
            time.sleep(1)
        raise Unanswered(f"{method} {path}: no answer in {self.patience_s} s (last: {last})")

    def fetch(self, url):
        """(status, md5 hex, size) of a download; retried while the server is away. A 503 is
        the archive's answer (the file is not in the cache now): returned, as a 4xx is."""
        deadline = time.monotonic() + self.patience_s
        last = None
        while time.monotonic() < deadline:
            try:
                return _download(url)
            except urllib.error.HTTPError as exc:
                if (exc.code < 500 and exc.code != 429) or exc.code == 503:
                    return exc.code, None, 0
                self.server_errors += 1
                last = exc.code
            except RETRYABLE as exc:
                last = repr(exc)
            time.sleep(1)
        raise Unanswered(f"GET {url}: no answer in {self.patience_s} s (last: {last})")


def _download(url):
    """A whole download; a body shorter than its Content-Length (the server killed mid-send, or
    a block that failed its check cut short) raises IncompleteRead, to be asked again, as
    curl and granary-get do: http.client's read(n) returns the short body without a word."""
    digest, size = hashlib.md5(), 0
    with urllib.request.urlopen(url, timeout=120) as answer:
        while chunk := answer.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
        declared = answer.headers.get("Content-Length")
        if declared is not None and size != int(declared):
            raise http.client.IncompleteRead(b"", int(declared) - size)
        return answer.status, digest.hexdigest(), size
