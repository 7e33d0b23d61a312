"""Signed webhooks, as the Standard Webhooks convention has them: the body is the CloudEvents
document; `webhook-id` (the event id: the same on every retry, for de-duplication),
`webhook-timestamp` and `webhook-signature` (`v1,` base64 HMAC-SHA256 of `id.timestamp.body`
under the endpoint's secret; two signatures while a rotated secret is still honoured)."""
import base64
import functools
import hmac
import os
import secrets
import threading
import time

import urllib3
from django.conf import settings
from django.utils import timezone

from .. import addresses

PREFIX = "whsec_"


class Refused(Exception):
    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def new_secret():
    return PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


@functools.lru_cache(maxsize=4096)
def _key(secret):
    """The secret's key bytes, decoded once per secret, not once per send."""
    return base64.b64decode(secret.removeprefix(PREFIX))


def signature(secret, msg_id, timestamp, body):
    mac = hmac.digest(_key(secret), f"{msg_id}.{timestamp}.".encode() + body, "sha256")
    return "v1," + base64.b64encode(mac).decode()


def headers(endpoint, msg_id, body, now=None):
    timestamp = int(now if now is not None else time.time())
    keys = [endpoint.secret]
    if endpoint.previous_secret and endpoint.previous_until and (
            endpoint.previous_until > timezone.now()):
        keys.append(endpoint.previous_secret)
    return {"content-type": "application/cloudevents+json",
            "webhook-id": msg_id, "webhook-timestamp": str(timestamp),
            "webhook-signature": " ".join(signature(k, msg_id, timestamp, body) for k in keys)}


_pools = {"pid": None, "by_endpoint": {}, "checked": {}}
_lock = threading.Lock()
CHECKED_S = 60   # an endpoint's URL is checked again (its name resolved) after this long
MAX_POOLS = 1000


def _pool(endpoint):
    """The endpoint's own kept-alive connection in this process (made after a fork, never
    shared with a parent) and the path it posts to. One per endpoint, not per host: many
    endpoints on one receiver (a site's paths) would otherwise share a host's pool and drop
    connections. A pool of the URL's host, not a PoolManager: no URL parsed and no pool
    looked up per send. No cookies, no redirects, no retries (the lane retries)."""
    with _lock:
        if _pools["pid"] != os.getpid():
            _pools.update(pid=os.getpid(), by_endpoint={}, checked={})
        pools = _pools["by_endpoint"]
        key = (endpoint.pk, endpoint.url)
        if key not in pools:
            if len(pools) >= MAX_POOLS:
                pools.pop(next(iter(pools)))[0].close()   # the oldest made goes
            pools[key] = (urllib3.connection_from_url(endpoint.url, maxsize=1, block=False,
                                                      retries=False),
                          urllib3.util.parse_url(endpoint.url).request_uri)
        return pools[key]


def _check(url):
    """check_url again once a minute per URL: a name may resolve elsewhere by now."""
    now = time.monotonic()
    if now - _pools["checked"].get(url, -CHECKED_S) >= CHECKED_S:
        addresses.check_url(url)
        _pools["checked"][url] = now


def send(endpoint, event):
    pool, path = _pool(endpoint)
    _check(endpoint.url)
    body = event.body
    answer = pool.urlopen(
        "POST", path, body=body, headers=headers(endpoint, str(event.uid), body),
        timeout=urllib3.Timeout(connect=min(settings.GRANARY_EVENTS_CONNECT_TIMEOUT_S,
                                            settings.GRANARY_EVENTS_TIMEOUT_S),
                                read=settings.GRANARY_EVENTS_TIMEOUT_S),
        redirect=False, preload_content=False, assert_same_host=False)
    try:
        text = answer.read(2000, decode_content=True) if not 200 <= answer.status < 300 else b""
        answer.drain_conn()
    finally:
        answer.release_conn()
    if not 200 <= answer.status < 300:
        raise Refused(f"HTTP {answer.status}: {text[:200].decode(errors='replace')}",
                      answer.status)
    return answer.status
