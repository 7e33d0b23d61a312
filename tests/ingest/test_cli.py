"""manage.py ingest DIR: granules grouped by pattern, staged, validated, handed to the archive."""
import io
import os

import pytest
from django.core.management import CommandError, call_command

from backend.catalog.models import Granule
from ingest.models import IngestRequest
from tests.ingest.builders import MET, area

pytestmark = pytest.mark.django_db


@pytest.fixture
def delivery(tmp_path, collection):
    collection.file_patterns = [r"(?P<granule>MOD021KM\.A\d{7}\.\d{4}\.061)\.hdf",
                                r"(?P<granule>MOD021KM\.A\d{7}\.\d{4}\.061)\.hdf\.met"]
    collection.save()
    folder = tmp_path / "delivery"
    (folder / "day1").mkdir(parents=True)
    for n in range(4):
        gid = f"MOD021KM.A2024001.{n:04d}.061"
        (folder / "day1" / f"{gid}.hdf").write_bytes(os.urandom(5000))
        (folder / "day1" / f"{gid}.hdf.met").write_text(MET.format(granule_id=gid))
    (folder / "README.txt").write_text("not a granule")
    return folder


def run(*args, **kwargs):
    out, err = io.StringIO(), io.StringIO()
    call_command("ingest", *args, stdout=out, stderr=err, **kwargs)
    return out.getvalue(), err.getvalue()


def test_cli_ingests_a_directory_with_progress(delivery, provider, collection, drain):
    out, err = run(str(delivery), collection="MOD021KM.061", provider="MODAPS")
    assert "left out (no complete granule): README.txt" in err
    assert "8/8 files" in err and "100.0%" in err and "ETA" in err and "/s" in err
    request = IngestRequest.objects.get()
    assert (request.way, request.granule_count) == ("cli", 4)
    assert f"ingest request {request.pk}: 4 archiving" in out
    # the staging copies are links or copies: the provider's directory is untouched
    assert len(list((area(provider) / "cli").rglob("*.hdf"))) == 4
    assert len(list(delivery.rglob("*.hdf"))) == 4
    drain()
    request.refresh_from_db()
    assert request.state == "completed"
    assert Granule.objects.filter(state="archived").count() == 4


def test_cli_refuses_what_the_provider_may_not_deliver(delivery, provider, collection):
    provider.collections.remove(collection)
    with pytest.raises(CommandError, match="Provider MODAPS may not deliver MOD021KM.061"):
        run(str(delivery), collection="MOD021KM.061", provider="MODAPS")
    assert not IngestRequest.objects.exists()


def test_cli_reports_failures(delivery, provider, collection):
    (delivery / "day1" / "MOD021KM.A2024001.0001.061.hdf.met").write_text("GROUP = X\n")
    with pytest.raises(CommandError, match="1 granule"):
        run(str(delivery), collection="MOD021KM.061", provider="MODAPS", no_progress=True)
    assert IngestRequest.objects.get().failed_count == 1
