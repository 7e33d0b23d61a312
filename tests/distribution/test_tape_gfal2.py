"""gfal2, the grid's own client (Debian's gfal2-plugin-http through python3-gfal2), stages,
polls, cancels and releases files over the Tape REST API against Granary under gunicorn.

gfal2 lives in the system python, so each step runs /usr/bin/python3 gfal_stage.py in a
subprocess. The recalls run in this process (the archive's drives, and the beat's sweep that
asks the archive for a request's files), as a worker would. Expected states are what gfal2
itself reports from the spec's answers: online, NEARLINE, ONLINE_AND_NEARLINE, cancelled."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from backend.accounts import tokens
from backend.archive import services as archive
from backend.archive.models import CacheEntry, Drive
from distribution.models import StageFile, StageRequest
from distribution.services import staging_progress

from .conftest import evict
from .live_web import gunicorn
from .test_tape_api import files_of, path_of

SYSTEM_PYTHON = "/usr/bin/python3"
CLIENT = Path(__file__).with_name("gfal_stage.py")


def _has_gfal2():
    try:
        return subprocess.run([SYSTEM_PYTHON, "-c", "import gfal2"], capture_output=True,
                              timeout=60).returncode == 0
    except OSError:
        return False


pytestmark = [
    pytest.mark.django_db(transaction=True), pytest.mark.once,
    pytest.mark.skipif(not _has_gfal2(), reason="python3-gfal2 is not installed: run "
                       "scripts/system-deps.sh (it installs gfal2, gfal2-plugin-http)"),
]


def gfal(step, **args):
    done = subprocess.run([SYSTEM_PYTHON, str(CLIENT), step, json.dumps(args)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert "gerror" not in answer, answer
    return answer


def test_gfal2_brings_files_online_polls_and_releases(alice, collection, archived, inline,
                                                      data_root):
    granules = archived(collection, 2)
    evict(granules)
    files = files_of(granules)
    token = tokens.issue(alice.user, "gfal2")[1]
    port = int(os.environ.get("GRANARY_GFAL_TEST_PORT", "0")) or None
    with gunicorn(data_root, port=port) as web:
        urls = [web.url + path_of(f) for f in files]
        endpoint = gfal("endpoint", token=token, urls=urls)
        assert endpoint == {"uri": f"{web.url}/api/tape/v1", "version": "v1"}
        assert gfal("status", token=token, urls=urls)["status"] == ["NEARLINE"] * len(files)

        staged = gfal("stage", token=token, urls=urls)
        assert staged["errors"] == [None] * len(files)
        request = staged["request"]
        stage = StageRequest.objects.get(pk=request)
        assert stage.user == alice.user and stage.file_count == len(files)
        polled = gfal("poll", token=token, urls=urls, request=request)["errors"]
        assert {e["code"] for e in polled} == {11}  # EAGAIN: not yet on disk

        inline(staging_progress.sweep_stages)  # a worker asks the archive for the files
        inline(archive.run_until_idle)
        assert gfal("poll", token=token, urls=urls, request=request)["errors"] == (
            [None] * len(files))
        assert gfal("status", token=token, urls=urls)["status"] == (
            ["ONLINE_AND_NEARLINE"] * len(files))
        assert all(e.keep_until for e in CacheEntry.objects.filter(file__in=files))

        assert gfal("release", token=token, urls=urls[:1], request=request)["errors"] == [None]
        assert CacheEntry.objects.get(file=files[0]).keep_until is None
        assert StageFile.objects.get(request=stage, file=files[0]).released


def test_gfal2_cancels_a_stage_and_sees_another_users_request_as_missing(
        alice, bob, collection, archived, inline, data_root):
    granules = archived(collection, 1)
    evict(granules)
    files = files_of(granules)
    Drive.objects.update(state=Drive.State.OFFLINE)  # nothing is recalled while we look
    token = tokens.issue(alice.user, "gfal2")[1]
    other = tokens.issue(bob.user, "gfal2")[1]
    port = int(os.environ.get("GRANARY_GFAL_TEST_PORT", "0")) or None
    with gunicorn(data_root, port=port) as web:
        urls = [web.url + path_of(f) for f in files]
        request = gfal("stage", token=token, urls=urls)["request"]
        inline(staging_progress.sweep_stages)
        stolen = gfal("poll", token=other, urls=urls, request=request)["errors"]
        assert all(e and "404" in e["message"] for e in stolen), stolen
        assert gfal("cancel", token=token, urls=urls, request=request)["errors"] == (
            [None] * len(files))
        polled = gfal("poll", token=token, urls=urls, request=request)["errors"]
        assert all(e and "Cancelled" in e["message"] for e in polled), polled
    assert set(StageFile.objects.values_list("state", flat=True)) == {"CANCELLED"}
