"""An order as JSON in plain Python: the values OrderSerializer's and OrderDetailSerializer's
fields give, without DRF calling a field object for each of an item's ~20 values nor the ORM
building an item, its file, granule and collection for each row. The order page is refreshed
every few seconds while its files come back from tape (lib/api/orders), and the serializers
and the items' prefetch were most of its CPU (issue #33, the users' CPU). The serializers still
declare the fields, for the schema; tests/distribution/test_order_rows.py holds the renderings
equal."""
from dataclasses import dataclass

from django.utils import timezone

from backend.catalog.granule_rows import moment
from backend.fixed_reads import FixedRead

from .models import Order, OrderItem

# what an order's page shows of each item, read with its file, granule and collection
_ITEM_FIELDS = (
    "id", "granule_id", "granule__collection__short_name", "granule__collection__version",
    "granule__granule_id", "file_id", "file__name", "file__size", "file__checksum_type",
    "file__checksum", "output_name", "output_size", "output_checksum_type", "output_checksum",
    "state", "in_cache", "recall_request_id", "eta_s", "error", "ready_at", "provenance",
    "expires_at", "downloaded_at", "pushed_at",
)
_ITEMS = FixedRead(lambda order_id: OrderItem.objects.filter(order_id=order_id).order_by(
    *OrderItem._meta.ordering).values_list(*_ITEM_FIELDS), [int])
_STATE_LABELS = {state.value: str(state.label) for state in OrderItem.State}
_ORDER_LABELS = {state.value: str(state.label) for state in Order.State}


@dataclass
class _Progress:
    """What an order's counts and in_parts read of an item."""

    state: str
    recall_request_id: int | None
    in_cache: bool


def waits_for_its_part(order_state, item):
    """A waiting item of a staging order that the order has not asked the archive for yet."""
    return (item.state == OrderItem.State.WAITING and item.recall_request_id is None
            and not item.in_cache and order_state == Order.State.STAGING)


def order_row(order, items=None, zone=None):
    """OrderSerializer's representation of `order` (its user loaded; `items` what it reads of
    them, else its prefetched items)."""
    zone = zone or timezone.get_current_timezone()
    if items is None:
        items = order.items.all()
    counts = dict.fromkeys(OrderItem.State.values, 0)
    for item in items:
        counts[item.state] += 1
    return {
        "id": order.pk, "user": order.user.username, "state": order.state,
        "state_label": _ORDER_LABELS.get(order.state, order.state),
        "delivery": order.delivery, "destination": order.destination_id,
        "subscription": order.subscription_id, "total_bytes": int(order.total_bytes),
        "counts": counts,
        "in_parts": any(waits_for_its_part(order.state, item) for item in items),
        "error": order.error, "subset": order.subset,
        "created_at": moment(order.created_at, zone), "updated_at": moment(order.updated_at, zone),
        "ready_at": moment(order.ready_at, zone), "expires_at": moment(order.expires_at, zone),
    }


def order_detail_row(order):
    """OrderDetailSerializer's representation: the order's row with its items, read in one
    statement compiled once per connection (backend.fixed_reads)."""
    zone = timezone.get_current_timezone()
    rows = [dict(zip(_ITEM_FIELDS, row, strict=True)) for row in _ITEMS.rows(order.pk)]
    progress = [_Progress(r["state"], r["recall_request_id"], r["in_cache"]) for r in rows]
    return {**order_row(order, progress, zone),
            "items": [_item(row, p, order.state, zone)
                      for row, p in zip(rows, progress, strict=True)]}


def _item(row, progress, order_state, zone):
    cut = row["output_size"] is not None       # its output, when cut to a subset (Served)
    return {
        "id": row["id"], "granule_pk": row["granule_id"],
        "granule": f"{row['granule__collection__short_name']}."
                   f"{row['granule__collection__version']}:{row['granule__granule_id']}",
        "file_id": row["file_id"],
        "name": row["output_name"] if cut else row["file__name"],
        "size": int(row["output_size"] if cut else row["file__size"]),
        "checksum_type": row["output_checksum_type"] if cut else row["file__checksum_type"],
        "checksum": row["output_checksum"] if cut else row["file__checksum"],
        "state": row["state"], "state_label": _STATE_LABELS.get(row["state"], row["state"]),
        "residency": "cache" if row["in_cache"] else "tape",
        "next_part": waits_for_its_part(order_state, progress),
        "eta_s": None if row["eta_s"] is None else float(row["eta_s"]),
        "error": row["error"], "ready_at": moment(row["ready_at"], zone),
        "provenance": row["provenance"], "expires_at": moment(row["expires_at"], zone),
        "downloaded_at": moment(row["downloaded_at"], zone),
        "pushed_at": moment(row["pushed_at"], zone),
    }
