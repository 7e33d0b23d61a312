"""Shared fixtures: API clients per role, and an isolated data root per test."""
import pytest
from rest_framework.test import APIClient

from backend.accounts import roles
from tests.factories import UserFactory

pytest_plugins = ["tests.s3_fixtures", "tests.tape_fixtures", "tests.oidc_fixtures"]


@pytest.fixture(autouse=True, scope="session")
def quick_password_hashing():
    """Passwords hashed in one quick round: the production hasher's deliberate ~0.2 s per
    hash, paid for every user a test creates or signs in, was a third of the suite's time.
    Passwords are still checked; tests/api/test_password_hashing.py keeps the real hasher."""
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture
def data_root(tmp_path, settings):
    """Point staging/cache/volumes/outbox at a fresh folder for this test."""
    settings.DATA_ROOT = tmp_path
    for name in ("staging", "cache", "volumes", "outbox", "orders"):
        (tmp_path / name).mkdir()
        setattr(settings, f"{name.upper()}_ROOT", tmp_path / name)
    return tmp_path


@pytest.fixture
def eager():
    """Celery tasks run inline when sent (pair with django_capture_on_commit_callbacks)."""
    from backend.celery import app

    before = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = before


@pytest.fixture
def api():
    return APIClient()


def _client_for(role):
    user = UserFactory(role=role)
    client = APIClient()
    client.force_authenticate(user)
    client.user = user
    return client


@pytest.fixture
def user_api(db):
    return _client_for(roles.USER)


@pytest.fixture
def operator_api(db):
    return _client_for(roles.OPERATOR)


@pytest.fixture
def provider_api(db):
    return _client_for(roles.PROVIDER)


@pytest.fixture
def broker_down(monkeypatch):
    """broker_down(): a context in which the Celery app publishes to a RabbitMQ port nothing
    listens on (a broker that is down, as a client sees it), tasks not run inline; the real
    broker (and inline mode, if it was on) is back on exit."""
    import socket
    from contextlib import contextmanager

    from backend.celery import app

    def reset_pools():
        app._pool = None
        app.amqp._producer_pool = None

    @contextmanager
    def down():
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        url = f"amqp://guest:guest@127.0.0.1:{port}//"
        before = app.conf.broker_url, app.conf.task_always_eager
        with monkeypatch.context() as patched:
            patched.setenv("CELERY_BROKER_URL", url)  # Celery reads it before its conf
            app.conf.broker_url, app.conf.task_always_eager = url, False
            reset_pools()
            try:
                yield url
            finally:
                app.conf.broker_url, app.conf.task_always_eager = before
                reset_pools()

    return down


@pytest.fixture
def wsgi_keeps_the_test_connection():
    """Requests sent through the WSGI app itself (schemathesis' calls) close the database
    connection when they finish, which would end the test's transaction: keep it open, as
    Django's test client does."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)
