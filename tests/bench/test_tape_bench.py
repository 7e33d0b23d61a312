"""`bench tape` at a tiny size, for real: its own tgt library on a free loopback port, two
granules of 3 MiB and 40 of 4 KiB archived and recalled through one drive beside the plain SSC
loop. The JSON holds every figure the table prints; the library it started is gone; and every
granule ended ARCHIVED with one verified copy whose bytes, read by tarfile from the cartridge's
tgt backing file (not by Granary), hash with hashlib to the staged file's, as do the recalled
cache files: counts and bytes, never times."""
import hashlib
import io
import json
import os
import tarfile

import pytest
from django.core.management import call_command

from backend.archive import services
from backend.archive.models import FileCopy
from backend.catalog.models import File, Granule
from bench import tgt_media
from tests.tape_fixtures import iscsi_port

FILES, SIZE_MIB, SMALL = 2, 3, 40


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow  # about a minute: tgt, the plain loop and Granary's movers for real
@pytest.mark.django_db(transaction=True)
def test_a_tiny_tape_run_archives_and_recalls_every_granule_with_its_bytes_on_the_cartridge(
        data_root, settings):
    port = iscsi_port(3275)   # skips where tgt cannot run
    # the bench sets these on the settings: through the fixture they are put back after
    for name in ("GRANARY_TAPE", "GRANARY_SCSI", "GRANARY_WRITE_MAX_WAIT_S",
                 "GRANARY_READ_MAX_WAIT_S", "GRANARY_REMOUNT_DELAY_S", "GRANARY_CACHE_BYTES"):
        setattr(settings, name, getattr(settings, name))
    out = data_root / "tape.json"
    call_command("bench", "tape", "--inner", "--files", str(FILES), "--size-mib", str(SIZE_MIB),
                 "--small", str(SMALL), "--small-kib", "4", "--port", str(port),
                 "--json", str(out))
    result = json.loads(out.read_text())

    # the figures, each clock split into the tape path and the rest
    for kind in ("large", "small"):
        row = result[kind]
        for key in ("plain_write_mb_s", "plain_read_mb_s", "granary_archive_mb_s",
                    "granary_recall_mb_s", "ratio_archive", "ratio_recall"):
            assert row[key] > 0, (kind, key)
        assert 0 < row["archive_tape_s"] <= row["archive_s"]
        assert 0 < row["recall_tape_s"] <= row["recall_s"]
        assert row["recall_statements_per_file"] > 0
    assert result["large"]["plain_read_landed_mb_s"] > 0
    assert result["large"]["cache_disk_write_mb_s"] > 0
    assert result["large"]["ratio_recall_bound"] >= result["large"]["ratio_recall"]
    assert result["small_per_file_plain"]["read_mb_s"] > 0
    # the reference is the plain loop's mean seconds over its runs before and after Granary's:
    # the harmonic mean of their rates (to the three digits the figures keep)
    for kind in ("large", "small"):
        row = result[kind]
        assert len(row["plain_runs"]) == 2
        for way in ("write", "read"):
            rates = [run[f"{way}_mb_s"] for run in row["plain_runs"]]
            assert all(rate > 0 for rate in rates)
            mean = 2 / sum(1 / rate for rate in rates)
            assert abs(row[f"plain_{way}_mb_s"] - mean) <= 0.01 * mean, (kind, way, rates)

    # the library it started is stopped
    vtl = settings.DATA_ROOT / "vtl"
    env = dict(line.split("=", 1) for line in (vtl / "library.env").read_text().split())
    assert not (vtl / "tgtd.pid").exists() and not _alive(int(env["TGTD_PID"]))

    # every granule archived, its one copy on a cartridge with the staged bytes
    staged = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
              for p in (settings.STAGING_ROOT / "bench").iterdir()}
    assert len(staged) == FILES + SMALL
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == FILES + SMALL
    copies = FileCopy.objects.filter(state=FileCopy.State.VERIFIED).select_related(
        "file", "volume")
    assert sorted(c.file.name for c in copies) == sorted(staged)
    for label in {c.volume.label for c in copies}:
        stream = tgt_media.first_file(vtl / "media" / label)
        with tarfile.open(fileobj=io.BytesIO(stream)) as tar:
            members = {m.offset_data: m for m in tar.getmembers()}
            for c in copies.filter(volume__label=label):
                data = tar.extractfile(members[c.data_offset]).read()
                assert hashlib.sha256(data).hexdigest() == staged[c.file.name]

    # and recalled into the cache with them
    for f in File.objects.all():
        assert hashlib.sha256(services.cache_path(f).read_bytes()).hexdigest() == staged[f.name]
