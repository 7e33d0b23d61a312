"""The dashboards' kept totals under concurrent writers (PostgreSQL, where triggers keep them).

Regression (issue #22, ingest-small): the totals were counter rows updated in place by row
triggers, so admission (granules REGISTERED -> ARCHIVING, then new cache entries "dirty") and
mark_archived (cache entries "dirty" -> "clean", then granules ARCHIVING -> ARCHIVED) locked
the same two counter rows in opposite orders and PostgreSQL killed one as a deadlock: 159 of
10,000 granules failed. Writers now only add delta rows; compaction folds them."""
import threading

import pytest
from django.db import connection, transaction
from django.utils import timezone

from backend.archive import operations
from backend.archive.models import CacheEntry
from backend.archive.services import cache
from backend.catalog import counts
from backend.catalog.models import Granule, GranuleStateCount
from tests.factories import CollectionFactory, FileFactory, GranuleFactory

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql",
                                reason="the totals are kept by PostgreSQL triggers")
S = Granule.State


def _in_thread(steps, barrier, errors):
    """Run `steps` (two callables) in one transaction on this thread's own connection, the
    second only once every thread has done its first."""
    def run():
        try:
            with transaction.atomic():
                steps[0]()
                barrier.wait(timeout=10)
                steps[1]()
        except Exception as exc:  # the assertion below names it
            errors.append(exc)
            barrier.abort()
        finally:
            connection.close()
    return threading.Thread(target=run)


@pytest.mark.django_db(transaction=True)
def test_admission_and_mark_archived_in_opposite_orders_both_commit():
    collection = CollectionFactory()
    admitted = GranuleFactory(collection=collection, state=S.REGISTERED)
    archived = GranuleFactory(collection=collection, state=S.ARCHIVING)
    written = CacheEntry.objects.create(file=FileFactory(granule=archived, size=5),
                                        state=CacheEntry.State.DIRTY, size=5,
                                        last_access=timezone.now())
    new_file = FileFactory(granule=admitted, size=7)
    barrier, errors = threading.Barrier(2), []
    admission = [
        lambda: Granule.objects.filter(pk=admitted.pk).update(state=S.ARCHIVING),
        lambda: CacheEntry.objects.create(file=new_file, state=CacheEntry.State.DIRTY, size=7,
                                          last_access=timezone.now()),
    ]
    marking = [
        lambda: CacheEntry.objects.filter(pk=written.pk).update(state=CacheEntry.State.CLEAN),
        lambda: Granule.objects.filter(pk=archived.pk).update(state=S.ARCHIVED),
    ]
    threads = [_in_thread(admission, barrier, errors), _in_thread(marking, barrier, errors)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert counts.by_state([collection.pk]) == {**dict.fromkeys(S.values, 0),
                                                 S.ARCHIVING: 1, S.ARCHIVED: 1}
    usage = cache.cache_usage()
    assert (usage.dirty, usage.clean) == (7, 5)


@pytest.mark.django_db(transaction=True)
def test_compaction_leaves_one_row_per_key_and_every_total_as_it_was():
    a, b = CollectionFactory.create_batch(2)
    made = [GranuleFactory(collection=c, state=S.REGISTERED) for c in (a, a, a, b, b)]
    Granule.objects.filter(pk__in=[g.pk for g in made[:2]]).update(state=S.ARCHIVING)
    Granule.objects.filter(pk=made[0].pk).update(state=S.ARCHIVED)
    Granule.objects.filter(pk=made[3].pk).update(state=S.FAILED)
    made[4].delete()
    before = {c.pk: counts.by_state([c.pk]) for c in (a, b)}
    assert GranuleStateCount.objects.count() > 5       # deltas: several rows per key
    operations.compact_totals()
    operations.compact_totals()                        # a second run changes nothing
    rows = list(GranuleStateCount.objects.values_list("collection_id", "state", "count"))
    assert sorted(rows) == sorted([(a.pk, S.REGISTERED, 1), (a.pk, S.ARCHIVING, 1),
                                   (a.pk, S.ARCHIVED, 1), (b.pk, S.FAILED, 1)])
    assert {c.pk: counts.by_state([c.pk]) for c in (a, b)} == before
