"""Signed links: the URLs of an order's files, and its script (granary-get) to fetch them all."""
import base64
import json
from pathlib import Path

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.core.signing import Signer

from ..models import Order, OrderItem, Served


def sign(file_id, order_id, expires=None):
    """The signature binding a link to its file and its order, made with the install's secret
    key as it is now: a new key invalidates every link signed before. How long it works is the
    order's business (see downloads), not the link's; links signed before that also bound an
    expiry (`expires`), still honoured until then."""
    if expires is not None:
        return Signer(salt="distribution.download").signature(
            f"{file_id}:{order_id}:{int(expires)}")
    return Signer(salt="distribution.download.order").signature(f"{file_id}:{order_id}")


def site_url(site=None):
    """The site's base URL: the request's when there is one, else the configured one."""
    return (site or settings.GRANARY_SITE_URL).rstrip("/") + "/"


def download_url(item, site=None):
    """The item's link: valid while the item is (ready, or waiting: it answers 503 with
    Retry-After until the file is staged), whatever its expiry becomes meanwhile."""
    return (f"{site_url(site)}api/v1/files/{item.file_id}/download?order={item.order_id}"
            f"&sig={sign(item.file_id, item.order_id)}")


def links(order, site=None):
    """Ready items with their signed URL and expiry; waiting ones with theirs too (it answers
    503 with Retry-After until the file is staged, so a client polls it) and the estimate;
    failed ones with the reason; cut to nothing (empty) with the reason. The order's expiry
    is each ready link's: links work while the order is open, however long its download
    takes."""
    items = order.items.select_related("file", "granule__collection")
    live = order.state not in (Order.State.CANCELLED, Order.State.EXPIRED)
    ready, failed, waiting, empty = [], [], [], []
    for item in items:
        served = Served(item)
        row = {"item": item.pk, "file_id": item.file_id, "granule": str(item.granule),
               "name": served.name, "size": served.size,
               "checksum_type": served.checksum_type, "checksum": served.checksum}
        if item.state == OrderItem.State.READY and live:
            ready.append({**row, "url": download_url(item, site), "expires_at": item.expires_at})
        elif item.state == OrderItem.State.FAILED:
            failed.append({**row, "error": item.error})
        elif item.state == OrderItem.State.EMPTY:
            empty.append({**row, "reason": item.error})
        elif item.state == OrderItem.State.WAITING:
            waiting.append({**row, "eta_s": item.eta_s, "expires_at": None,
                            **({"url": download_url(item, site)} if live else {})})
    return {"order": order.pk, "state": order.state, "expires_at": order.expires_at,
            "links": ready, "failed": failed, "waiting": waiting, "empty": empty,
            "subset": order.subset or None}


CLIENT = Path(settings.BASE_DIR) / "scripts" / "granary-get"
_EMBED = "ORDER = None  # an order's script carries its listing here (base64 of the links JSON)"


def client_source():
    """granary-get as shipped: the standalone downloader (standard library only)."""
    return CLIENT.read_text(encoding="utf-8")


def download_script(order, site=None):
    """The order's script: granary-get with the order's links inside, so it needs no token.
    It resumes, retries, waits for files still staged (their links answer 503 with
    Retry-After), checks every checksum and writes a manifest of what failed and why. The
    listing goes in as base64 JSON: names from the catalog can never become code."""
    base = site_url(site)
    listing = {**links(order, site), "links_url": f"{base}api/v1/orders/{order.pk}/links/",
               "site": base.rstrip("/")}
    packed = base64.b64encode(json.dumps(listing, cls=DjangoJSONEncoder).encode()).decode()
    source = client_source()
    if source.count(_EMBED) != 1:
        raise RuntimeError(f"{CLIENT} lost its ORDER line")
    header = (f"# Granary order {order.pk}: python3 granary-order-{order.pk}.py [-o FOLDER]; "
              "run it again to resume.\n")
    first, rest = source.split("\n", 1)
    return first + "\n" + header + rest.replace(_EMBED, f'ORDER = "{packed}"')
