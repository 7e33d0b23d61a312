"""PDRs from the API and from the staging area end with a PAN; granules ARCHIVED."""
import os
import time

import pytest

from backend.archive.models import FileCopy
from backend.catalog.models import Granule
from ingest import pdr
from ingest.models import IngestGranule, IngestRequest, Pdr
from ingest.services import outcome, polling
from tests.ingest.builders import area, s4pa_pdr, stage_pdr_group

pytestmark = pytest.mark.django_db

PDR_URL = "/api/v1/ingest/pdrs/"
# The long PAN's file dispositions of the ECS-provider interface (SDP ICD 423-41-57), which
# S4PA and Cumulus answer too: a PAN says nothing else.
ECS_PAN_DISPOSITIONS = (
    "SUCCESSFUL", "NETWORK FAILURE", "UNABLE TO ESTABLISH FTP/KFTP CONNECTION",
    "ALL FILE GROUPS/FILES NOT FOUND", "FTP/KFTP FAILURE", "POST-TRANSFER FILE SIZE CHECK FAILURE",
    "FTP/KFTP COMMAND FAILURE", "DUPLICATE FILE NAME IN GRANULE", "METADATA PREPROCESSING ERROR",
    "RESOURCE ALLOCATION FAILURE", "ECS INTERNAL ERROR", "DATA ARCHIVE ERROR",
    "INCORRECT NUMBER OF METADATA FILES", "INCORRECT NUMBER OF SCIENCE FILES",
    "INCORRECT NUMBER OF FILES", "DATA CONVERSION FAILURE", "REQUEST CANCELLED",
    "UNKNOWN DATA TYPE", "INVALID OR MISSING FILE TYPE", "FILE I/O ERROR",
    "CHECKSUM VERIFICATION FAILURE")
DIR = "/data/MOD021KM/2024/001"


def groups(provider, count=2, prefix="MOD021KM.A2024001"):
    return [("MOD021KM", stage_pdr_group(provider, DIR, f"{prefix}.{i:04d}.061"))
            for i in range(count)]


def test_pdr_through_the_api_ends_with_pan_successful(client, provider, collection, drain):
    text = s4pa_pdr(groups(provider))
    answer = client.post(PDR_URL, {"name": "MODAPS.2024001.PDR", "text": text}, format="json")
    assert answer.status_code == 202, answer.json()
    body = answer.json()
    assert body["state"] == "accepted" and body["pan"] == "" and body["request"]
    request = client.get(body["request"]).json()
    assert request["way"] == "pdr" and request["granule_count"] == 2
    assert request["pdr"] == body["url"]

    drain()

    body = client.get(body["url"]).json()
    assert body["state"] == "answered" and body["disposition"] == "SUCCESSFUL"
    pan = pdr.parse_pvl(body["pan"])
    assert pan.value("MESSAGE_TYPE") == "SHORTPAN" and pan.value("DISPOSITION") == "SUCCESSFUL"
    assert (area(provider) / "MODAPS.2024001.PAN").read_text() == body["pan"]
    archived = Granule.objects.filter(state=Granule.State.ARCHIVED)
    assert sorted(archived.values_list("granule_id", flat=True)) == [
        "MOD021KM.A2024001.0000.061.hdf", "MOD021KM.A2024001.0001.061.hdf"]
    assert FileCopy.objects.filter(state="verified").count() == 2 * 2 * 2
    one = archived.first()
    # temporal from the PDR's BEGINNING_DATE/TIME, the box from the .met file
    assert (one.temporal_start.minute, one.temporal_end.minute) == (5, 10)
    assert one.bbox == [-20.5, 20.0, 10.25, 40.0]
    assert one.attributes["DAYNIGHTFLAG"] == "Day"
    assert sorted(one.files.values_list("role", flat=True)) == ["data", "metadata"]


def test_pdr_dropped_into_staging_is_found_and_answered(provider, collection, drain):
    text = s4pa_pdr(groups(provider, 1))
    dropped = area(provider) / "MODAPS.2024001.PDR"
    dropped.write_text(text)
    assert polling.poll_staging() == {"pdrs": 1, "drops": 0}
    assert polling.poll_staging() == {"pdrs": 0, "drops": 0}  # not taken twice
    row = Pdr.objects.get()
    assert (row.state, row.path, row.name) == ("accepted", "MODAPS.2024001.PDR", dropped.name)
    drain()
    pan = (area(provider) / "MODAPS.2024001.PAN").read_text()
    assert 'DISPOSITION = "SUCCESSFUL";' in pan
    assert Granule.objects.get().state == Granule.State.ARCHIVED
    assert FileCopy.objects.filter(state="verified").count() == 2 * 2  # 2 files, 2 copies
    assert polling.poll_staging() == {"pdrs": 0, "drops": 0}  # answered: left alone


def test_pdr_in_pdr_folder_waits_until_complete(provider, collection, settings):
    settings.GRANARY_DROP_STABLE_S = 3600
    folder = area(provider) / "pdr"
    folder.mkdir(parents=True)
    (folder / "X.PDR").write_text(s4pa_pdr(groups(provider, 1)))
    assert polling.poll_staging()["pdrs"] == 0  # still being written, for all we know
    (folder / "X.PDR.done").touch()
    assert polling.poll_staging()["pdrs"] == 1
    assert Pdr.objects.get().path == "pdr/X.PDR"


def test_bad_pdr_in_staging_gets_a_pdrd_file(provider, collection):
    dropped = area(provider) / "BAD.PDR"
    dropped.parent.mkdir(parents=True, exist_ok=True)
    dropped.write_text(s4pa_pdr(groups(provider, 1), total=7))
    old = time.time() - 120
    os.utime(dropped, (old, old))
    polling.poll_staging()
    pdrd = (area(provider) / "BAD.PDRD").read_text()
    assert pdrd == 'MESSAGE_TYPE = SHORTPDRD;\nDISPOSITION = "INVALID FILE COUNT";\n'
    assert not IngestRequest.objects.exists()
    assert polling.poll_staging()["pdrs"] == 0


def test_pan_names_each_failed_file(client, provider, collection, drain):
    files = groups(provider, 2)
    broken = area(provider) / DIR.strip("/") / files[1][1][0][1]
    original = broken.read_bytes()
    broken.write_bytes(b"\x00" * len(original))  # same size, other bytes
    text = s4pa_pdr(files)
    body = client.post(PDR_URL, {"name": "P.PDR", "text": text}, format="json").json()
    drain()
    body = client.get(body["url"]).json()
    assert body["state"] == "answered"
    assert body["disposition"] == "CHECKSUM VERIFICATION FAILURE"
    pan = pdr.parse_pvl(body["pan"])
    assert pan.value("MESSAGE_TYPE") == "LONGPAN" and pan.value("NO_OF_FILES") == "4"
    assert pan.values("FILE_DIRECTORY") == [DIR] * 4
    # the broken data file fails its checksum; its sound .met neighbour is not archived with it
    # and carries its granule's disposition: a PAN has only the ECS dispositions (issue 34,
    # item 17); the request's granule says which file was at fault
    assert pan.values("FILE_NAME")[2] == broken.name
    assert pan.values("DISPOSITION") == ["SUCCESSFUL", "SUCCESSFUL",
                                         "CHECKSUM VERIFICATION FAILURE",
                                         "CHECKSUM VERIFICATION FAILURE"]
    assert set(pan.values("DISPOSITION")) <= set(ECS_PAN_DISPOSITIONS)
    failed = [g for g in client.get(body["request"]).json()["granules"]
              if g["state"] == "failed"]
    assert len(failed) == 1 and broken.name in failed[0]["reason"]
    assert Granule.objects.filter(state="archived").count() == 1

    # fixed and retried: the PAN is written anew
    broken.write_bytes(original)
    request = IngestRequest.objects.get()
    outcome.retry(request)
    drain()
    body = client.get(body["url"]).json()
    assert body["disposition"] == "SUCCESSFUL"
    assert "SHORTPAN" in (area(provider) / "P.PAN").read_text()


def test_pan_says_what_happened_to_each_file_of_a_failed_group(client, provider, collection,
                                                                drain):
    """One group's data file is short (size check), the other group's .met is corrupted
    (checksum): each file at fault gets its own failure, its sound neighbour says it was not
    archived because of another file of its group."""
    files = groups(provider, 2)
    short = area(provider) / DIR.strip("/") / files[0][1][0][1]
    short.write_bytes(short.read_bytes()[:-1])
    met = area(provider) / DIR.strip("/") / files[1][1][1][1]
    met.write_bytes(met.read_bytes().replace(b"Day", b"Ngt"))
    body = client.post(PDR_URL, {"name": "Q.PDR", "text": s4pa_pdr(files)}, format="json").json()
    drain()
    body = client.get(body["url"]).json()
    pan = pdr.parse_pvl(body["pan"])
    names = [f[1] for _, group in files for f in group]
    assert pan.values("FILE_NAME") == names
    assert pan.values("DISPOSITION") == ["POST-TRANSFER FILE SIZE CHECK FAILURE",
                                         "POST-TRANSFER FILE SIZE CHECK FAILURE",
                                         "CHECKSUM VERIFICATION FAILURE",
                                         "CHECKSUM VERIFICATION FAILURE"]
    # the PDR's own disposition names a real failure, not the neighbours' consequence
    assert body["disposition"] == "POST-TRANSFER FILE SIZE CHECK FAILURE"


@pytest.mark.parametrize("begin, end, expected", [
    # S4PA writes ordinal dates (day of year 107 of 2025 is 17 April)
    ("2025-107T00:00:00Z", "2025-107T00:05:00Z", ("2025-04-17T00:00:00", "2025-04-17T00:05:00")),
    ("2024-366T23:00:00", "2024-366T23:59:59.5", ("2024-12-31T23:00:00", "2024-12-31T23:59:59")),
    ("2025-04-17T01:02:03.123456Z", "2025-04-17T01:02:04.5",
     ("2025-04-17T01:02:03", "2025-04-17T01:02:04")),
])
def test_pdr_dates_in_every_form_ecs_and_s4pa_write(client, provider, collection, drain, begin,
                                                    end, expected):
    text = s4pa_pdr(groups(provider, 1))
    text = text.replace("2024-01-01T00:05:00Z", begin).replace("2024-01-01T00:10:00Z", end)
    answer = client.post(PDR_URL, {"name": "D.PDR", "text": text}, format="json")
    assert answer.status_code == 202 and answer.json()["state"] == "accepted", answer.json()
    drain()
    granule = Granule.objects.get()
    got = (granule.temporal_start, granule.temporal_end)
    assert tuple(t.strftime("%Y-%m-%dT%H:%M:%S") for t in got) == expected
    assert all(t.utcoffset().total_seconds() == 0 for t in got)


@pytest.mark.parametrize("bad", ["2025-366T00:00:00Z", "2025-000T00:00:00Z", "2025-4-7T00:00Z"])
def test_pdr_date_that_is_no_day_is_refused(client, provider, collection, bad):
    text = s4pa_pdr(groups(provider, 1)).replace("2024-01-01T00:05:00Z", bad)
    body = client.post(PDR_URL, {"name": "E.PDR", "text": text}, format="json").json()
    assert body["state"] == "rejected" and "INVALID PVL STATEMENT" in body["pdrd"]


def test_same_pdr_twice_is_one_request(client, provider, collection):
    text = s4pa_pdr(groups(provider, 1))
    first = client.post(PDR_URL, {"name": "A.PDR", "text": text}, format="json")
    again = client.post(PDR_URL, {"name": "A.PDR", "text": text}, format="json")
    assert (first.status_code, again.status_code) == (202, 200)
    assert first.json()["id"] == again.json()["id"]
    assert IngestRequest.objects.count() == 1 and IngestGranule.objects.count() == 1


def test_plain_text_pdr(client, provider, collection):
    text = s4pa_pdr(groups(provider, 1))
    answer = client.post(PDR_URL + "?name=T.PDR", text, content_type="text/plain")
    assert answer.status_code == 202 and answer.json()["name"] == "T.PDR"
    listed = client.get(PDR_URL).json()["results"]
    assert [p["name"] for p in listed] == ["T.PDR"]


def _drop_again(path, text):
    """The provider drops the same PDR again: same name and text, a new file."""
    path.unlink()
    path.write_text(text)


def test_pdr_dropped_again_after_its_pan_was_removed_is_answered_again(provider, collection,
                                                                        drain):
    text = s4pa_pdr(groups(provider, 1))
    dropped = area(provider) / "MODAPS.2024002.PDR"
    dropped.write_text(text)
    polling.poll_staging()
    drain()
    pan = area(provider) / "MODAPS.2024002.PAN"
    assert 'DISPOSITION = "SUCCESSFUL";' in pan.read_text()

    pan.unlink()
    _drop_again(dropped, text)
    assert polling.poll_staging() == {"pdrs": 0, "drops": 0}  # the same PDR: no new request
    assert IngestRequest.objects.count() == 1
    answer = pdr.parse_pvl(pan.read_text())
    assert (answer.value("MESSAGE_TYPE"), answer.value("DISPOSITION")) == ("SHORTPAN",
                                                                          "SUCCESSFUL")
    # answered: the next polls leave it alone (a re-read would write the answer again)
    written = pan.stat().st_mtime_ns, pan.read_text()
    polling.poll_staging()
    assert (pan.stat().st_mtime_ns, pan.read_text()) == written


def test_refused_pdr_dropped_again_after_its_pdrd_was_removed_gets_the_pdrd_again(provider,
                                                                                 collection):
    text = s4pa_pdr(groups(provider, 1), total=7)
    dropped = area(provider) / "BAD2.PDR"
    dropped.parent.mkdir(parents=True, exist_ok=True)
    dropped.write_text(text)
    polling.poll_staging()
    pdrd = area(provider) / "BAD2.PDRD"
    expected = 'MESSAGE_TYPE = SHORTPDRD;\nDISPOSITION = "INVALID FILE COUNT";\n'
    assert pdrd.read_text() == expected
    pdrd.unlink()
    _drop_again(dropped, text)
    polling.poll_staging()
    assert pdrd.read_text() == expected
    written = pdrd.stat().st_mtime_ns
    polling.poll_staging()
    assert pdrd.stat().st_mtime_ns == written and Pdr.objects.count() == 1


def test_pdr_dropped_again_while_in_progress_is_answered_when_it_finishes(provider, collection,
                                                                         drain):
    text = s4pa_pdr(groups(provider, 1))
    dropped = area(provider) / "MODAPS.2024003.PDR"
    dropped.write_text(text)
    polling.poll_staging()
    _drop_again(dropped, text)
    polling.poll_staging()
    pan = area(provider) / "MODAPS.2024003.PAN"
    assert not pan.exists()  # still moving: no answer yet
    drain()
    assert 'DISPOSITION = "SUCCESSFUL";' in pan.read_text()
    assert IngestRequest.objects.count() == 1


def test_pdr_dropped_again_after_its_request_was_deleted_gets_its_pan_again(provider,
                                                                           collection, drain):
    text = s4pa_pdr(groups(provider, 1))
    dropped = area(provider) / "MODAPS.2024004.PDR"
    dropped.write_text(text)
    polling.poll_staging()
    drain()
    pan = area(provider) / "MODAPS.2024004.PAN"
    sent = pan.read_text()
    IngestRequest.objects.all().delete()
    pan.unlink()
    _drop_again(dropped, text)
    polling.poll_staging()
    assert pan.read_text() == sent and Pdr.objects.get().request is None
