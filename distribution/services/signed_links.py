"""Signed links: the URLs of an order's ready files and the script that fetches them all."""
from django.conf import settings
from django.core.signing import Signer

from ..models import Order, OrderItem


def sign(file_id, order_id, expires):
    """The signature binding a link to its file, its order and its expiry, made with the
    install's secret key as it is now: a new key invalidates every link signed before."""
    return Signer(salt="distribution.download").signature(f"{file_id}:{order_id}:{int(expires)}")


def site_url(site=None):
    """The site's base URL: the request's when there is one, else the configured one."""
    return (site or settings.GRANARY_SITE_URL).rstrip("/") + "/"


def download_url(item, site=None):
    expires = int(item.expires_at.timestamp())
    return (f"{site_url(site)}api/v1/files/{item.file_id}/download?order={item.order_id}"
            f"&expires={expires}&sig={sign(item.file_id, item.order_id, expires)}")


def links(order, site=None):
    """Ready items with their signed URL; failed and waiting ones listed beside them."""
    items = order.items.select_related("file", "granule__collection")
    ready, failed, waiting = [], [], []
    for item in items:
        row = {"item": item.pk, "file_id": item.file_id, "granule": str(item.granule),
               "name": item.file.name, "size": item.file.size,
               "checksum_type": item.file.checksum_type, "checksum": item.file.checksum}
        if item.state == OrderItem.State.READY and order.state not in (Order.State.CANCELLED,
                                                                       Order.State.EXPIRED):
            ready.append({**row, "url": download_url(item, site), "expires_at": item.expires_at})
        elif item.state == OrderItem.State.FAILED:
            failed.append({**row, "error": item.error})
        elif item.state == OrderItem.State.WAITING:
            waiting.append({**row, "eta_s": item.eta_s})
    return {"order": order.pk, "state": order.state, "expires_at": order.expires_at,
            "links": ready, "failed": failed, "waiting": waiting}


def download_script(order, site=None):
    """A bash script that fetches every ready file with curl, resumes, checks checksums and
    carries on past a failed file (one bad file must not stall the rest: the ESPA lesson)."""
    listing = links(order, site)
    tools = {"MD5": "md5sum", "SHA256": "sha256sum"}
    lines = [
        "#!/usr/bin/env bash",
        f"# Granary order {order.pk}: {len(listing['links'])} files, links valid until "
        f"{order.expires_at:%Y-%m-%d %H:%M} UTC." if order.expires_at else
        f"# Granary order {order.pk}: {len(listing['links'])} files.",
        "set -u",
        "failed=0",
        "fetch() {  # url name checksum-tool checksum",
        '  if ! curl --fail --location --retry 3 --continue-at - --output "$2" "$1"; then',
        '    echo "FAILED: $2" >&2; failed=$((failed + 1)); return',
        "  fi",
        '  if [ -n "$3" ] && ! echo "$4  $2" | "$3" --check --quiet -; then',
        '    echo "CHECKSUM MISMATCH: $2" >&2; failed=$((failed + 1))',
        "  fi",
        "}",
    ]
    for row in listing["links"]:
        tool = tools.get(row["checksum_type"], "")
        checksum = row["checksum"] if tool else ""
        lines.append(f"fetch '{row['url']}' '{_shell_safe(row['name'])}' '{tool}' '{checksum}'")
    for row in listing["failed"]:
        lines.append(f"echo 'not available: {_shell_safe(row['name'])}' >&2")
    lines += ['echo "done; $failed failed"', '[ "$failed" -eq 0 ]', ""]
    return "\n".join(lines)


def _shell_safe(name):
    return name.replace("'", "")
