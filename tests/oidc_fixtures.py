"""Fixtures for the real OpenID provider (tests/oidc_provider.py): one node process for the
session, and Granary pointed at it for a test."""
import pytest

from tests.oidc_provider import OidcProvider

CALLBACK = "http://testserver/api/v1/auth/oidc/callback/"


@pytest.fixture(scope="session")
def oidc_provider(tmp_path_factory):
    provider = OidcProvider(tmp_path_factory.mktemp("oidc"), [CALLBACK])
    provider.start()
    yield provider
    provider.close()


@pytest.fixture
def oidc(settings, oidc_provider):
    """Granary signs in through the test provider; its keys are fetched afresh."""
    from django.core.cache import cache

    settings.GRANARY_OIDC = oidc_provider.settings()
    cache.clear()
    yield oidc_provider
    cache.clear()
