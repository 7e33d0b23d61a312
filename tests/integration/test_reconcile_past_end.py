"""Bytes past a volume's recorded end of data (a write whose recording a database restart
lost) are told by reconciliation as a note, with what they are, and never counted as
discrepancies; the next append cuts them off. The members expected are read from the volume
with Python's tarfile, not with the archive's own scan."""
import os
import tarfile

import pytest
from django.core.management import call_command

from backend.archive import services
from backend.archive.models import ArchiveRequest, FileCopy
from backend.archive.services import paths, writing
from backend.archive.services.reconcile import reconcile
from backend.archive.tape import VolumeWriter
from bench.chaos import verify
from tests.archive_fixtures import (
    archive_granules,
    archived_collection,
    movers_without_waits,
    small_layout,
    staged_granule,
)

pytestmark = pytest.mark.django_db
URL = "/api/v1/archive/reconciliation/"
GNU_XATTR = "SCHILY.xattr.user.granary."   # how GNU tar lists the members' own headers


@pytest.fixture
def unrecorded(data_root, settings):
    """Two granules archived; then copy 1 of three more (two files each) written onto the
    volume copy 1 fills, read back fine, but never recorded: the volume's end of data stays
    where it was and the migrations stay queued. Returns (volume, the new granules)."""
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    archive_granules(collection, data_root / "staging", (40000, 30000))
    volume = FileCopy.objects.filter(copy_number=1).order_by("-pk")[0].volume
    granules = []
    for _ in range(3):
        granule, sources = staged_granule(collection, data_root / "staging",
                                          sizes=(25000, 9000))
        assert services.archive_granule(granule, sources).admitted
        granules.append(granule)
    requests = (ArchiveRequest.objects.filter(copy_number=1, state="queued")
                .select_related("file__granule__collection").order_by("pk"))
    assert len(requests) == 6
    writer = VolumeWriter(paths.volume_path(volume), volume.end_of_data)
    for request in requests:
        writing._write_member(writer, request, request.file.size, 0)
    writer.close()
    return volume, granules


def past_end(volume):
    """(name, size, granule id) of each member at or past the recorded end of data, by tarfile."""
    with tarfile.open(paths.volume_path(volume)) as tar:
        return [(m.name, m.size, m.pax_headers[f"{GNU_XATTR}granule_id"])
                for m in tar.getmembers() if m.offset >= volume.end_of_data]


def test_members_past_the_end_of_data_are_a_note_not_a_discrepancy(unrecorded):
    volume, granules = unrecorded
    expected = past_end(volume)
    assert len(expected) == 6
    assert {g for _, _, g in expected} == {g.granule_id for g in granules}
    tail = os.path.getsize(paths.volume_path(volume)) - volume.end_of_data

    run = reconcile(full=True)
    assert (run.state, run.discrepancy_count) == ("done", 0)
    [note] = run.notes
    assert (note["kind"], note["volume"], note["end_of_data"]) == (
        "past_end_of_data", volume.label, volume.end_of_data)
    assert note["members"] == 6 and note["tail_bytes"] == tail
    assert note["member_bytes"] == sum(size for _, size, _ in expected) == 3 * (25000 + 9000)
    assert [(m["name"], m["size"], m["granule_id"]) for m in note["listed"]] == expected
    assert volume.label in note["message"] and "nothing is lost" in note["message"]
    # the chaos run reports it beside its verdict, which counts discrepancies only
    assert verify.past_end_of_data() == f"6 members ({tail / 2**20:.1f} MiB) on {volume.label}"

    # a sampled run does not list the members, but still tells the bytes (a stat of the file)
    sampled = reconcile(sample=2)
    assert sampled.discrepancy_count == 0
    assert [(n["volume"], n["tail_bytes"], "members" in n) for n in sampled.notes] == [
        (volume.label, tail, False)]

    # the migrations are written again: the append cuts the unrecorded members off
    services.run_until_idle()
    volume.refresh_from_db()
    assert FileCopy.objects.filter(volume=volume, copy_number=1, state="verified",
                                   file__granule__in=granules).count() == 6
    assert past_end(volume) == []
    after = reconcile(full=True)
    assert (after.discrepancy_count, after.notes) == (0, [])


def test_the_listing_is_capped_and_the_note_shown_by_the_command_and_the_api(
        unrecorded, monkeypatch, capsys, operator_api):
    from backend.archive.invariants import media

    volume, _ = unrecorded
    expected = past_end(volume)
    monkeypatch.setattr(media, "PAST_END_LISTED", 4)
    call_command("archive", "reconcile", "--full")
    out = capsys.readouterr().out
    assert "0 discrepancies" in out
    [note] = [line for line in out.splitlines() if line.startswith("note: ")]
    assert volume.label in note and "6 whole members" in note
    assert all(name in out for name, _, _ in expected[:4])
    assert expected[4][0] not in out and "... and 2 more" in out

    shown = operator_api.get(URL).json()["results"][0]
    assert shown["discrepancy_count"] == 0 and shown["discrepancies"] == []
    [note] = shown["notes"]
    assert (note["volume"], note["members"], len(note["listed"])) == (volume.label, 6, 4)
    assert [m["name"] for m in note["listed"]] == [name for name, _, _ in expected[:4]]
