"""`bench object-store` at a tiny size, for real: its own S3 server (rclone), gunicorn and the
Celery workers as subprocesses on the test database, two files of 6 MiB in 5 MiB parts (so both
Granary and the direct baseline send multipart uploads) and 50 small granules per way in. The
JSON holds the figures; the server it started is gone; and every granule ended ARCHIVED with
verified object copies holding the bytes that were delivered, read back with boto3 from a fresh
server over the bench's S3 folder and hashed with hashlib: counts and bytes, never times."""
import hashlib
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from backend.archive.models import FileCopy
from backend.catalog.models import File, Granule
from bench import object_store
from tests.s3_server import S3Server
from tests.workers import database_url

FILES, SIZE_MIB, GRANULES = 2, 6, 50


def _staged_digests(area):
    """{file name: MD5 of the bytes delivered} over the provider's staging area (the large
    files sit in a folder per run as hard links: one name, one content)."""
    out = {}
    for path in area.rglob("*.dat"):
        digest = hashlib.md5(path.read_bytes()).hexdigest()
        assert out.setdefault(path.name, digest) == digest, path
    return out


def _rclone_running(pid):
    try:
        return "rclone" in Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return False


@pytest.mark.slow  # about a minute: rclone, gunicorn and two workers for real
@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_tiny_object_store_run_archives_every_granule_with_its_bytes_in_the_bucket(
        data_root, monkeypatch, settings):
    # the subprocesses use this test's database and data root; parts of 5 MiB (S3's least)
    monkeypatch.setenv("DATABASE_URL", database_url())
    monkeypatch.setenv("GRANARY_DATA_ROOT", str(data_root))
    monkeypatch.setenv("GRANARY_S3_PART_MB", "5")
    settings.GRANARY_S3_PART_BYTES = 5 << 20
    out = data_root / "object-store.json"
    call_command("bench", "object-store", "--inner", "--files", str(FILES), "--size-mib",
                 str(SIZE_MIB), "--granules", str(GRANULES), "--pdr-granules", "25",
                 "--direct-threads", "4", "--json", str(out))
    result = json.loads(out.read_text())

    # the figures
    assert result["part_bytes"] == 5 << 20 and result["direct"]["threads"] == 4
    assert result["direct"]["mb_s"] > 0 and result["direct"]["small_puts_per_s"] > 0
    for run in ("bucket", "bucket_tape"):
        assert result["large"][run]["mb_s"] > 0 and result["large"][run]["ratio_to_direct"] > 0
        assert result["small"][run]["granules_per_s"] > 0
        assert result["small"][run]["ratio_to_tape"] > 0
    for run in ("tape", "tape_before", "tape_after"):
        assert result["small"][run]["granules_per_s"] > 0
    assert set(result["goals"]) == set(result["goals_met"]) <= set(result["ratios"])
    assert {"web", "ingest", "archive"} <= set(result["cpu_s"]["small_bucket"])
    assert not _rclone_running(result["s3_server"]["pid"])

    # every granule ARCHIVED, every file with its copies verified
    runs = {c: t for _, c, t in object_store.LARGE_RUNS + object_store.SMALL_RUNS}
    runs[object_store.TAPE[0]] = object_store.TAPE[1]
    expected = {"BENCHLO": FILES, "BENCHLOT": FILES, "BENCHSO": 2 * GRANULES,
                "BENCHSOT": 2 * GRANULES, "BENCHS": 4 * GRANULES}
    for short_name, count in expected.items():
        granules = Granule.objects.filter(collection__short_name=short_name)
        assert granules.count() == count
        assert set(granules.values_list("state", flat=True)) == {Granule.State.ARCHIVED}
        for f in File.objects.filter(granule__collection__short_name=short_name):
            copies = FileCopy.objects.filter(file=f, state=FileCopy.State.VERIFIED)
            assert sorted((c.copy_number, c.bucket_id is not None) for c in copies) == [
                (n, target == "bucket") for n, target in enumerate(runs[short_name], start=1)]
    assert result["object_copies_verified"] == 2 * FILES + 4 * GRANULES

    # the objects' bytes are the delivered bytes and the catalog's, by boto3 and hashlib
    delivered = _staged_digests(data_root / "staging" / "BENCHS")
    assert len(delivered) == FILES + 8 * GRANULES   # the large names are shared by both runs
    server = S3Server(root=data_root / "s3", temp_dir=data_root).start()
    try:
        s3 = server.client()
        listed = s3.list_objects_v2(Bucket=object_store.GRANARY_BUCKET, MaxKeys=1000)
        copies = list(FileCopy.objects.filter(bucket__isnull=False).select_related("file"))
        assert len(copies) == result["object_copies_verified"]
        # small files go packed, several to an object: an object per key the copies name
        assert sorted(o["Key"] for o in listed["Contents"]) == sorted({c.key for c in copies})
        assert "Contents" not in s3.list_objects_v2(Bucket=object_store.DIRECT_BUCKET)
        for copy in copies:
            # a member of a pack lies at its data offset in the object
            span = ({"Range": f"bytes={copy.data_offset}-{copy.data_offset + copy.length - 1}"}
                    if copy.data_offset else {})
            data = s3.get_object(Bucket=object_store.GRANARY_BUCKET, Key=copy.key,
                                 **span)["Body"].read()
            f = copy.file
            assert len(data) == f.size == copy.length
            assert hashlib.md5(data).hexdigest() == delivered[f.name], copy.key
            assert hashlib.new(f.checksum_type.lower(), data).hexdigest() == f.checksum.lower()
    finally:
        server.close()
