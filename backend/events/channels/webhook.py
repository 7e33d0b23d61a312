"""Signed webhooks, as the Standard Webhooks convention has them: the body is the CloudEvents
document; `webhook-id` (the event id: the same on every retry, for de-duplication),
`webhook-timestamp` and `webhook-signature` (`v1,` base64 HMAC-SHA256 of `id.timestamp.body`
under the endpoint's secret; two signatures while a rotated secret is still honoured)."""
import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from http.cookiejar import DefaultCookiePolicy

import requests
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


def signature(secret, msg_id, timestamp, body):
    key = base64.b64decode(secret.removeprefix(PREFIX))
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
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


_local = threading.local()


def _session():
    """A session per thread: connections to an endpoint are kept alive between sends."""
    if not hasattr(_local, "session"):
        _local.session = requests.Session()
        # no cookies: one endpoint's answer never rides along to the next send
        _local.session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
    return _local.session


def send(endpoint, event):
    addresses.check_url(endpoint.url)  # again at each send: a name may resolve elsewhere now
    body = json.dumps(event.document(), separators=(",", ":")).encode()
    answer = _session().post(endpoint.url, data=body,
                             headers=headers(endpoint, str(event.uid), body),
                             timeout=(2, settings.GRANARY_EVENTS_TIMEOUT_S),
                             allow_redirects=False)
    if not 200 <= answer.status_code < 300:
        raise Refused(f"HTTP {answer.status_code}: {answer.text[:200]}", answer.status_code)
    return answer.status_code
