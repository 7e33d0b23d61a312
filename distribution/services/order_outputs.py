"""Distribution's promise about the orders' space, checked with the archive's own (tests after
each step, reconciliation): every file under ORDERS_ROOT is the recorded output of an item
that will still be delivered, and every ready item's output is there at its recorded size.

A file is judged only once it has been left alone for GRANARY_SUBSET_STALE_S: a transform
writes `.<name>.partial` and renames it before its item records the name, so a younger file
may be one a live worker is about to record. An orphan (a transform's worker died after the
rename, a partial it never finished, an output whose item was cancelled while it was written)
holds disk that no one will download: its repair deletes it. A missing output is sent back to
be cut again, as a download that found it gone would.
"""
import os
import time
from pathlib import Path

from django.conf import settings

from backend.archive import services as archive
from backend.errors import DomainError

from ..models import OrderItem
from .transforms import open_output, output_path

ORDER_OUTPUT_ORPHAN = "order_output_orphan"
ORDER_OUTPUT_MISSING = "order_output_missing"
# items whose output is deleted, or never made
GONE = (OrderItem.State.EXPIRED, OrderItem.State.CANCELLED, OrderItem.State.FAILED)


def _named():
    """(order id, granule id, output name) of every output an item still delivers."""
    return set(OrderItem.objects.exclude(output_name="").exclude(state__in=GONE)
               .values_list("order_id", "granule__granule_id", "output_name"))


def _files(root):
    """(path, parts below root) of every file under `root`, symbolic links not followed."""
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            yield path, path.relative_to(root).parts


def _owner(parts):
    """(order id, granule id, name) a path below ORDERS_ROOT would belong to, or None."""
    if len(parts) != 3 or not parts[0].startswith("order-"):
        return None
    number = parts[0].removeprefix("order-")
    return (int(number), parts[1], parts[2]) if number.isdigit() else None


def orphans(now=None):
    root = Path(settings.ORDERS_ROOT)
    if not root.is_dir():
        return []
    settled = (now or time.time()) - settings.GRANARY_SUBSET_STALE_S
    named, found = _named(), []
    for path, parts in _files(root):
        try:
            stat = path.lstat()
        except FileNotFoundError:
            continue
        if stat.st_mtime > settled or _owner(parts) in named:
            continue
        relative = "/".join(parts)
        found.append(archive.Violation(
            ORDER_OUTPUT_ORPHAN,
            f"{relative} ({stat.st_size} bytes) in the orders' space is no item's output",
            extra={"path": relative, "size": stat.st_size}))
    return found


def missing():
    found = []
    ready = (OrderItem.objects.filter(state=OrderItem.State.READY).exclude(output_name="")
             .select_related("granule", "file"))
    for item in ready.iterator(chunk_size=2000):
        path = output_path(item)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            size = None
        if size != item.output_size:
            seen = "is gone" if size is None else f"has {size} bytes, not {item.output_size}"
            found.append(archive.Violation(
                ORDER_OUTPUT_MISSING,
                f"order {item.order_id}: the output of {item.file.name} {seen}",
                file_id=item.file_id, extra={"order": item.order_id, "item": item.pk}))
    return found


def check():
    return orphans() + missing()


def delete_orphan(discrepancy):
    """Delete an orphan found by a run, if it is still one (no item named it since)."""
    relative = discrepancy.extra.get("path", "")
    root = Path(settings.ORDERS_ROOT).resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root) or path == root:
        raise DomainError(f"{relative!r} is not in the orders' space")
    if _owner(path.relative_to(root).parts) in _named():
        return "kept: an item names it now"
    try:
        if path.lstat().st_mtime > time.time() - settings.GRANARY_SUBSET_STALE_S:
            return "kept: it was written again since"
        path.unlink()
    except FileNotFoundError:
        return "already gone"
    return f"deleted {relative}"


def cut_again(discrepancy):
    """Send an item whose output is gone back to be cut (nothing to do if it is back)."""
    item = (OrderItem.objects.select_related("granule", "file")
            .filter(pk=discrepancy.extra.get("item")).first())
    if item is None or item.state != OrderItem.State.READY or not item.output_name:
        return "the item no longer waits on that output"
    try:
        open_output(item).close()
    except archive.ArchiveError:
        return "sent back to be cut again"
    return "the output is there again"


def register():
    archive.register_check("distribution.order_outputs", check, repairs={
        ORDER_OUTPUT_ORPHAN: ("delete the file", delete_orphan),
        ORDER_OUTPUT_MISSING: ("cut the item again", cut_again),
    })
