"""The operator's granule API: list (filter, cursor paging, state counts), one granule's page
with its files, copies and timeline, and the lifecycle actions with their refusals."""
import pytest

from backend.accounts.models import AuditEvent
from backend.archive import services as archive
from backend.archive.models import Bucket, FileCopy
from backend.archive.services import cache
from backend.catalog.models import Granule
from distribution.models import Order
from ingest.models import IngestGranule, IngestRequest
from tests.archive_fixtures import archived_collection, staged_granule
from tests.distribution import conftest as distribution
from tests.factories import CollectionFactory, GranuleFactory, ProviderFactory
from tests.s3_server import ACCESS_KEY, SECRET_KEY

# distribution's archive with real bytes and its clients, over the console's own fixtures
archive_layout, archived = distribution.archive_layout, distribution.archived
collection, inline = distribution.collection, distribution.inline
alice, operator = distribution.alice, distribution.operator

pytestmark = pytest.mark.django_db
URL = "/api/v1/console/granules/"


def _walk(client, url):
    """Every row of a list, following next links; the pages never repeat a row."""
    rows, pages = [], 0
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.json()
        body = response.json()
        rows += body["results"]
        url, pages = body["next"], pages + 1
    assert len({r["id"] for r in rows}) == len(rows)
    return rows, pages


def test_list_filters_pages_and_counts(operator):
    coll = CollectionFactory(short_name="MOD09", version="061")
    prov = ProviderFactory(name="LAADS")
    request = IngestRequest.objects.create(provider=prov, way="bulk")
    states = ["archived", "failed", "withdrawn", "deleted"]
    made = [GranuleFactory(collection=coll, granule_id=f"MOD09.A{n:03d}", state=states[n % 4])
            for n in range(37)]
    GranuleFactory(granule_id="OTHER.1")
    for n, g in enumerate(made[:20]):
        IngestGranule.objects.create(request=request, position=n, collection_key=coll.key,
                                     granule_id=g.granule_id, spec={}, catalog_granule=g)
    rows, pages = _walk(operator, f"{URL}?granule_id=mod09.a0*&limit=10&ordering=granule_id")
    want = sorted(g.granule_id for g in made if g.granule_id.startswith("MOD09.A0"))
    assert [r["granule_id"] for r in rows] == want and pages == -(-len(want) // 10)
    rows, _ = _walk(operator, f"{URL}?provider=LAADS&state=archived,failed&limit=10")
    assert {r["id"] for r in rows} == {g.pk for g in made[:20] if g.state in ("archived",
                                                                             "failed")}
    assert {r["provider"] for r in rows} == {"LAADS"}
    counts = operator.get(f"{URL}counts/?collection=MOD09.061&state=failed").json()
    assert counts["states"]["archived"] == sum(g.state == "archived" for g in made)
    assert counts["states"]["deleted"] == sum(g.state == "deleted" for g in made)
    assert counts["total"] == 37


@pytest.mark.parametrize("query, field", [
    ("state=gone", "state"), ("collection=NOPE.1", "collection"), ("start=junk", "start"),
    ("limit=zero", "limit"), ("cursor=abc", "cursor"), ("ordering=secret", "ordering"),
    ("colour=red", "filters"),
])
def test_bad_list_queries_are_400(operator, query, field):
    response = operator.get(f"{URL}?{query}")
    assert response.status_code == 400
    assert field in response.json()["detail"]


def test_granule_page_shows_files_copies_and_timeline(operator, alice, collection, archived,
                                                      inline):
    [granule] = archived(collection, 1, sizes=(3000, 500))
    inline(alice.post, "/api/v1/orders/", {"granules": [granule.pk]}, format="json")
    page = operator.get(f"{URL}{granule.pk}/").json()
    assert page["granule"]["granule_id"] == granule.granule_id
    assert page["retired_reason"] is None
    assert [f["size"] for f in page["files"]] == sorted(
        [3000, 500], key=lambda s: [f.size for f in granule.files.order_by("name")].index(s))
    for f in page["files"]:
        assert sorted(c["copy_number"] for c in f["copies"]) == [1, 2]
        assert {c["volume_group"] for c in f["copies"]} == {"primary", "backup"}
        assert all(c["state"] == "verified" and c["verified_at"] for c in f["copies"])
        assert f["cache"]["state"] in ("clean", "dirty")
    texts = [e["text"] for e in page["timeline"]]
    assert texts[0].startswith("registered")
    assert page["granule"]["provider"] is None  # archived here without an ingest request
    copies = [e["text"] for e in page["timeline"] if e["kind"] == "copy"]
    assert len(copies) == 4 and all(t.endswith(" written and verified") for t in copies)
    assert {t.split(" copy ")[1][0] for t in copies} == {"1", "2"}
    assert any(t.startswith("archived") for t in texts)
    order = Order.objects.get()
    assert f"ordered in order {order.pk}" in texts
    ats = [e["at"] for e in page["timeline"]]
    assert ats == sorted(ats)


def test_granule_page_shows_an_object_copy_and_a_recall_from_its_bucket(
        operator, archive_layout, data_root, settings, s3_bucket, inline):
    server, name = s3_bucket
    settings.GRANARY_OBJECT_STORES = {"default": {
        "endpoint_url": server.endpoint_url, "access_key": ACCESS_KEY,
        "secret_key": SECRET_KEY, "region": "us-east-1"}}
    bucket = Bucket.objects.create(name="archive-s3", bucket=name)
    collection = archived_collection([bucket, archive_layout[1]])
    granule, sources = staged_granule(collection, data_root / "staging", sizes=(1500,))
    assert archive.archive_granule(granule, sources).admitted
    inline(archive.run_until_idle)
    f = granule.files.get()
    cache.release(f)
    archive.make_available([f])
    inline(archive.run_until_idle)

    page = operator.get(f"{URL}{granule.pk}/").json()
    stored = FileCopy.objects.get(file=f, copy_number=1)
    first, second = page["files"][0]["copies"]
    assert {k: first[k] for k in ("copy_number", "medium", "volume", "volume_group",
                                  "volume_state", "position", "bucket", "key", "etag",
                                  "length", "state")} == {
        "copy_number": 1, "medium": "object", "volume": None, "volume_group": None,
        "volume_state": None, "position": 0, "bucket": "archive-s3", "key": stored.key,
        "etag": stored.etag, "length": 1500, "state": "verified"}
    assert stored.data_offset > 0   # a small file: the first member of a pack, at byte 0
    assert (second["medium"], second["volume_group"], second["bucket"]) == (
        "tape", "backup", None)
    assert second["volume"] and second["position"] is not None
    texts = [e["text"] for e in page["timeline"]]
    assert f"{f.name} copy 1 in the object store (archive-s3) written and verified" in texts
    assert f"{f.name} recall done from the object store (archive-s3)" in texts


def test_lifecycle_through_the_api(operator, collection, archived):
    [granule] = archived(collection, 1)
    url = f"{URL}{granule.pk}/"
    assert operator.post(f"{url}withdraw/", {}, format="json").status_code == 400
    response = operator.post(f"{url}withdraw/", {"reason": "bad pixels"}, format="json")
    assert response.status_code == 200
    assert response.json()["granule"]["state"] == "withdrawn"
    assert "bad pixels" in response.json()["retired_reason"]
    assert response.json()["timeline"][-1]["text"] == "withdraw"
    response = operator.post(f"{url}withdraw/", {"reason": "again"}, format="json")
    assert response.status_code == 409
    response = operator.post(f"{url}delete/", {"reason": "bad", "confirm_granule_id": "nope"},
                             format="json")
    assert response.status_code == 400 and "confirm_granule_id" in response.json()["errors"]
    response = operator.post(f"{url}delete/", {"reason": "bad"}, format="json")
    assert response.status_code == 400
    assert Granule.objects.get(pk=granule.pk).state == "withdrawn"
    response = operator.post(f"{url}delete/", {"reason": "bad", "confirm_granule_id":
                                               granule.granule_id}, format="json")
    assert response.status_code == 200 and response.json()["granule"]["state"] == "deleted"
    assert list(AuditEvent.objects.order_by("at", "pk").values_list("action", flat=True)) == [
        "withdraw", "delete"]


@pytest.mark.parametrize("body", [[], "reason", {"reason": ["x"]}, {"reason": {"a": 1}},
                                  {"reason": "x" * 5000}, {"reason": None}])
def test_hostile_bodies_are_400_and_change_nothing(operator, body):
    granule = GranuleFactory()
    for action in ("withdraw", "restore", "delete"):
        response = operator.post(f"{URL}{granule.pk}/{action}/", body, format="json")
        assert response.status_code == 400, (action, body)
    assert Granule.objects.get(pk=granule.pk).state == "archived"
    assert not AuditEvent.objects.exists()


def test_ids_and_roles(operator, alice, api):
    granule = GranuleFactory()
    for path in ("", "withdraw/", "restore/", "delete/"):
        method = operator.get if not path else operator.post
        assert method(f"{URL}999999/{path}", {"reason": "r"}, format="json").status_code == 404
        assert operator.get(f"{URL}abc/{path}").status_code == 404
        assert operator.get(f"{URL}{'9' * 30}/{path}").status_code == 404
        for client, status in ((alice, 403), (api, 401)):
            call = client.get if not path else client.post
            response = call(f"{URL}{granule.pk}/{path}", {"reason": "r"}, format="json")
            assert response.status_code == status
    for path in ("", "counts/"):
        assert alice.get(f"{URL}{path}").status_code == 403
        assert api.get(f"{URL}{path}").status_code == 401
    assert Granule.objects.get(pk=granule.pk).state == "archived"
