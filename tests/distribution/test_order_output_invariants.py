"""The orders' space holds only what an item still delivers, and every ready item's output is
there: checked by the archive's invariants (so by reconciliation and the tests after each step)
and repaired by a run. Expected values come from the files this test puts there itself."""
import os
import time
from pathlib import Path

import pytest

from backend.archive import invariants
from backend.archive.services import reconcile
from backend.errors import DomainError
from distribution.models import OrderItem
from distribution.services import order_outputs

from .test_subset_orders import GHRSST, granules, order

pytestmark = pytest.mark.django_db
KINDS = (order_outputs.ORDER_OUTPUT_ORPHAN, order_outputs.ORDER_OUTPUT_MISSING)


def found():
    return sorted((v.kind, v.extra.get("path") or v.extra.get("item"))
                  for v in invariants.check_records() if v.kind in KINDS)


def aged(path, settings, text=b"left behind"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text)
    old = time.time() - settings.GRANARY_SUBSET_STALE_S - 60
    os.utime(path, (old, old))
    return path


@pytest.fixture
def cut(seeded, alice, inline):
    """An order of the GHRSST granules cut to a box: two ready items with outputs."""
    links = order(alice, inline, granules(GHRSST), {"variables": ["analysed_sst"],
                                                    "bbox": [-10, 30, 20, 50]})
    assert links["state"] == "ready" and len(links["links"]) == 2
    return links["order"]


def test_ready_outputs_in_their_place_break_no_promise(cut):
    assert found() == []


def test_left_over_files_are_orphans_once_settled_and_a_run_deletes_only_them(cut, settings):
    root = Path(settings.ORDERS_ROOT)
    kept = [p for p in root.rglob("*") if p.is_file()]
    assert len(kept) == 2
    item = OrderItem.objects.filter(order_id=cut).first()
    folder = root / f"order-{cut}" / item.granule.granule_id
    stray = aged(folder / "second-try.nc", settings)
    partial = aged(folder / ".analysed.nc.partial", settings)
    gone_order = aged(root / "order-99999" / "G1" / "x.nc", settings)
    fresh = folder / "being-renamed.nc"
    fresh.write_bytes(b"a transform is about to record me")

    expected = sorted((order_outputs.ORDER_OUTPUT_ORPHAN, str(p.relative_to(root)))
                      for p in (stray, partial, gone_order))
    assert found() == expected

    run = reconcile.reconcile(repair=True)
    repaired = run.discrepancies.filter(kind=order_outputs.ORDER_OUTPUT_ORPHAN)
    assert repaired.count() == 3
    assert all(d.repaired_at and d.outcome.startswith("deleted") for d in repaired)
    assert not stray.exists() and not partial.exists() and not gone_order.exists()
    assert fresh.exists() and all(p.exists() for p in kept)


def test_a_ready_item_whose_output_is_gone_is_reported_and_sent_back_to_be_cut(
        cut, settings, inline):
    item = OrderItem.objects.filter(order_id=cut).select_related("granule").first()
    path = Path(settings.ORDERS_ROOT) / f"order-{cut}" / item.granule.granule_id / \
        item.output_name
    path.unlink()
    assert found() == [(order_outputs.ORDER_OUTPUT_MISSING, item.pk)]

    run = inline(reconcile.reconcile, repair=True)
    missing = run.discrepancies.get(kind=order_outputs.ORDER_OUTPUT_MISSING)
    assert missing.outcome == "sent back to be cut again"
    item.refresh_from_db()
    assert item.state == OrderItem.State.READY and path.stat().st_size == item.output_size
    assert found() == []


def test_a_path_that_climbs_out_of_the_orders_space_is_never_deleted(cut, settings, tmp_path):
    outside = tmp_path / "precious.txt"
    outside.write_bytes(b"not ours")
    climb = os.path.relpath(outside, settings.ORDERS_ROOT)
    assert climb.startswith("..")
    discrepancy = type("D", (), {"extra": {"path": climb}})()
    with pytest.raises(DomainError, match="not in the orders' space"):
        order_outputs.delete_orphan(discrepancy)
    assert outside.exists()
