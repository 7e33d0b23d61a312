"""`__in` with many plain values is one array parameter on PostgreSQL and finds exactly what
Django's IN finds, on every database, for ids, foreign keys and strings."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from backend.catalog.models import File, Granule
from tests.factories import GranuleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def granules():
    made = [GranuleFactory() for _ in range(40)]
    for g in made:
        File.objects.create(granule=g, name=f"{g.granule_id}.h5", size=1, checksum_type="MD5",
                            checksum="0" * 32)
    return made


def _sql(queryset):
    with CaptureQueriesContext(connection) as queries:
        rows = list(queryset)
    return rows, queries[0]["sql"]


def test_many_ids_match_exactly_the_wanted_rows(granules):
    wanted = [g.pk for g in granules[::2]] + [None, 10**12]
    rows, sql = _sql(Granule.objects.filter(pk__in=wanted).values_list("pk", flat=True))
    assert sorted(rows) == sorted(g.pk for g in granules[::2])
    if connection.vendor == "postgresql":
        assert "= ANY(" in sql and " IN (" not in sql


def test_foreign_keys_strings_and_model_instances(granules):
    chosen = granules[5:30]
    by_fk = File.objects.filter(granule_id__in=[g.pk for g in chosen])
    by_instance = File.objects.filter(granule__in=chosen)
    by_name = Granule.objects.filter(granule_id__in=[g.granule_id for g in chosen])
    expected = {g.pk for g in chosen}
    assert {f.granule_id for f in by_fk} == expected
    assert {f.granule_id for f in by_instance} == expected
    assert {g.pk for g in by_name} == expected


def test_exclude_and_subqueries_keep_their_meaning(granules):
    chosen = [g.pk for g in granules[:20]]
    assert Granule.objects.exclude(pk__in=chosen).count() == len(granules) - 20
    sub = Granule.objects.filter(pk__in=chosen).values("pk")
    assert File.objects.filter(granule_id__in=sub).count() == 20


def test_an_update_by_many_ids_touches_only_those(granules):
    Granule.objects.update(state=Granule.State.REGISTERED)
    chosen = [g.pk for g in granules[:25]]
    assert Granule.objects.filter(pk__in=chosen).update(state=Granule.State.ARCHIVED) == 25
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 25


def test_ints_for_a_text_column_are_still_prepared_as_text(granules):
    # ids skip Django's preparation only for integer columns: a name is compared as text
    File.objects.create(granule=granules[0], name="12345", size=1, checksum_type="MD5",
                        checksum="0" * 32)
    names = [12345, *range(100, 130)]
    assert list(File.objects.filter(name__in=names).values_list("name", flat=True)) == ["12345"]


def test_a_set_of_ids_and_ids_through_a_foreign_key(granules):
    chosen = {g.pk for g in granules[3:33]}
    assert set(Granule.objects.filter(pk__in=chosen).values_list("pk", flat=True)) == chosen
    assert set(File.objects.filter(granule__in=chosen).values_list(
        "granule_id", flat=True)) == chosen
