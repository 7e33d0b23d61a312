"""A portal request authenticates with one query (the session, its user and the user's roles:
accounts.sessions, issue #33), and is refused or demoted exactly as before: a deactivated user,
a changed password, a role taken away, a deleted user or a logout each end what the session
could do at the next request."""
from datetime import timedelta

import pytest
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import Group
from django.contrib.sessions.backends import db
from django.core.management import call_command
from django.db import connection, connections
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from backend.accounts import roles, sessions
from backend.accounts.models import SignedInSession
from tests.factories import UserFactory

PASSWORD = "pw-for-tests"
OPERATOR_ONLY = "/api/v1/config/users/"


def signed_in(role):
    user = UserFactory(role=role)
    client = APIClient()
    response = client.post("/api/v1/auth/login/", {"username": user.username,
                                                   "password": PASSWORD}, format="json")
    assert response.status_code == 200, response.content
    return client, user


def me(client):
    response = client.get("/api/v1/me/")
    assert response.status_code == 200
    return response.json()


@pytest.mark.django_db
@pytest.mark.parametrize("role", [roles.USER, roles.PROVIDER, roles.OPERATOR])
def test_one_query_reads_the_session_the_user_and_the_roles(role):
    client, user = signed_in(role)
    with CaptureQueriesContext(connection) as queries:
        allowed = client.get(OPERATOR_ONLY).status_code
    assert allowed == (200 if role == roles.OPERATOR else 403)
    sql = [q["sql"] for q in queries.captured_queries]
    auth = [s for s in sql if "auth_user" in s or "signedinsession" in s
            or "auth_group" in s]
    assert len([s for s in auth if "signedinsession" in s]) == 1
    if role != roles.OPERATOR:      # a refusal reads nothing else
        assert len(sql) == 1
    assert SignedInSession.objects.get().user_id == user.pk


@pytest.mark.django_db
def test_a_deactivated_user_is_signed_out():
    client, user = signed_in(roles.USER)
    assert me(client)["username"] == user.username
    user.is_active = False
    user.save()
    assert me(client)["role"] == roles.ANONYMOUS


@pytest.mark.django_db
def test_a_new_password_ends_the_other_sessions():
    client, user = signed_in(roles.USER)
    user.set_password("another-pw-for-tests")
    user.save()
    assert me(client)["role"] == roles.ANONYMOUS


@pytest.mark.django_db
def test_a_role_taken_away_counts_at_the_next_request():
    client, user = signed_in(roles.OPERATOR)
    assert client.get(OPERATOR_ONLY).status_code == 200
    user.groups.remove(Group.objects.get(name=roles.OPERATOR))
    assert client.get(OPERATOR_ONLY).status_code == 403
    assert me(client)["role"] == roles.USER


@pytest.mark.django_db
def test_a_deleted_user_takes_the_sessions_along():
    client, user = signed_in(roles.USER)
    user.delete()
    assert not SignedInSession.objects.exists()
    assert me(client)["role"] == roles.ANONYMOUS


@pytest.mark.django_db
def test_logging_out_ends_the_session():
    client, _ = signed_in(roles.USER)
    assert client.post("/api/v1/auth/logout/").status_code == 204
    assert me(client)["role"] == roles.ANONYMOUS
    assert not SignedInSession.objects.filter(user__isnull=False).exists()


@pytest.mark.django_db
def test_a_session_row_naming_another_user_does_not_sign_that_user_in():
    """The id in the signed data decides; the column only starts the join."""
    client, user = signed_in(roles.USER)
    other = UserFactory(role=roles.OPERATOR)
    SignedInSession.objects.update(user=other)
    assert me(client)["username"] == user.username
    assert client.get(OPERATOR_ONLY).status_code == 403


@pytest.mark.django_db(transaction=True)
def test_the_upgrade_keeps_the_sessions_signed_in():
    """Sessions of Django's own table (ModelBackend's) still sign their user in afterwards."""
    executor = MigrationExecutor(connection)
    before = [("accounts", "0004_oidc_tokens")]
    executor.migrate(before)
    user = UserFactory(role=roles.USER)
    live = db.SessionStore()
    live.update({SESSION_KEY: str(user.pk), HASH_SESSION_KEY: user.get_session_auth_hash(),
                 BACKEND_SESSION_KEY: "django.contrib.auth.backends.ModelBackend"})
    live.create()
    gone = db.SessionStore()
    gone.update({SESSION_KEY: str(user.pk)})
    gone.set_expiry(-60)
    gone.create()
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([("accounts", "0005_signed_in_session")])
    call_command("migrate", verbosity=0)
    assert list(SignedInSession.objects.values_list("session_key", "user_id")) == [
        (live.session_key, user.pk)]
    client = APIClient()
    client.cookies["sessionid"] = live.session_key
    assert me(client)["username"] == user.username


@pytest.mark.django_db
def test_an_expired_session_signs_nobody_in():
    client, user = signed_in(roles.USER)
    assert me(client)["username"] == user.username
    SignedInSession.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    assert me(client)["role"] == roles.ANONYMOUS


@pytest.mark.django_db
def test_the_session_read_is_built_once_per_connection(monkeypatch):
    built = []
    monkeypatch.setattr(sessions._READ, "build", lambda key: built.append(key) or
                        sessions._read(key))
    connections["default"].__dict__.pop("_fixed_reads", None)
    clients = [signed_in(role) for role in (roles.USER, roles.OPERATOR)]
    for _ in range(3):
        for client, user in clients:
            assert me(client)["username"] == user.username
    assert len(built) == 1
