"""Releasing files from the cache: the operator's purge of named files, through the API and
the CLI. A released file is on tape only, the catalog says so, and ordering it recalls it."""
import io
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from backend.archive import services
from backend.archive.models import ArchiveRequest, CacheEntry
from backend.archive.services import cache
from tests.archive_fixtures import archived_collection, small_layout, staged_granule

pytestmark = pytest.mark.django_db


@pytest.fixture
def layout(data_root, settings):
    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    settings.GRANARY_READ_MAX_WAIT_S = 0
    settings.GRANARY_REMOUNT_DELAY_S = 0
    primary, backup, _ = small_layout()
    return archived_collection([primary, backup], short_name="MOD10C1", version="061")


@pytest.fixture
def archived(layout, data_root):
    granule, sources = staged_granule(layout, data_root / "staging", sizes=(5000, 7000))
    services.archive_granule(granule, sources)
    services.run_until_idle()
    granule.refresh_from_db()
    return granule


def _release(client, files):
    return client.post("/api/v1/archive/cache/release/", {"files": [f.pk for f in files]},
                       format="json")


def test_released_granule_is_on_tape_and_an_order_recalls_it(operator_api, user_api, archived):
    files = list(archived.files.order_by("name"))
    paths = [services.cache_path(f) for f in files]
    assert all(p.exists() for p in paths)

    answer = _release(operator_api, files)
    assert answer.status_code == 200, answer.json()
    assert answer.json() == {"files": [f.pk for f in files], "freed_bytes": 12000, "kept": []}
    assert not CacheEntry.objects.filter(file__in=files).exists()
    assert not any(p.exists() for p in paths)

    shown = user_api.get(f"/api/v1/granules/{archived.pk}/").json()
    assert shown["residency"] == "tape"

    answers = services.make_available(files)
    assert [a.ready for a in answers] == [False, False]
    recalls = ArchiveRequest.objects.filter(kind=ArchiveRequest.Kind.RECALL, file__in=files)
    assert recalls.count() == 2
    services.run_until_idle()
    assert all(p.exists() for p in paths)
    assert user_api.get(f"/api/v1/granules/{archived.pk}/").json()["residency"] == "cache"


def test_release_refuses_what_the_purge_would_keep(operator_api, archived, layout, data_root):
    first, second = archived.files.order_by("name")
    cache.set_pinned(first, True)
    refused = _release(operator_api, [first])
    assert refused.status_code == 409
    assert refused.json()["detail"] == f"{first.name} is pinned; unpin it first"

    CacheEntry.objects.filter(file=second).update(keep_until=timezone.now() + timedelta(days=1))
    refused = _release(operator_api, [second])
    assert refused.status_code == 409
    assert "is kept in the cache for an order until" in refused.json()["detail"]

    dirty, sources = staged_granule(layout, data_root / "staging", sizes=(100,))
    services.archive_granule(dirty, sources)
    refused = _release(operator_api, list(dirty.files.all()))
    assert refused.status_code == 409
    assert "is dirty: a copy is still to be written to tape" in refused.json()["detail"]

    missing = operator_api.post("/api/v1/archive/cache/release/", {"files": [999999]},
                                format="json")
    assert missing.status_code == 400 and "no such files: [999999]" in missing.json()["detail"]
    assert CacheEntry.objects.filter(file__in=[first, second]).count() == 2


def test_release_drops_what_it_can_and_says_why_it_kept_the_rest(operator_api, archived):
    """The first file that could not go stopped the release of the others (issue 34, 23)."""
    pinned, free = archived.files.order_by("name")
    cache.set_pinned(pinned, True)
    answer = _release(operator_api, [pinned, free])
    assert answer.status_code == 200
    assert answer.json() == {"files": [free.pk], "freed_bytes": free.size, "kept": [
        {"file": pinned.pk, "reason": f"{pinned.name} is pinned; unpin it first"}]}
    assert list(CacheEntry.objects.filter(file__granule=archived).values_list(
        "file_id", flat=True)) == [pinned.pk]


def test_the_command_line_release_lists_what_it_kept(archived):
    pinned, free = archived.files.order_by("name")
    cache.set_pinned(pinned, True)
    out = io.StringIO()
    call_command("archive", "release", str(pinned.pk), str(free.pk), stdout=out)
    assert out.getvalue().splitlines() == [
        f"1 files released from the cache ({free.size / 2**20:.1f} MiB); they are on their "
        "copies only now",
        f"kept: {pinned.name} is pinned; unpin it first"]
    assert not CacheEntry.objects.filter(file=free).exists()


def test_release_is_for_operators_only(user_api, archived):
    assert _release(user_api, list(archived.files.all())).status_code == 403
    assert CacheEntry.objects.filter(file__granule=archived).count() == 2


def test_release_from_the_command_line(archived):
    small = archived.files.order_by("name").first()
    out = io.StringIO()
    call_command("archive", "release", f"MOD10C1.061:{archived.granule_id}/{small.name}",
                 stdout=out)
    assert ("1 files released from the cache (0.0 MiB); they are on their copies only now"
            in out.getvalue())
    assert not CacheEntry.objects.filter(file=small).exists()
    with pytest.raises(CommandError, match=f"{small.name} is not in the cache"):
        call_command("archive", "release", str(small.pk), stdout=io.StringIO())
