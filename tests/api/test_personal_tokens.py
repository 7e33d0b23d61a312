"""Personal API tokens: named, scoped, expiring, revocable, last use shown, shown once and
stored only as a hash (the table is read to prove it)."""
import hashlib
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from backend.accounts.models import ApiToken
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def bearer(token):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def make(client, **body):
    body = {"name": "laptop", "scopes": ["read"], **body}
    return client.post("/api/v1/auth/tokens/", body, format="json")


def test_a_token_is_shown_once_and_only_its_hash_is_kept(user_api):
    made = make(user_api, name="my script", scopes=["read", "order"], days=30)
    assert made.status_code == 201, made.content
    token = made.json()["token"]
    assert bearer(token).get("/api/v1/me/").json()["username"] == user_api.user.username
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM accounts_apitoken")
        rows = cursor.fetchall()
    assert len(rows) == 1
    stored = [str(value) for value in rows[0]]
    assert hashlib.sha256(token.encode()).hexdigest() in stored
    assert not any(token in value or token[8:] in value for value in stored)
    listed = user_api.get("/api/v1/auth/tokens/").json()
    assert [t["name"] for t in listed] == ["my script"] and "token" not in listed[0]
    assert listed[0]["scopes"] == ["read", "order"] and listed[0]["prefix"] == token[:8]
    assert listed[0]["last_used_at"] is not None and listed[0]["active"] is True


def test_a_revoked_or_expired_token_is_401(user_api):
    token = make(user_api).json()["token"]
    assert bearer(token).get("/api/v1/me/").status_code == 200
    row = ApiToken.objects.get()
    answer = user_api.delete(f"/api/v1/auth/tokens/{row.pk}/")
    assert answer.status_code == 200 and answer.json()["active"] is False
    assert bearer(token).get("/api/v1/me/").status_code == 401

    other = make(user_api, days=1).json()["token"]
    ApiToken.objects.filter(revoked_at__isnull=True).update(
        expires_at=timezone.now() - timedelta(seconds=1))
    refused = bearer(other).get("/api/v1/orders/")
    assert refused.status_code == 401 and refused["WWW-Authenticate"] == "Token"


def test_scopes_bound_what_a_token_does(user_api):
    reader = bearer(make(user_api, scopes=["read"]).json()["token"])
    assert reader.get("/api/v1/orders/").status_code == 200
    refused = reader.post("/api/v1/orders/", {}, format="json")
    assert refused.status_code == 403 and "'order'" in refused.json()["detail"]
    orderer = bearer(make(user_api, scopes=["order"]).json()["token"])
    assert orderer.get("/api/v1/orders/").status_code == 403
    assert orderer.post("/api/v1/orders/", {}, format="json").status_code == 400  # no granules


def test_scopes_never_widen_a_role(user_api):
    """Every scope on a plain user's token: the operator's pages stay closed."""
    everything = bearer(make(user_api, scopes=["read", "order", "ingest", "operate"])
                        .json()["token"])
    assert everything.get("/api/v1/archive/queues/").status_code == 403


def test_another_users_token_cannot_be_revoked_or_seen(user_api):
    theirs = UserFactory()
    client = APIClient()
    client.force_authenticate(theirs)
    token = make(client).json()["token"]
    row = ApiToken.objects.get(user=theirs)
    assert user_api.get("/api/v1/auth/tokens/").json() == []
    assert user_api.delete(f"/api/v1/auth/tokens/{row.pk}/").status_code == 404
    assert bearer(token).get("/api/v1/me/").status_code == 200


@pytest.mark.parametrize("body", [
    {"name": ""}, {"name": "x" * 101}, {"scopes": []}, {"scopes": ["root"]},
    {"scopes": "read"}, {"days": 0}, {"days": 100000}, {"days": "soon"}, {"name": ["a"]},
])
def test_hostile_token_requests_are_400(user_api, body):
    answer = make(user_api, **body)
    assert answer.status_code == 400, answer.content
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize("path", ["/api/v1/auth/tokens/abc/", "/api/v1/auth/tokens/-1/",
                                  "/api/v1/auth/tokens/99999999999999999999999/"])
def test_non_numeric_ids_are_404(user_api, path):
    assert user_api.delete(path).status_code == 404


def test_anonymous_callers_have_no_tokens(api):
    assert api.get("/api/v1/auth/tokens/").status_code == 401
    assert make(api).status_code == 401


def test_the_script_token_endpoint_still_answers_a_working_token(user_api):
    token = user_api.post("/api/v1/auth/token/").json()["token"]
    assert bearer(token).get("/api/v1/me/").status_code == 200
    row = ApiToken.objects.get()
    assert row.expires_at is not None and row.name == "script"


def test_a_token_short_of_a_scope_cannot_make_a_wider_one(user_api):
    reader = bearer(make(user_api, scopes=["read"]).json()["token"])
    for answer in (make(reader, scopes=["read", "order"]), reader.post("/api/v1/auth/token/"),
                   reader.delete(f"/api/v1/auth/tokens/{ApiToken.objects.get().pk}/")):
        assert answer.status_code == 403, answer.content
    assert ApiToken.objects.count() == 1 and ApiToken.objects.get().revoked_at is None
    full = bearer(make(user_api, scopes=["read", "order", "ingest", "operate"]).json()["token"])
    assert make(full, name="child").status_code == 201
