"""The schema holds for answers about real things (the fuzzer mostly meets empty tables and
unknown ids): a volume's files, an ingest request with and without its granules, a refused
PDR, an order's links and script, a file's bytes whole and in part, STAC items and searches."""
import pytest

from backend.accounts import roles
from backend.archive.models import ArchivePolicy, FileCopy
from tests.contract import call
from tests.factories import ProviderFactory, UserFactory
from tests.ingest.builders import granule as granule_spec
from tests.ingest.builders import stage

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("wsgi_keeps_the_test_connection")]


def media_type(response):
    return next(v[0] for k, v in response.headers.items() if k.lower() == "content-type")


@pytest.fixture
def on_tape(collection, archived):
    [granule] = archived(collection)
    return granule


def test_a_volumes_files(on_tape):
    operator = UserFactory(role=roles.OPERATOR)
    copy = FileCopy.objects.filter(file__granule=on_tape).select_related("volume").first()
    body = call(operator, "get", "/api/v1/archive/volumes/{label}/files/", 200,
                path_parameters={"label": copy.volume.label}).json()
    assert {row["file"] for row in body["results"]} >= {copy.file_id}


def test_an_ingest_request_with_and_without_its_granules_and_a_refused_pdr(collection, settings):
    provider = ProviderFactory(name="MODAPS")
    provider.collections.add(collection)
    user = UserFactory(role=roles.PROVIDER)
    provider.members.add(user)
    spec = granule_spec(collection, "G1", [stage(provider, "in/G1.dat")])
    made = call(user, "post", "/api/v1/ingest/requests/", 202, body={"granules": [spec]}).json()
    path = "/api/v1/ingest/requests/{id}/"
    with_rows = call(user, "get", path, 200, path_parameters={"id": made["id"]}).json()
    assert [g["granule_id"] for g in with_rows["granules"]] == ["G1"]
    without = call(user, "get", path, 200, path_parameters={"id": made["id"]},
                   query={"granules": "false"}).json()
    assert "granules" not in without
    refused = call(user, "post", "/api/v1/ingest/pdrs/", 400,
                   body={"name": "BAD.PDR", "text": "this is not PVL"}).json()
    assert refused["state"] == "rejected"
    bad_form = call(user, "post", "/api/v1/ingest/pdrs/", 400, body={}).json()
    assert "name" in bad_form["errors"]


def test_an_order_its_links_script_and_downloads(collection, archived, alice, inline):
    ArchivePolicy.objects.filter(collection=collection).update(cache_residency_days=30)
    [granule] = archived(collection)
    order = inline(call, alice.user, "post", "/api/v1/orders/", 201,
                   body={"granules": [granule.pk]}).json()
    ids = {"id": order["id"]}
    assert call(alice.user, "get", "/api/v1/orders/{id}/", 200, path_parameters=ids).json()[
        "state"] == "ready"
    links = call(alice.user, "get", "/api/v1/orders/{id}/links/", 200,
                 path_parameters=ids).json()["links"]
    script = call(alice.user, "get", "/api/v1/orders/{id}/script/", 200, path_parameters=ids)
    assert media_type(script).startswith("text/x-python")
    assert media_type(call(None, "get", "/api/v1/granary-get", 200)).startswith("text/x-python")
    first = links[0]
    query = dict(part.split("=", 1) for part in first["url"].split("?", 1)[1].split("&"))
    path = "/api/v1/files/{file_id}/download"
    whole = call(None, "get", path, 200, path_parameters={"file_id": first["file_id"]},
                 query=query)
    assert len(whole.content) == first["size"]
    part = call(None, "get", path, 206, path_parameters={"file_id": first["file_id"]},
                query=query, headers={"Range": "bytes=0-9"})
    assert part.content == whole.content[:10]
    call(None, "get", path, 416, path_parameters={"file_id": first["file_id"]},
         query=query, headers={"Range": f"bytes={first['size']}-"})


def test_stac_items_and_searches(on_tape):
    key = on_tape.collection.key
    item = call(None, "get", "/stac/collections/{key}/items/{item_id}", 200,
                path_parameters={"key": key, "item_id": on_tape.granule_id})
    assert media_type(item) == "application/geo+json"
    call(None, "get", "/stac/collections/{key}/items", 200, path_parameters={"key": key})
    found = call(None, "get", "/stac/search", 200, query={"collections": key}).json()
    assert [f["id"] for f in found["features"]] == [on_tape.granule_id]
    call(None, "post", "/stac/search", 200, body={"collections": [key]})
    call(None, "get", "/stac/collections/{key}", 200, path_parameters={"key": key})
