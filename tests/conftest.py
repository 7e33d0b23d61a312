"""Shared fixtures: API clients per role, and an isolated data root per test."""
import pytest
from rest_framework.test import APIClient

from backend.accounts import roles
from tests.factories import UserFactory


@pytest.fixture
def data_root(tmp_path, settings):
    """Point staging/cache/volumes/outbox at a fresh folder for this test."""
    settings.DATA_ROOT = tmp_path
    for name in ("staging", "cache", "volumes", "outbox"):
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
