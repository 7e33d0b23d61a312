"""The cache gauge's totals per state (CacheStateTotal, kept by a PostgreSQL trigger): what
cache_usage answers equals a sum over the cache entries (brute force) after inserts, state
and size changes, bulk updates, deletes and a rebuild."""
import pytest
from django.db import connection
from django.db.models import F
from django.utils import timezone

from backend.archive.models import CacheEntry, CacheStateTotal
from backend.archive.services import cache
from tests.factories import FileFactory

pytestmark = pytest.mark.django_db
S = CacheEntry.State


def _brute():
    sums = dict.fromkeys(S.values, 0)
    for entry in CacheEntry.objects.all():
        sums[entry.state] += entry.size
    return sums


def _usage():
    u = cache.cache_usage()
    assert u.used == u.dirty + u.clean + u.pinned + u.staging
    return {"dirty": u.dirty, "clean": u.clean, "pinned": u.pinned, "staging": u.staging}


def _entry(state, size):
    return CacheEntry.objects.create(file=FileFactory(size=size), state=state, size=size,
                                     last_access=timezone.now())


def test_cache_totals_follow_every_write(operator_api):
    entries = [_entry(state, size) for state, size in
               [(S.DIRTY, 10), (S.DIRTY, 20), (S.CLEAN, 300), (S.CLEAN, 7), (S.PINNED, 50),
                (S.STAGING, 1)]]
    assert _usage() == _brute()
    entries[0].state = S.CLEAN
    entries[0].save()
    entries[0].last_access = timezone.now()          # touched: neither state nor size
    entries[0].save()
    assert _usage() == _brute()
    CacheEntry.objects.filter(state=S.CLEAN).update(size=F("size") + 5)
    CacheEntry.objects.filter(state=S.STAGING).update(state=S.DIRTY, size=99)
    assert _usage() == _brute()
    entries[2].delete()
    CacheEntry.objects.filter(state=S.PINNED).delete()
    assert _usage() == _brute()
    body = operator_api.get("/api/v1/archive/cache/").json()
    assert body["used_bytes"] == sum(_brute().values())


@pytest.mark.skipif(connection.vendor != "postgresql", reason="kept by a PostgreSQL trigger")
def test_rebuild_sums_what_a_load_without_the_trigger_left():
    for state, size in [(S.DIRTY, 10), (S.CLEAN, 30), (S.CLEAN, 2)]:
        _entry(state, size)
    CacheStateTotal.objects.all().update(bytes=0, entries=0)
    assert _usage() != _brute()
    cache.rebuild_totals()
    assert _usage() == _brute()
    assert dict(CacheStateTotal.objects.values_list("state", "entries")) == {
        S.DIRTY: 1, S.CLEAN: 2}
