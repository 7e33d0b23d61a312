"""Operators configure collections (with their archive policy), providers and users through the
API; every change leaves an audit record saying who changed which field from what to what, and
bad input is a 4xx that changes nothing."""
import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from backend.accounts import roles, tokens
from backend.accounts.models import AuditEvent, Provider
from backend.archive.models import ArchivePolicy, Silo, VolumeGroup
from backend.catalog.models import Collection
from tests.factories import CollectionFactory, GranuleFactory, ProviderFactory, UserFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/config/collections/"
PATTERN = r"^(?P<granule>X\d+)\.(hdf|met)$"


@pytest.fixture
def groups():
    one, two = Silo.objects.create(name="silo1"), Silo.objects.create(name="silo2")
    return {
        "primary": VolumeGroup.objects.create(name="primary", silo=one),
        "backup": VolumeGroup.objects.create(name="backup", silo=two,
                                             role=VolumeGroup.Role.BACKUP),
        "other": VolumeGroup.objects.create(name="other", silo=one),
    }


def body(**changes):
    return {"short_name": "NEW01", "version": "001", "title": "A new product",
            "file_patterns": [PATTERN], "cadence_seconds": 300, "latency_target_seconds": 3600,
            "extent_west": -10, "extent_south": -5, "extent_east": 10, "extent_north": 5,
            "variables": [{"name": "t", "units": "K", "long_name": "temperature"}],
            "policy": {"copies": ["primary", "backup"], "cache_residency_days": 3}, **changes}


def test_an_operator_creates_a_collection_with_its_policy(operator_api, groups, api):
    answer = operator_api.post(URL, body(reason="new mission"), format="json")
    assert answer.status_code == 201, answer.content
    made = Collection.objects.get(short_name="NEW01")
    assert (made.cadence_seconds, made.latency_target_seconds, made.file_patterns) == (
        300, 3600, [PATTERN])
    assert made.declared_bbox == [-10, -5, 10, 5]
    policy = ArchivePolicy.objects.get(collection=made)
    assert [c.volume_group.name for c in policy.copy_groups.order_by("copy_number")] == [
        "primary", "backup"]
    assert policy.cache_residency_days == 3
    assert answer.json()["policy"] == {"copies": ["primary", "backup"],
                                       "cache_residency_days": 3}
    event = AuditEvent.objects.get(target_type="collection", target_id=str(made.pk))
    assert (event.actor, event.action, event.reason) == (operator_api.user, "create",
                                                         "new mission")
    assert event.detail["changes"]["policy.copies"] == [None, ["primary", "backup"]]
    assert event.detail["changes"]["cadence_seconds"] == [None, 300]
    assert "doi" not in event.detail["changes"]  # left blank: not a change worth reading
    # the public read of collections is as it was
    assert api.get("/api/v1/collections/NEW01.001/").json()["title"] == "A new product"


def test_a_change_records_only_the_fields_it_changed(operator_api, groups):
    operator_api.post(URL, body(), format="json")
    answer = operator_api.patch(URL + "NEW01.001/", {
        "title": "Renamed title", "policy": {"cache_residency_days": 7}}, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["policy"] == {"copies": ["primary", "backup"],
                                       "cache_residency_days": 7}
    event = AuditEvent.objects.filter(action="update").get()
    assert event.detail["changes"] == {"title": ["A new product", "Renamed title"],
                                       "policy.cache_residency_days": [3, 7]}


@pytest.mark.parametrize(("changes", "field"), [
    ({"file_patterns": ["(unclosed"]}, "file_patterns"),
    ({"file_patterns": ["^no-granule-group$"]}, "file_patterns"),
    ({"file_patterns": [{"regex": PATTERN, "role": "poster"}]}, "file_patterns"),
    ({"file_patterns": [{"regex": PATTERN, "colour": "red"}]}, "file_patterns"),
    ({"file_patterns": [42]}, "file_patterns"),
    ({"policy": {"copies": ["primary", "nowhere"]}}, "copies"),
    ({"policy": {"copies": ["primary", "other"]}}, "copies"),  # both in silo1
    ({"policy": {"copies": ["primary", "primary"]}}, "copies"),
    ({"policy": {"copies": []}}, "policy"),
    ({"policy": {"copies": "primary"}}, "policy"),
    ({"policy": {"copies": ["primary"], "cache_residency_days": -1}}, "policy"),
    ({"policy": None}, "policy"),
    ({"cadence_seconds": "fast"}, "cadence_seconds"),
    ({"cadence_seconds": 0}, "cadence_seconds"),
    ({"latency_target_seconds": -5}, "latency_target_seconds"),
    ({"extent_west": 500}, "extent_west"),
    ({"extent_west": None}, "extent_west"),  # three sides of a box
    ({"extent_south": 6}, "extent_south"),  # south of north
    ({"extent_start": "2024-02-01T00:00:00Z", "extent_end": "2024-01-01T00:00:00Z"},
     "extent_end"),
    ({"variables": [{"name": "t"}]}, "variables"),
    ({"short_name": "A.B"}, "short_name"),
    ({"short_name": ["list"]}, "short_name"),
    ({"access": "secret"}, "access"),
    ({"duplicate_policy": 3}, "duplicate_policy"),
    ({"approved_users": ["nobody-here"]}, "approved_users"),
    ({"title": "x" * 301}, "title"),
])
def test_bad_configuration_is_a_400_on_its_field_and_changes_nothing(operator_api, groups,
                                                                     changes, field):
    answer = operator_api.post(URL, body(**changes), format="json")
    assert answer.status_code == 400, answer.content
    assert field in answer.json()["errors"], answer.json()
    assert not Collection.objects.exists() and not AuditEvent.objects.exists()


def test_a_new_collection_needs_a_policy(operator_api, groups):
    answer = operator_api.post(URL, {**body(), "policy": None} | {}, format="json")
    assert answer.status_code == 400
    plain = {k: v for k, v in body().items() if k != "policy"}
    answer = operator_api.post(URL, plain, format="json")
    assert answer.status_code == 400 and "copies" in answer.json()["errors"]


def test_two_copies_in_one_silo_are_fine_when_there_is_one_silo(operator_api):
    silo = Silo.objects.create(name="only")
    for name in ("a", "b"):
        VolumeGroup.objects.create(name=name, silo=silo)
    answer = operator_api.post(URL, body(policy={"copies": ["a", "b"]}), format="json")
    assert answer.status_code == 201, answer.content


def test_renaming_into_an_existing_key_is_a_400(operator_api, groups):
    CollectionFactory(short_name="TAKEN", version="001")
    operator_api.post(URL, body(), format="json")
    answer = operator_api.patch(URL + "NEW01.001/", {"short_name": "TAKEN"}, format="json")
    assert answer.status_code == 400 and "short_name" in answer.json()["errors"]
    assert Collection.objects.filter(short_name="NEW01").exists()


def test_a_collection_with_granules_keeps_its_key_and_its_number_of_copies(operator_api, groups):
    operator_api.post(URL, body(), format="json")
    GranuleFactory(collection=Collection.objects.get(short_name="NEW01"))
    renamed = operator_api.patch(URL + "NEW01.001/", {"version": "002"}, format="json")
    fewer = operator_api.patch(URL + "NEW01.001/", {"policy": {"copies": ["backup"]}},
                               format="json")
    assert (renamed.status_code, fewer.status_code) == (409, 409)
    kept = operator_api.patch(URL + "NEW01.001/", {"policy": {"cache_residency_days": 1}},
                              format="json")
    assert kept.status_code == 200
    # a copy may go to another target (another medium even): new granules are written there,
    # and a bulk "move copies" job moves those already written
    moved = operator_api.patch(URL + "NEW01.001/", {"policy": {"copies": ["backup", "primary"]}},
                               format="json")
    assert moved.status_code == 200, moved.content
    assert moved.json()["policy"]["copies"] == ["backup", "primary"]


@pytest.mark.parametrize("path", [URL, URL + "NEW01.001/", "/api/v1/config/users/",
                                  "/api/v1/config/providers/", "/api/v1/config/audit/"])
def test_only_operators_configure(user_api, provider_api, api, path, groups):
    CollectionFactory(short_name="NEW01", version="001")
    for client in (user_api, provider_api):
        assert client.get(path).status_code == 403
        assert client.post(path, body(), format="json").status_code in (403, 405)
    assert api.get(path).status_code == 401


@pytest.mark.parametrize("path", [URL + "NOPE.1/", URL + "nokey/", "/api/v1/config/users/abc/",
                                  f"/api/v1/config/users/{2**70}/", "/api/v1/config/users/999/",
                                  "/api/v1/config/providers/nobody/"])
def test_unknown_or_non_numeric_ids_are_404(operator_api, path):
    for method in ("get", "patch"):
        answer = getattr(operator_api, method)(path, {"title": "x"}, format="json")
        assert answer.status_code == 404 and answer.json()["detail"]


def test_huge_and_deep_bodies_are_refused(operator_api, groups, settings):
    deep = '{"title": ' + "[" * 5000 + "]" * 5000 + "}"
    assert operator_api.post(URL, deep, content_type="application/json").status_code == 400
    huge = body(description="x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10))
    assert operator_api.post(URL, huge, format="json").status_code == 413
    many = body(file_patterns=[PATTERN] * 10_000)
    assert operator_api.post(URL, many, format="json").status_code == 400
    assert not Collection.objects.exists()


def test_providers_are_created_and_given_members_and_collections(operator_api):
    member = UserFactory(username="pat")
    coll = CollectionFactory(short_name="DELIV", version="1")
    made = operator_api.post("/api/v1/config/providers/", {"name": "LAADS", "title": "L"},
                             format="json")
    assert made.status_code == 201 and made.json()["staging_area"].endswith("/LAADS")
    answer = operator_api.patch("/api/v1/config/providers/LAADS/", {
        "members": ["pat"], "collections": ["DELIV.1"]}, format="json")
    assert answer.status_code == 200, answer.content
    provider = Provider.objects.get(name="LAADS")
    assert provider.may_deliver(coll) and list(provider.members.all()) == [member]
    event = AuditEvent.objects.get(target_type="provider", action="update")
    assert event.detail["changes"] == {"members": [[], ["pat"]],
                                       "collections": [[], ["DELIV.1"]]}


@pytest.mark.parametrize(("changes", "field"), [
    ({"members": ["ghost"]}, "members"), ({"collections": ["NO.1"]}, "collections"),
    ({"collections": ["nodot"]}, "collections"), ({"name": "RENAMED"}, "name"),
    ({"contact_email": "not-an-address"}, "contact_email"), ({"members": "pat"}, "members"),
])
def test_bad_provider_changes_are_400(operator_api, changes, field):
    ProviderFactory(name="LAADS")
    answer = operator_api.patch("/api/v1/config/providers/LAADS/", changes, format="json")
    assert answer.status_code == 400 and field in answer.json()["errors"], answer.json()
    assert not AuditEvent.objects.exists()


def test_a_provider_name_cannot_be_taken_twice(operator_api):
    ProviderFactory(name="LAADS")
    answer = operator_api.post("/api/v1/config/providers/", {"name": "laads"}, format="json")
    assert answer.status_code == 400 and "name" in answer.json()["errors"]


def test_operators_create_users_change_roles_and_deactivate(operator_api):
    ProviderFactory(name="LAADS")
    made = operator_api.post("/api/v1/config/users/", {
        "username": "newbie", "role": "provider", "providers": ["LAADS"]}, format="json")
    assert made.status_code == 201, made.content
    user = get_user_model().objects.get(username="newbie")
    assert user.check_password(made.json()["initial_password"])
    assert roles.roles_of(user) == {roles.PROVIDER}
    url = f"/api/v1/config/users/{user.pk}/"
    answer = operator_api.patch(url, {"role": "operator"}, format="json")
    assert answer.status_code == 200 and answer.json()["role"] == "operator"
    user = get_user_model().objects.get(pk=user.pk)
    assert roles.roles_of(user) == {roles.OPERATOR} and user.is_staff
    key = tokens.issue(user, "script")[1]
    assert operator_api.patch(url, {"active": False}, format="json").status_code == 200
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/v1/config/users/").status_code == 401
    changes = [e.detail["changes"] for e in AuditEvent.objects.filter(
        target_type="user", target_id=str(user.pk), action="update").order_by("id")]
    assert changes == [{"role": ["provider", "operator"]}, {"active": [True, False]}]


@pytest.mark.parametrize(("payload", "field"), [
    ({"username": "x y!", "role": "user"}, "username"),
    ({"username": "fine", "role": "king"}, "role"),
    ({"username": "fine", "role": "provider"}, "providers"),
    ({"username": "fine", "role": "user", "providers": ["NOPE"]}, "providers"),
    ({"username": "taken", "role": "user"}, "username"),
])
def test_bad_new_users_are_400(operator_api, payload, field):
    UserFactory(username="taken")
    answer = operator_api.post("/api/v1/config/users/", payload, format="json")
    assert answer.status_code == 400 and field in answer.json()["errors"], answer.json()


def test_an_operator_cannot_lock_themselves_out(operator_api):
    url = f"/api/v1/config/users/{operator_api.user.pk}/"
    assert operator_api.patch(url, {"role": "user"}, format="json").status_code == 409
    assert operator_api.patch(url, {"active": False}, format="json").status_code == 409
    assert operator_api.patch(url, {"active": "maybe"}, format="json").status_code == 400


def test_the_audit_log_filters_by_target_actor_and_time(operator_api, groups):
    operator_api.post(URL, body(), format="json")
    ProviderFactory(name="LAADS")
    operator_api.patch("/api/v1/config/providers/LAADS/", {"title": "t"}, format="json")
    log = "/api/v1/config/audit/"
    every = operator_api.get(log).json()["results"]
    assert [e["target_type"] for e in every] == ["provider", "collection"]  # newest first
    assert [e["target_label"] for e in operator_api.get(
        log, {"target_type": "collection"}).json()["results"]] == ["NEW01.001"]
    coll = Collection.objects.get(short_name="NEW01")
    assert [e["action"] for e in operator_api.get(log, {
        "target_type": "collection", "target_id": coll.pk}).json()["results"]] == ["create"]
    mine = operator_api.get(log, {"actor": operator_api.user.username}).json()["results"]
    assert len(mine) == 2 and not operator_api.get(log, {"actor": "x"}).json()["results"]
    assert not operator_api.get(log, {"since": "2999-01-01T00:00:00Z"}).json()["results"]
    assert len(operator_api.get(log, {"until": "2999-01-01"}).json()["results"]) == 2
    assert operator_api.get(log, {"since": "yesterday"}).status_code == 400
