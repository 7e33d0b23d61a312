"""Uploads stream into the staging area; drop folders are polled and grouped into granules."""
import hashlib
import os

import pytest

from backend.catalog.models import Granule
from backend.errors import DomainError
from ingest.models import IngestGranule, IngestRequest
from ingest.services import polling, uploads
from tests.factories import CollectionFactory
from tests.ingest.builders import MET, area

pytestmark = pytest.mark.django_db

UPLOAD = "/api/v1/ingest/uploads/"


def put(client, path, data, **headers):
    return client.put(UPLOAD + path, data=data, content_type="application/octet-stream",
                      **{f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()})


def test_upload_streams_into_staging_then_ingests(client, provider, collection, settings,
                                                  drain):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024  # the body is never read into memory whole
    data = os.urandom(300_000)
    digest = hashlib.sha256(data).hexdigest()
    answer = put(client, "in/big.dat", data, x_checksum_type="SHA256", x_checksum=digest)
    assert answer.status_code == 201, answer.json()
    assert answer.json() == {"path": "in/big.dat", "size": 300_000, "checksum_type": "SHA256",
                             "checksum": digest}
    assert (area(provider) / "in/big.dat").read_bytes() == data
    spec = {"collection": collection.key, "granule_id": "BIG",
            "temporal": {"start": "2024-01-01T00:00:00Z", "end": "2024-01-01T00:01:00Z"},
            "files": [{"path": "in/big.dat", "size": 300_000, "checksum_type": "SHA256",
                       "checksum": digest}]}
    assert client.post("/api/v1/ingest/requests/", {"granules": [spec]},
                       format="json").status_code == 202
    drain()
    assert Granule.objects.get().state == Granule.State.ARCHIVED


@pytest.mark.parametrize(("path", "headers", "status", "words"), [
    ("in/a.dat", {"x_checksum_type": "MD5", "x_checksum": "0" * 32}, 400,
     "The MD5 checksum of what arrived is"),
    ("in/a.dat", {"x_checksum_type": "CRC64", "x_checksum": "1"}, 400,
     "unsupported checksum type 'CRC64'"),
    ("in/a.dat", {"x_checksum": "1"}, 400, "X-Checksum needs X-Checksum-Type"),
    ("../a.dat", {}, 400, "climbs out with '..'"),
    ("in/%C3%A9.dat", {}, 400, "non-ASCII"),
])
def test_bad_uploads_leave_nothing(client, provider, path, headers, status, words):
    answer = put(client, path, b"x" * 5000, **headers)
    assert answer.status_code == status, answer.content
    assert words in answer.json()["detail"]
    leftovers = [p for p in area(provider).rglob("*") if p.is_file()] \
        if area(provider).exists() else []
    assert leftovers == []


@pytest.mark.parametrize("path", [".poll.lock", "in/.G1.dat.upload-0123456789ab", ".x.PAN"])
def test_upload_may_not_take_the_names_granary_keeps_in_staging(client, provider, path):
    """The staging poller's lock (and Granary's other hidden files) cannot be overwritten."""
    area(provider).mkdir(parents=True)
    lock = area(provider) / ".poll.lock"
    lock.write_bytes(b"")
    answer = put(client, path, b"x" * 5000)
    assert answer.status_code == 400, answer.content
    assert "reserved for Granary's own files" in answer.json()["detail"]
    assert lock.read_bytes() == b""
    assert [p.name for p in area(provider).rglob("*")] == [".poll.lock"]


def test_poller_still_works_after_a_refused_lock_upload(client, provider):
    assert put(client, ".poll.lock", b"x" * 10).status_code == 400
    assert polling.poll_staging()["pdrs"] == 0


def test_upload_over_the_maximum(client, provider, settings):
    settings.GRANARY_UPLOAD_MAX_BYTES = 1000
    answer = put(client, "in/a.dat", b"x" * 1001)
    assert answer.status_code == 413
    assert "uploads may be at most 1000 bytes" in answer.json()["detail"]


def test_upload_cut_short(provider):
    import io

    with pytest.raises(DomainError, match="Received 10 of 50 bytes"):
        uploads.receive_upload(provider, "in/a.dat", io.BytesIO(b"x" * 10), 50)
    assert not list(area(provider).rglob("*.dat*"))


def test_empty_upload(client, provider):
    answer = put(client, "in/a.dat", b"")
    assert answer.status_code in (400, 411)
    assert not (area(provider) / "in/a.dat").exists()


@pytest.fixture
def patterned(collection):
    collection.file_patterns = [r"(?P<granule>MOD021KM\.A\d{7}\.\d{4}\.061)\.hdf",
                                r"(?P<granule>MOD021KM\.A\d{7}\.\d{4}\.061)\.hdf\.met"]
    collection.save()
    return collection


def test_drop_folder_groups_files_into_granules(provider, patterned, drain):
    folder = area(provider) / "drop" / "MOD021KM.061"
    folder.mkdir(parents=True)
    for n in range(3):
        gid = f"MOD021KM.A2024001.{n:04d}.061"
        (folder / f"{gid}.hdf").write_bytes(os.urandom(2000))
        if n < 2:  # the third granule lacks its .met: not complete yet
            (folder / f"{gid}.hdf.met").write_text(MET.format(granule_id=f"{gid}.hdf"))
    assert polling.poll_staging() == {"pdrs": 0, "drops": 1}
    request = IngestRequest.objects.get()
    assert (request.way, request.label, request.granule_count) == ("drop",
                                                                   "drop/MOD021KM.061", 2)
    assert polling.poll_staging()["drops"] == 0  # claimed files are not taken twice
    drain()
    request.refresh_from_db()
    assert request.state == "completed"
    granule = Granule.objects.get(granule_id="MOD021KM.A2024001.0000.061")
    assert granule.bbox == [-20.5, 20.0, 10.25, 40.0]
    assert granule.files.get(role="data").checksum_type == "MD5"
    assert (folder / "MOD021KM.A2024001.0002.061.hdf").exists()


def test_drop_files_still_arriving_wait(provider, patterned, settings):
    settings.GRANARY_DROP_STABLE_S = 3600
    folder = area(provider) / "drop" / "MOD021KM.061"
    folder.mkdir(parents=True)
    gid = "MOD021KM.A2024001.0000.061"
    (folder / f"{gid}.hdf").write_bytes(b"x" * 100)
    (folder / f"{gid}.hdf.met").write_text(MET.format(granule_id=gid))
    assert polling.poll_staging()["drops"] == 0
    (folder / f"{gid}.hdf.done").touch()
    (folder / f"{gid}.hdf.met.done").touch()
    assert polling.poll_staging()["drops"] == 1
    assert not list(folder.glob("*.done"))


def test_drop_folder_of_a_collection_not_allowed(provider):
    other = CollectionFactory(short_name="MYD021KM", version="061")
    folder = area(provider) / "drop" / other.key
    folder.mkdir(parents=True)
    (folder / "x.hdf").write_bytes(b"x")
    assert polling.poll_staging()["drops"] == 0
    assert not IngestGranule.objects.exists()


def test_upload_onto_a_folder(client, provider):
    (area(provider) / "in" / "sub").mkdir(parents=True)
    answer = put(client, "in/sub", b"x" * 10)
    assert answer.status_code == 409 and "is a folder" in answer.json()["detail"]


def test_files_of_a_poller_that_died_go_back(provider, patterned, settings):
    folder = area(provider) / "drop" / "MOD021KM.061"
    orphan = folder / ".claimed" / "deadbeef"
    orphan.mkdir(parents=True)
    gid = "MOD021KM.A2024001.0000.061"
    (orphan / f"{gid}.hdf").write_bytes(b"x" * 100)
    (orphan / f"{gid}.hdf.met").write_text(MET.format(granule_id=gid))
    settings.GRANARY_INGEST_STALE_S = 0
    assert polling.poll_staging()["drops"] == 0  # moved back first, taken on the next poll
    assert not orphan.exists() and (folder / f"{gid}.hdf").exists()
    assert polling.poll_staging()["drops"] == 1


def test_one_poller_per_area_at_a_time(provider, patterned):
    folder = area(provider) / "drop" / "MOD021KM.061"
    folder.mkdir(parents=True)
    (folder / "MOD021KM.A2024001.0000.061.hdf").write_bytes(b"x")
    (folder / "MOD021KM.A2024001.0000.061.hdf.met").write_bytes(b"x")
    with polling._poll_lock(area(provider)) as mine:
        assert mine
        assert polling.poll_staging()["drops"] == 0
    assert polling.poll_staging()["drops"] == 1
