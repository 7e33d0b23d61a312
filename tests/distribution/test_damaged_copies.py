"""An order whose files have no readable copy left ends with the reason, not "staging" forever."""
import pytest

from backend.archive import services as archive
from backend.archive.models import FileCopy
from backend.archive.services import paths
from distribution.services import upkeep

from .conftest import evict

pytestmark = pytest.mark.django_db


def test_an_order_of_a_file_with_every_copy_damaged_fails_with_the_reason(
        alice, collection, archived, inline):
    good, lost = archived(collection, 2)
    evict([good, lost])
    for copy in FileCopy.objects.filter(file__granule=lost):
        with open(paths.volume_path(copy.volume), "r+b") as volume:
            volume.seek(copy.data_offset + 3)
            byte = volume.read(1)
            volume.seek(copy.data_offset + 3)
            volume.write(bytes([byte[0] ^ 0x01]))

    response = inline(alice.post, "/api/v1/orders/",
                      {"granules": [good.pk, lost.pk]}, format="json")
    assert response.status_code == 201
    inline(archive.run_until_idle)
    inline(upkeep.sweep)

    order = alice.get(f"/api/v1/orders/{response.json()['id']}/").json()
    assert order["state"] == "partially_ready"
    by_granule = {}
    for item in order["items"]:
        by_granule.setdefault(item["granule_pk"], set()).add(item["state"])
    assert by_granule[good.pk] == {"ready"}
    assert "failed" in by_granule[lost.pk]
    links = alice.get(f"/api/v1/orders/{order['id']}/links/").json()
    assert any("no readable copy" in row["error"] for row in links["failed"])
