"""Console fixtures: a two-silo archive with two collections, a provider and its client, a user,
and makers of failed work of every kind, each made through the services that fail it in
production (a wrong checksum, a damaged cache copy, a mover dying, a push that cannot land),
and the bulk jobs' small two-silo layout."""
import pytest

from backend.accounts import roles
from backend.archive import services as archive
from backend.archive.models import Drive
from backend.archive.services import manager, queueing
from ingest.models import IngestRequest
from ingest.services import pipeline
from tests.archive_fixtures import (
    archived_collection,
    movers_without_waits,
    small_layout,
    staged_granule,
)
from tests.distribution import conftest as distribution
from tests.factories import ProviderFactory
from tests.ingest.builders import area, granule, stage

# shared with the distribution tests: the archive, inline after-commit work, clients per role
archive_layout = distribution.archive_layout
inline = distribution.inline
client_for, evict = distribution.client_for, distribution.evict


@pytest.fixture
def collections(archive_layout):
    return (archived_collection(archive_layout, short_name="MOD021KM", version="061"),
            archived_collection(archive_layout, short_name="MOD09GA", version="061"))


@pytest.fixture
def provider(collections):
    provider = ProviderFactory(name="MODAPS")
    provider.collections.add(*collections)
    return provider


@pytest.fixture
def provider_client(provider):
    client = client_for(roles.PROVIDER)
    provider.members.add(client.user)
    return client


@pytest.fixture
def drain(inline):
    """Every waiting ingest chunk, then the storage manager, run here to the end."""
    def run():
        for request_id in IngestRequest.objects.values_list("pk", flat=True):
            inline(pipeline.run_request, request_id)
        inline(archive.run_until_idle)
    return run


@pytest.fixture
def ingest(provider_client, provider, drain):
    """ingest([(collection, granule id, fault)]) -> the request id; fault is None (a good
    granule), "checksum" (a checksum the bytes do not have), "zeros" (a checksum of only
    zeros, a placeholder no file has), "size" (one byte more declared) or "missing" (the file
    is not in staging)."""
    def submit(specs):
        body = []
        for n, (collection, granule_id, fault) in enumerate(specs):
            spec = granule(collection, granule_id, [stage(provider, f"in/{granule_id}.dat")],
                           hour=n)
            f = spec["files"][0]
            if fault == "checksum":
                f["checksum"] = "0" * 31 + str(n % 9 + 1)
            elif fault == "zeros":
                f["checksum"] = "0" * 32
            elif fault == "size":
                f["size"] += 1
            elif fault == "missing":
                (area(provider) / f["path"]).unlink()
            body.append(spec)
        answer = provider_client.post("/api/v1/ingest/requests/", {"granules": body},
                                      format="json")
        assert answer.status_code == 202, answer.content
        drain()
        return answer.json()["id"]
    return submit


@pytest.fixture
def damaged_migrations(collections, data_root, inline):
    """damaged_migrations(collection, n): n granules whose cached copy changed after ingest, so
    every copy's migration fails (the file's own fault, at its first attempt)."""
    def make(collection, n):
        for _ in range(n):
            made, sources = staged_granule(collection, data_root / "staging", sizes=(5000,))
            assert archive.archive_granule(made, sources).admitted
            f = made.files.get()
            cached = archive.cache_path(f)
            data = bytearray(cached.read_bytes())
            cached.unlink()                      # break the hard link to staging first
            data[7] ^= 0xFF
            cached.write_bytes(bytes(data))
        inline(archive.run_until_idle)
    return make


@pytest.fixture
def archived(collections, data_root, inline):
    def make(collection, n=1):
        made = []
        for _ in range(n):
            granule_, sources = staged_granule(collection, data_root / "staging",
                                               sizes=(3000,))
            assert archive.archive_granule(granule_, sources).admitted
            made.append(granule_)
        inline(archive.run_until_idle)
        return made
    return make


@pytest.fixture
def dead_recalls(archived):
    """dead_recalls(collection, n): n recalls whose mover died under them MAX_ATTEMPTS times
    (claimed by a drive, then requeued by the stale-work recovery), so they failed for good."""
    def make(collection, n):
        granules = archived(collection, n)
        evict(granules)
        files = [g.files.get() for g in granules]
        requests = [a.request_id for a in archive.make_available(files)]
        drive = Drive.objects.order_by("pk").first()
        for _ in range(queueing.MAX_ATTEMPTS):
            queueing.claim(requests, drive)
            manager.recover_stale_work(force=True)
        return requests
    return make


@pytest.fixture
def layout(data_root, settings):
    """The bulk jobs' archive: a small two-silo layout and a collection archived on it."""
    movers_without_waits(settings)
    primary, backup, media = small_layout()
    bulk_collection = archived_collection([primary, backup], short_name="MOD09GA",
                                          version="061")
    return bulk_collection, primary, backup, media
