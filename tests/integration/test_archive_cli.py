"""`manage.py archive ...`: operator functions from the command line, catalog rebuild from
the volumes alone, and a storage manager killed in the middle of a write."""
import io
import os
import signal
import subprocess
import sys
import time

import pytest
from django.core.management import CommandError, call_command

from backend.archive import services
from backend.archive.models import ArchiveRequest, Bucket, Drive, FileCopy, Volume
from backend.archive.services import manager, paths
from backend.catalog.models import Granule
from tests.archive_fixtures import archived_collection, small_layout, staged_granule
from tests.s3_server import ACCESS_KEY, SECRET_KEY
from tests.workers import ROOT, database_url

FIELDS = ("file_id", "copy_number", "segment", "file_offset", "volume_id", "position",
          "data_offset", "length", "checksum_type", "checksum", "state")


def archive(*args):
    out = io.StringIO()
    call_command("archive", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def archived(db, data_root, settings):
    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    settings.GRANARY_READ_MAX_WAIT_S = 0
    settings.GRANARY_REMOUNT_DELAY_S = 0
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup], short_name="MOD021KM", version="061")
    granules = []
    for sizes in ((3000, 4000), (100 << 20,)):     # the second spans two volumes
        granule, sources = staged_granule(collection, data_root / "staging", sizes=sizes)
        services.archive_granule(granule, sources)
        granules.append(granule)
    services.run_until_idle()
    return granules


def test_rebuild_catalog_from_volumes_alone_gives_the_same_rows(archived):
    before = sorted(FileCopy.objects.values_list(*FIELDS))
    assert len(before) == 8     # 2 small files x 2 copies + 1 file x 2 copies x 2 segments
    volumes_before = sorted(Volume.objects.values_list("label", "end_of_data", "live_bytes",
                                                       "file_count", "group_id"))
    FileCopy.objects.all().delete()
    Volume.objects.update(live_bytes=0, file_count=0)

    out = archive("rebuild-catalog")
    assert "created: 8" in out and "bad: 0" in out and "unknown: 0" in out
    assert sorted(FileCopy.objects.values_list(*FIELDS)) == before
    assert sorted(Volume.objects.values_list("label", "end_of_data", "live_bytes",
                                             "file_count", "group_id")) == volumes_before
    assert archive("rebuild-catalog").count("created: 0") == 1


def test_operator_subcommands(archived):
    small = archived[0].files.order_by("name").first()
    assert "primary" in archive("groups") and "backup" in archive("groups")
    assert "A00001" in archive("volumes", "--state", "full")
    assert small.name in archive("files", "B00001")
    status = archive("file-status", str(small.pk))
    assert "cache: clean" in status and "complete: yes" in status and "A00001" in status
    ref = f"MOD021KM.061:{archived[0].granule_id}/{small.name}"
    assert archive("file-status", ref) == status
    assert "silo2-d2" in archive("drives")
    assert "drive silo1-d1 is offline" in archive("vary", "silo1-d1", "off", "--reason", "x")
    assert "drive silo1-d1 is idle" in archive("vary", "silo1-d1", "on")
    assert "labelled 2 volumes: C00001 .. C00002" in archive(
        "label", "--silo", "silo1", "--media", "test-media", "--count", "2", "--prefix", "C")
    assert "1 files pinned" in archive("pin", "pin", ref)
    assert "3 copies queued for audit" in archive("audit", "--volume", "B00001")
    assert "audit" in archive("queue")
    assert "repack request" in archive("repack", "A00002")
    assert "MiB" in archive("cache")


def test_operator_subcommands_refuse_clearly(archived):
    with pytest.raises(CommandError, match="no volume Z99999"):
        archive("files", "Z99999")
    with pytest.raises(CommandError, match="give --volume LABEL or --sample N"):
        archive("audit")
    with pytest.raises(CommandError, match="only filling, full, read-only or suspect"):
        archive("repack", "A00004")
    with pytest.raises(CommandError, match="no file NOPE.1:x/y"):
        archive("file-status", "NOPE.1:x/y")


@pytest.mark.django_db(transaction=True)
@pytest.mark.services
def test_storage_manager_killed_mid_write_counts_nothing_and_a_restart_finishes(data_root):
    media = {"name": "slow-media", "rate_mb_s": 2, "mount_s_min": 0, "mount_s_max": 0,
             "unmount_s": 0, "position_s_per_gb": 0, "capacity_bytes": 1 << 30}
    primary, backup, _ = small_layout(media=media, drives_per_silo=1, volumes_per_silo=2)
    collection = archived_collection([primary, backup])
    granule, sources = staged_granule(collection, data_root / "staging", sizes=(32 << 20,))
    services.archive_granule(granule, sources)
    env = dict(os.environ, DATABASE_URL=database_url(), GRANARY_DATA_ROOT=str(data_root),
               GRANARY_WRITE_MAX_WAIT_S="0", GRANARY_DRIVE_LEASE_S="3")
    volume = Volume.objects.get(label="A00001")
    label_end = volume.end_of_data
    path = paths.volume_path(volume)

    # time scale 1: after the bytes reach the volume the drive "transfers" for 16 s
    mover = subprocess.Popen([sys.executable, "manage.py", "archive", "run"], cwd=ROOT,
                             env=dict(env, GRANARY_TIME_SCALE="1"),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while os.path.getsize(path) < label_end + (32 << 20) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert mover.poll() is None, mover.stdout.read()
    # a write that outlasts the lease keeps it: the mover renews it while it works, so the
    # beat's recovery does not hand its running request to another mover
    time.sleep(4)
    assert manager.recover_stale_work() == 0
    assert ArchiveRequest.objects.filter(state="running", copy_number=1).exists()
    mover.send_signal(signal.SIGKILL)
    mover.wait()

    assert os.path.getsize(path) >= label_end + (32 << 20)    # the bytes are on the volume...
    assert not FileCopy.objects.exists()                      # ...but no copy counts
    volume.refresh_from_db()
    assert volume.end_of_data == label_end
    assert ArchiveRequest.objects.filter(state="running").exists()
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVING

    time.sleep(3.5)   # the dead mover's lease runs out
    restart = subprocess.run([sys.executable, "manage.py", "archive", "run"], cwd=ROOT,
                             env=dict(env, GRANARY_TIME_SCALE="0"), capture_output=True,
                             text=True, timeout=120)
    assert restart.returncode == 0, restart.stdout + restart.stderr
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVED
    copy1 = FileCopy.objects.get(copy_number=1)
    assert copy1.position == label_end and copy1.state == "verified"
    assert not Drive.objects.exclude(lease_owner="").exists()


@pytest.mark.parametrize("argv", [["archive"], ["archive", "queue"], ["archive", "groups"],
                                  ["ingest"], ["bench"]])
def test_help_prints_for_every_command(argv):
    """`manage.py archive --help` crashed: argparse reads '%' in help as a format."""
    out = subprocess.run([sys.executable, "manage.py", *argv, "--help"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "usage: manage.py" in out.stdout


def test_add_bucket_makes_the_copy_target_and_the_bucket_and_buckets_lists_it(
        db, settings, s3_bucket):
    server, taken = s3_bucket
    settings.GRANARY_OBJECT_STORES = {"default": {
        "endpoint_url": server.endpoint_url, "access_key": ACCESS_KEY, "secret_key": SECRET_KEY,
        "region": "us-east-1"}}
    name = f"{taken}-new"
    out = archive("add-bucket", "archive-s3", "--bucket", name, "--prefix", "granary/",
                  "--create")
    assert out.strip() == (f"bucket archive-s3: {name} on object store default, keys under "
                           "granary/")
    bucket = Bucket.objects.get(name="archive-s3")
    assert (bucket.store, bucket.bucket, bucket.prefix) == ("default", name, "granary/")
    server.client().head_bucket(Bucket=name)      # made on the server

    listed = archive("buckets").splitlines()
    assert listed[0].split() == ["bucket", "store", "on", "the", "server", "objects", "held",
                                 "failures", "health"]
    assert listed[1].split() == ["archive-s3", "default", f"{name}/granary/", "0", "0.0",
                                 "MiB", "0", "ok"]

    with pytest.raises(CommandError, match="no object store elsewhere"):
        archive("add-bucket", "other", "--bucket", "b", "--store", "elsewhere")
    settings.GRANARY_OBJECT_STORES["down"] = {"endpoint_url": "http://127.0.0.1:9",
                                              "access_key": "a", "secret_key": "b"}
    with pytest.raises(CommandError, match="unreachable.*nothing was recorded"):
        archive("add-bucket", "later", "--bucket", "b", "--store", "down", "--create")
    assert "later" not in archive("buckets")
