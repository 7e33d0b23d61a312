"""Who may ask for what: a provider subscribes its own collections' ingest events (the modern
PAN), an operator a rule per alert type; a rule that could never bring its owner anything is
refused with a clear 4xx (an operator's alert asked by a user, a collection that does not
exist, another provider's collection), on create and on change alike."""
import json

import pytest

from backend.events.models import Endpoint
from tests.factories import CollectionFactory, ProviderFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/event-endpoints/"


def _post(client, body):
    return client.post(URL, json.dumps(body), content_type="application/json")


@pytest.fixture
def mine(provider_api):
    collection = CollectionFactory(short_name="MOD09GA", version="061")
    provider = ProviderFactory()
    provider.collections.add(collection)
    provider.members.add(provider_api.user)
    return collection


def test_a_provider_subscribes_its_collections_ingest_events(provider_api, mine):
    other = CollectionFactory(short_name="VNP09", version="002")   # another provider's
    made = _post(provider_api, {"kind": "email", "rules": [
        {"type": "granule.archived", "collection_key": "MOD09GA.061"},
        {"type": "ingest.*", "collection_key": "MOD09GA.061"}]})
    assert made.status_code == 201, made.content
    refused = _post(provider_api, {"kind": "email", "rules": [
        {"type": "granule.*", "collection_key": other.key}]})
    assert refused.status_code == 403 and "providers" in refused.json()["detail"]
    missing = _post(provider_api, {"kind": "email", "rules": [
        {"type": "granule.*", "collection_key": "NOPE.1"}]})
    assert missing.status_code == 400 and "NOPE.1" in json.dumps(missing.json())
    # a change is held to the same rule
    changed = provider_api.patch(f"{URL}{made.json()['id']}/", {"rules": [
        {"type": "granule.failed", "collection_key": other.key}]}, format="json")
    assert changed.status_code == 403
    assert list(Endpoint.objects.get().rules.values_list("collection_key", flat=True)) == [
        "MOD09GA.061", "MOD09GA.061"]


@pytest.mark.parametrize("rule", [{"type": "drive.offline"}, {"type": "volume.*"},
                                  {"type": "queue.stuck"}, {"type": "target.projected_miss"}])
def test_alerts_are_for_operators(user_api, provider_api, operator_api, rule):
    assert _post(user_api, {"kind": "email", "rules": [rule]}).status_code == 403
    assert _post(provider_api, {"kind": "email", "rules": [rule]}).status_code == 403
    assert _post(operator_api, {"kind": "email", "rules": [rule]}).status_code == 201


def test_a_user_may_narrow_their_own_events_by_collection_but_not_to_a_missing_one(
        user_api, operator_api):
    CollectionFactory(short_name="MOD09GA", version="061")
    ok = _post(user_api, {"kind": "email", "rules": [
        {"type": "subscription.matched", "collection_key": "MOD09GA.061"}, {"type": "*"}]})
    assert ok.status_code == 201, ok.content
    for client in (user_api, operator_api):
        answer = _post(client, {"kind": "email", "rules": [
            {"type": "*", "collection_key": "MOD09GA.999"}]})
        assert answer.status_code == 400


@pytest.mark.parametrize("rules", [
    [{"type": "granule.*", "collection_key": 7}],
    [{"type": "granule.*", "collection_key": ["MOD09GA.061"]}],
    [{"type": "granule.*", "collection_key": "MOD09GA.061' OR 1=1 --"}],
    [{"type": "granule.*", "collection_key": f"C{i}.1"} for i in range(50)],
    [{"type": "granule.*", "collection_key": "\x00"}],
    {"type": "granule.*"},
])
def test_malformed_or_huge_collection_filters_are_refused(provider_api, mine, rules):
    answer = _post(provider_api, {"kind": "email", "rules": rules})
    assert answer.status_code == 400, answer.content
    assert not Endpoint.objects.exists()


def test_choices_name_the_types_and_the_callers_collections(user_api, provider_api,
                                                            operator_api, mine):
    def choices(client):
        return client.get(f"{URL}choices/").json()
    seen = choices(provider_api)
    assert seen["collections"] == ["MOD09GA.061"]
    names = {t["type"] for t in seen["types"]}
    assert "granule.archived" in names and "drive.offline" not in names and "test" not in names
    assert choices(user_api)["collections"] == []
    alerts = {t["type"] for t in choices(operator_api)["types"] if t["operators_only"]}
    assert alerts == {"drive.offline", "volume.suspect", "reconciliation.discrepancies",
                      "target.projected_miss", "queue.stuck"}
    assert choices(user_api) != choices(operator_api)
