"""Roles, login for the web UI, tokens for API clients, and the add_user command."""
import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from backend.accounts.models import Provider
from backend.archive import services
from tests.factories import CollectionFactory

pytestmark = pytest.mark.django_db


def test_add_user_prints_a_working_token(capsys):
    collection = CollectionFactory(short_name="MOD021KM", version="061")
    call_command("add_user", "modaps", "--role", "provider", "--provider", "MODAPS",
                 "--collection", "MOD021KM.061")
    out = capsys.readouterr().out
    token = next(line.split()[-1] for line in out.splitlines() if line.startswith("token:"))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    me = client.get("/api/v1/me/").json()
    assert me["username"] == "modaps" and me["role"] == "provider" and me["providers"] == ["MODAPS"]
    assert Provider.objects.get(name="MODAPS").may_deliver(collection)


def test_add_user_refuses_provider_without_provider_name():
    with pytest.raises(CommandError, match="needs --provider"):
        call_command("add_user", "nobody", "--role", "provider")


def test_add_user_refuses_unknown_collection():
    with pytest.raises(CommandError, match="unknown collection NOPE.1"):
        call_command("add_user", "p", "--role", "provider", "--provider", "X",
                     "--collection", "NOPE.1")


def test_session_login_and_logout():
    call_command("add_user", "ana", "--role", "user", "--password", "correct-horse")
    client = APIClient(enforce_csrf_checks=False)
    bad = client.post("/api/v1/auth/login/", {"username": "ana", "password": "nope"})
    assert bad.status_code == 401 and bad.json()["detail"] == "Wrong user name or password."
    assert bad["WWW-Authenticate"] == "Token"
    assert client.post("/api/v1/auth/login/",
                       {"username": "ana", "password": "correct-horse"}).status_code == 200
    assert client.get("/api/v1/me/").json() == {
        "authenticated": True, "username": "ana", "email": "", "role": "user",
        "roles": ["user"], "providers": [],
    }
    client.post("/api/v1/auth/logout/")
    assert client.get("/api/v1/me/").json()["role"] == "anonymous"


def test_token_endpoint_needs_a_login(api):
    response = api.post("/api/v1/auth/token/")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize("header", ["Token not-a-key", "Token", "Token a b"])
def test_a_bad_token_is_401_naming_the_scheme(header):
    call_command("add_user", "ana", "--role", "user", "--password", "correct-horse")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    for path in ("/api/v1/me/", "/api/v1/orders/", "/api/v1/collections/"):
        response = client.get(path)
        assert response.status_code == 401, (path, response.status_code)
        assert response["WWW-Authenticate"] == "Token"
        assert "token" in response.json()["detail"].lower()


@pytest.mark.parametrize("path", ["/api/v1/orders/", "/api/v1/archive/volumes/",
                                  "/api/v1/ingest/requests/", "/api/v1/files/1/download"])
def test_no_credentials_where_a_login_is_needed_is_401(api, path):
    response = api.get(path)
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


def test_login_and_token_are_throttled(settings):
    from django.core.cache import caches

    cache = caches["shared"]  # the throttles count there, for every process
    cache.clear()
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        "login": "3/min", "token": "2/min"}}
    call_command("add_user", "ana", "--role", "user", "--password", "correct-horse")
    guesser = APIClient()
    # a client naming a new address in X-Forwarded-For each time is still the same client
    answers = [guesser.post("/api/v1/auth/login/", {"username": "ana", "password": f"g{i}"},
                            HTTP_X_FORWARDED_FOR=f"10.0.0.{i}") for i in range(4)]
    assert [a.status_code for a in answers] == [401, 401, 401, 429]
    assert int(answers[-1]["Retry-After"]) > 0
    right = guesser.post("/api/v1/auth/login/", {"username": "ana", "password": "correct-horse"})
    assert right.status_code == 429

    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(username="ana"))
    assert [client.post("/api/v1/auth/token/").status_code for _ in range(3)] == [200, 200, 429]
    cache.clear()


def test_seed_demo_is_idempotent_and_its_granules_reach_the_archive(capsys, data_root,
                                                                     settings):
    from ingest.models import IngestRequest
    from ingest.services import periodic, pipeline

    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    call_command("seed_demo", "--granules", "3")
    call_command("seed_demo", "--granules", "3")
    out = capsys.readouterr().out
    assert "operator   granary-operator" in out
    assert out.count("9 demo granules submitted for ingest") == 1
    for request in IngestRequest.objects.all():
        pipeline.run_request(request.pk)
    services.run_until_idle()
    periodic.sweep()   # as beat does: notices granules archived after their signal was missed
    assert all(r.state == "completed" for r in IngestRequest.objects.all()), list(
        IngestRequest.objects.values("state", "label"))
    client = APIClient()
    collections = {c["key"]: c for c in client.get("/api/v1/collections/").json()["results"]}
    assert {"MOD021KM.061", "MOD10C1.061", "GHRSST_OISST_L4.2.1"} <= set(collections)
    assert "AIRS2RET_NRT.7.0" not in collections
    assert collections["MOD021KM.061"]["granule_count"] == 3
    granules = client.get("/api/v1/granules/?collection=MOD10C1.061").json()["results"]
    assert len(granules) == 3 and all(g["state"] == "archived" for g in granules)
