"""The worst collections' figures found by PostgreSQL (completeness.window_segment) equal what
window_report computes in Python from the same granules: random coverages off the grid, longer
and shorter than the cadence, instantaneous ones, late and unarchived ones, states that do not
count, and granules just outside the window."""
import random
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from backend.catalog import cadence as cadence_module
from backend.catalog import completeness
from backend.catalog.models import Granule
from tests.factories import CollectionFactory, GranuleFactory

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(connection.vendor != "postgresql",
                                 reason="elsewhere window_segment counts in Python")]
NOW = datetime(2026, 3, 14, 17, 23, 41, 250000, tzinfo=UTC)
STATES = [Granule.State.ARCHIVED] * 6 + [Granule.State.ARCHIVING, Granule.State.FAILED,
                                          Granule.State.WITHDRAWN, Granule.State.SUPERSEDED]


@pytest.mark.parametrize("cadence,latency,seed", [(300, 3600, 1), (360, None, 2),
                                                  (5940, 7200, 3), (86400, 4 * 3600, 4),
                                                  (1, 60, 5), (7, None, 6)])
def test_sql_counts_equal_window_report(cadence, latency, seed):
    rng = random.Random(seed)
    collection = CollectionFactory(cadence_seconds=cadence, latency_target_seconds=latency)
    start = NOW.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=2)
    for _ in range(150):
        begin = start + timedelta(seconds=rng.uniform(-2 * cadence, 3.2 * 86400))
        if rng.random() < 0.3:  # on a slot boundary or midpoint, where rounding could split
            begin = start + timedelta(seconds=round((begin - start).total_seconds() / (
                cadence / 2)) * (cadence / 2))
        length = rng.choice([0, cadence * rng.uniform(0.1, 0.99), cadence,
                             cadence * rng.uniform(1, 4)])
        end = begin + timedelta(seconds=length)
        archived = (None if rng.random() < 0.1
                    else end + timedelta(seconds=rng.uniform(0, 3 * (latency or 3600))))
        GranuleFactory(collection=collection, temporal_start=begin, temporal_end=end,
                       state=rng.choice(STATES), archived_at=archived)
    found, late, _ = completeness.window_report(collection, start, NOW, NOW)
    sql = completeness.window_segment(collection, start, NOW, NOW)
    assert found.received > 0 and (found.gaps or cadence == 86400)
    assert (sql.expected, sql.received, sql.gaps) == (found.expected, found.received,
                                                      len(found.gaps))
    since, until = completeness.bounds(collection, NOW)
    lo, hi = cadence_module.expected_slots(cadence, start, NOW, since=since, until=until)
    assert sql.first_missing == any(g.start == slot_start(lo, cadence) for g in found.gaps)
    assert sql.last_missing == any(g.end == slot_start(hi, cadence) for g in found.gaps)
    assert sql.late == (None if late is None else len(late))
    assert latency is None or sql.late > 0


def slot_start(index, cadence):
    return cadence_module.EPOCH + timedelta(seconds=index * cadence)


def test_the_completeness_index_holds_exactly_the_counted_states():
    """The partial index the SQL reads (granule_completeness) must cover every counted state
    and no other, or the report would miss granules or the planner could not use it."""
    [index] = [i for i in Granule._meta.indexes if i.name == "granule_completeness"]
    kind, states = index.condition.children[0]
    assert kind == "state__in"
    assert sorted(states) == sorted(str(s) for s in completeness.COUNTED)
