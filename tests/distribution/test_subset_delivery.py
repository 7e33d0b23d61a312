"""Cut files go everywhere an order goes (issue #32): an order of subset items downloaded end to
end by granary-get from a live gunicorn, and a push of cut files to a real SFTP server. Each
file is checked by its own SHA-256 (hashlib on the bytes that arrived) and its values against
numpy on the whole delivered granule, sliced by hand."""
import hashlib
import json
import os

import numpy
import pytest
import xarray

from backend.accounts import tokens
from distribution.models import Order, OrderItem

from .live_web import CLIENT, gunicorn, run_client
from .test_sftp import _granary_key, _sftp_destination
from .test_subset_orders import GHRSST, data_path, granules, raw

SUBSET = {"variables": ["analysed_sst"], "bbox": [-10, 30, 20, 50]}


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _holds_the_box(path, granule):
    """The file holds analysed_sst only, exactly the stored values inside the box."""
    sst, lat, lon = raw(data_path(granule), "analysed_sst")
    rows, cols = (lat >= 30) & (lat <= 50), (lon >= -10) & (lon <= 20)
    with xarray.open_dataset(path, mask_and_scale=False) as got:
        assert list(got.data_vars) == ["analysed_sst"]
        numpy.testing.assert_array_equal(got["analysed_sst"].values, sst[:, rows][:, :, cols])


@pytest.mark.django_db(transaction=True)
def test_granary_get_downloads_an_order_of_cut_files_and_checks_each_checksum(
        seeded, alice, inline, data_root, tmp_path):
    ordered = granules(GHRSST)
    answer = inline(alice.post, "/api/v1/orders/", {
        "granules": [g.pk for g in ordered], "subset": SUBSET}, format="json")
    assert answer.status_code == 201, answer.content
    order_id = answer.json()["id"]
    items = {i.granule_id: i for i in OrderItem.objects.filter(order_id=order_id)}
    assert {i.state for i in items.values()} == {"ready"}
    token = tokens.issue(alice.user, "granary-get")[1]
    out = tmp_path / "downloads"
    with gunicorn(data_root) as web:
        done = run_client([str(CLIENT), str(order_id), "--server", web.url, "-o", str(out)],
                          env=dict(os.environ, GRANARY_TOKEN=token))
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "granary-manifest.json").read_text())
    rows = {row["name"]: row for row in manifest["files"]}
    assert manifest["complete_percent"] == 100
    for granule in ordered:
        item = items[granule.pk]
        row = rows[item.output_name]
        assert (row["outcome"], row["checksum_type"]) == ("ok", "SHA256")
        [path] = out.rglob(item.output_name)
        assert path.stat().st_size == item.output_size
        assert _sha256(path) == item.output_checksum == row["checksum"]
        _holds_the_box(path, granule)


@pytest.mark.django_db
def test_a_push_of_cut_files_to_sftp_delivers_them_with_their_checksums(
        seeded, alice, inline, sftp_server):
    sftp_server.start(authorized_keys=_granary_key(alice))
    dest = _sftp_destination(alice, sftp_server)
    ordered = granules(GHRSST)
    answer = inline(alice.post, "/api/v1/orders/", {
        "granules": [g.pk for g in ordered], "delivery": "push", "destination": dest["id"],
        "subset": SUBSET}, format="json")
    assert answer.status_code == 201, answer.content
    order = Order.objects.get(pk=answer.json()["id"])
    assert order.state == "completed", order.error
    folder = sftp_server.root / "incoming" / f"order-{order.pk}"
    listed = (folder / "CHECKSUMS").read_text().splitlines()
    expected = []
    for granule in ordered:
        item = OrderItem.objects.get(order=order, granule=granule)
        path = folder / granule.granule_id / item.output_name
        assert path.stat().st_size == item.output_size
        assert _sha256(path) == item.output_checksum
        expected.append(f"SHA256 {item.output_checksum}  {granule.granule_id}/{item.output_name}")
        _holds_the_box(path, granule)
    assert sorted(listed) == sorted(expected)
    assert sftp_server.files() == sorted(
        [f"incoming/order-{order.pk}/{name}" for name in ("CHECKSUMS", "manifest.json")]
        + [f"incoming/order-{order.pk}/{line.split('  ')[1]}" for line in expected])
