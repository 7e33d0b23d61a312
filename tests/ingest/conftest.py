"""Ingest fixtures: a two-silo archive, a provider with rights on MOD021KM.061, its API client."""
import pytest
from rest_framework.test import APIClient

from backend.accounts import roles
from backend.archive import services as archive
from ingest.models import IngestRequest
from ingest.services import pipeline
from tests.archive_fixtures import archived_collection, small_layout
from tests.factories import ProviderFactory, UserFactory


@pytest.fixture
def archive_layout(data_root, settings):
    settings.GRANARY_CACHE_BYTES = 1 << 30
    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    settings.GRANARY_READ_MAX_WAIT_S = 0
    settings.GRANARY_REMOUNT_DELAY_S = 0
    settings.GRANARY_DROP_STABLE_S = 0
    primary, backup, _ = small_layout()
    return [primary, backup]


@pytest.fixture
def collection(archive_layout):
    return archived_collection(archive_layout, short_name="MOD021KM", version="061")


@pytest.fixture
def provider(collection):
    provider = ProviderFactory(name="MODAPS")
    provider.collections.add(collection)
    return provider


@pytest.fixture
def client(provider):
    user = UserFactory(role=roles.PROVIDER)
    provider.members.add(user)
    api = APIClient()
    api.force_authenticate(user)
    api.user = user
    return api


@pytest.fixture
def drain(django_capture_on_commit_callbacks, eager):
    """Run every waiting ingest chunk and the storage manager in this process, with the
    after-commit work (the archive's granule_archived signal, PANs) carried out."""

    def run():
        with django_capture_on_commit_callbacks(execute=True):
            for request_id in IngestRequest.objects.values_list("pk", flat=True):
                pipeline.run_request(request_id)
        with django_capture_on_commit_callbacks(execute=True):
            archive.run_until_idle()

    return run
