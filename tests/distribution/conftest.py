"""Distribution fixtures: a two-silo archive with real bytes, users, and a way to run the
after-commit work (archive signals, distribution tasks) inline."""
import io

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from backend.accounts import roles
from backend.archive import services as archive
from backend.archive.models import CacheEntry
from ingest.models import IngestRequest
from ingest.services import pipeline
from tests.archive_fixtures import archived_collection, small_layout, staged_granule
from tests.factories import UserFactory
from tests.sftp_server import SftpServer


@pytest.fixture
def archive_layout(data_root, settings):
    settings.GRANARY_CACHE_BYTES = 1 << 30
    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    settings.GRANARY_READ_MAX_WAIT_S = 0
    settings.GRANARY_REMOUNT_DELAY_S = 0
    settings.GRANARY_SITE_URL = "http://testserver/"
    primary, backup, _ = small_layout()
    return [primary, backup]


@pytest.fixture
def collection(archive_layout):
    return archived_collection(archive_layout, short_name="MOD021KM", version="061")


@pytest.fixture
def inline(django_capture_on_commit_callbacks, eager):
    """Call fn with the after-commit work it starts (tasks, signals) carried out at once."""
    def run(fn, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return fn(*args, **kwargs)
    return run


@pytest.fixture
def archived(inline, data_root):
    """archived(collection, n, **granule fields) -> granules on tape (and in the cache)."""
    def make(collection, n=1, sizes=(3000, 500), **fields):
        made = []
        for _ in range(n):
            granule, sources = staged_granule(collection, data_root / "staging", sizes=sizes,
                                              **fields)
            assert archive.archive_granule(granule, sources).admitted
            made.append(granule)
        inline(archive.run_until_idle)
        for g in made:
            g.refresh_from_db()
            assert g.state == "archived"
        return made
    return make


@pytest.fixture
def sftp_server(data_root):
    """A real SFTP server on 127.0.0.1, not yet listening: start(authorized_keys) it."""
    server = SftpServer(data_root / "sftp-server")
    yield server
    server.close()


def evict(granules):
    """Leave only the tape copies: the cache forgets the granules' files."""
    for granule in granules:
        for f in granule.files.all():
            CacheEntry.objects.filter(file=f).delete()
            archive.cache_path(f).unlink(missing_ok=True)


def client_for(role=roles.USER, **kwargs):
    user = UserFactory(role=role, **kwargs)
    client = APIClient()
    client.force_authenticate(user)
    client.user = user
    return client


@pytest.fixture
def alice(db):
    return client_for()


@pytest.fixture
def bob(db):
    return client_for()


@pytest.fixture
def operator(db):
    return client_for(roles.OPERATOR)


def body(response):
    return b"".join(response.streaming_content)


@pytest.fixture
def seeded(data_root, settings, inline):
    """The demo's collections with 2 granules each (real NetCDF-4 and HDF5 files), ingested
    and archived through the real pipeline."""
    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    settings.GRANARY_SITE_URL = "http://testserver/"
    call_command("seed_demo", "--granules", "2", stdout=io.StringIO())
    for request in IngestRequest.objects.all():
        inline(pipeline.run_request, request.pk)
    inline(archive.run_until_idle)
    assert set(IngestRequest.objects.values_list("state", flat=True)) == {"completed"}
