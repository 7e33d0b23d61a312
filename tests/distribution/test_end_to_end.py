"""An order for granules on tape only: submitted -> staging -> ready -> downloaded, byte-exact."""
import base64
import hashlib
import json
import re

import pytest
from django.core import mail

from backend.archive import services as archive
from backend.archive.models import CacheEntry
from backend.events.models import Event
from backend.metrics.models import TransferRecord
from distribution.models import Order
from distribution.services import orders

from .conftest import body, evict

pytestmark = pytest.mark.django_db


def test_tape_only_order_is_recalled_then_downloaded(alice, collection, archived, inline,
                                                     django_capture_on_commit_callbacks):
    granules = archived(collection, 2)
    evict(granules)

    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = alice.post("/api/v1/orders/", {"granules": [g.pk for g in granules]},
                              format="json")
    assert response.status_code == 201, response.json()
    order = response.json()
    assert order["state"] == "submitted" and len(order["items"]) == 4
    assert queued, "the order is handed to a worker on commit"

    with django_capture_on_commit_callbacks(execute=False):
        orders.refresh_order(order["id"])  # recalls asked for; no mover has run yet
    detail = alice.get(f"/api/v1/orders/{order['id']}/").json()
    assert detail["state"] == "staging"
    assert {i["state"] for i in detail["items"]} == {"waiting"}
    assert {i["residency"] for i in detail["items"]} == {"tape"}
    assert all(i["eta_s"] and i["eta_s"] > 0 for i in detail["items"])
    assert alice.get(f"/api/v1/orders/{order['id']}/links/").json()["links"] == []

    # the archive tier recalls the files; each recall refreshes the order at once (no sweep)
    inline(archive.run_until_idle)
    detail = alice.get(f"/api/v1/orders/{order['id']}/").json()
    assert detail["state"] == "ready"
    assert {i["residency"] for i in detail["items"]} == {"cache"}
    assert detail["expires_at"]
    order_row = Order.objects.get(pk=order["id"])
    assert not CacheEntry.objects.filter(
        file__granule__in=granules, keep_until__lt=order_row.expires_at).exists()
    assert any("is ready" in m.subject for m in mail.outbox)

    links = alice.get(f"/api/v1/orders/{order['id']}/links/").json()
    assert len(links["links"]) == 4 and not links["failed"]
    anonymous = alice.__class__()
    for link in links["links"]:
        response = anonymous.get(link["url"].replace("http://testserver", ""))
        assert response.status_code == 200
        data = body(response)
        assert int(response["Content-Length"]) == len(data) == link["size"]
        assert hashlib.md5(data).hexdigest() == link["checksum"] == response["X-Checksum-Md5"]
        assert response["Digest"].startswith("md5=")
    assert TransferRecord.objects.filter(direction="distribution").count() == 4
    assert Order.objects.get(pk=order["id"]).state == "completed"
    types = list(Event.objects.filter(subject=f"orders/{order['id']}").order_by("pk")
                 .values_list("type", flat=True))
    assert types == ["order.ready", "order.completed"]

    script = alice.get(f"/api/v1/orders/{order['id']}/script/")
    assert script.status_code == 200
    text = script.content.decode()
    assert text.startswith("#!/usr/bin/env python3\n")
    [packed] = re.findall(r'^ORDER = "([A-Za-z0-9+/=]+)"$', text, flags=re.M)
    inside = json.loads(base64.b64decode(packed))
    assert [row["url"] for row in inside["links"]] == [row["url"] for row in links["links"]]
    compile(text, "granary-order.py", "exec")
