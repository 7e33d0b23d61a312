"""Where a webhook may point: http(s) to a public address. Loopback, private, link-local and
reserved ranges are refused unless an operator lists them in GRANARY_EVENTS_ALLOWED_NETS."""
import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

from backend.errors import DomainError

MAX_URL = 500


def allowed_nets():
    return [ipaddress.ip_network(n.strip(), strict=False)
            for n in settings.GRANARY_EVENTS_ALLOWED_NETS if n.strip()]


def check_url(url):
    """The URL, or a DomainError saying why a webhook may not be sent there."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL:
        raise DomainError(f"a webhook URL is an http(s) URL of at most {MAX_URL} characters",
                          "url")
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise DomainError(f"not a URL: {exc}", "url") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username:
        raise DomainError("a webhook URL is http:// or https://, with a host and no "
                          "credentials", "url")
    try:
        found = {info[4][0] for info in socket.getaddrinfo(parts.hostname, port,
                                                           type=socket.SOCK_STREAM)}
    except (OSError, UnicodeError) as exc:
        raise DomainError(f"{parts.hostname} does not resolve", "url") from exc
    nets = allowed_nets()
    for text in found:
        address = ipaddress.ip_address(text.split("%")[0])
        if not address.is_global and not any(address in net for net in nets):
            raise DomainError(f"{parts.hostname} is a private, loopback or reserved address "
                              f"({address}): webhooks go to public addresses unless an "
                              "operator allows the range", "url")
    return url
