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


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="the array's cast is PostgreSQL's; SQLite's driver refuses an int "
                           "past 64 bits itself (the API's answer: test_no_5xx_from_input.py)")
def test_ids_out_of_the_columns_range_match_nothing_and_fail_nothing(granules):
    """The array has the column's type (bigint for keys, integer for a version): a value no
    such column can hold matches no row, where a cast would have failed the statement."""
    chosen = [g.pk for g in granules[:20]]
    huge = [2**63, -(2**63) - 1, 10**30]
    assert sorted(Granule.objects.filter(pk__in=chosen + huge).values_list(
        "pk", flat=True)) == sorted(chosen)
    assert Granule.objects.filter(pk__in=huge * 6).count() == 0
    assert Granule.objects.exclude(pk__in=huge * 6).count() == len(granules)
    versions = list(range(1, 20)) + [2**31, 2**40]
    assert Granule.objects.filter(version__in=versions).count() == len(granules)
    assert Granule.objects.filter(version__in=[2**31 + i for i in range(20)]).count() == 0


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's array parameter")
def test_the_array_parameter_has_the_columns_type():
    """Small ids are sent as the column's bigint[], not the smallint[] psycopg would choose,
    which PostgreSQL does not hash against a bigint column. The ids are given: the suite's
    earlier tests may have taken the sequence past what fits a smallint."""
    small = [GranuleFactory(pk=1000 + i).pk for i in range(20)]
    rows, sql = _sql(Granule.objects.filter(pk__in=small).values_list("pk", flat=True))
    assert sorted(rows) == small
    assert "= ANY(" in sql and "::bigint[]" in sql
    _, sql = _sql(File.objects.filter(granule_id__in=small).values_list("pk", flat=True))
    assert "::bigint[]" in sql
    _, sql = _sql(Granule.objects.filter(version__in=list(range(1, 20))).values_list("pk"))
    assert "::integer[]" in sql
    _, sql = _sql(Granule.objects.filter(granule_id__in=[str(n) for n in range(20)]))
    assert "::" not in sql.split("= ANY(")[1].split(")")[0]
