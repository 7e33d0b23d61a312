"""A fixed read (backend.fixed_reads) answers what its queryset answers through the ORM, with
the ORM's own types (SQLite's dates and booleans converted), while the ORM builds it once per
connection; a read the compile changes (a LIKE pattern) or a parameter of another type goes
through the ORM every time, still right."""
from datetime import datetime

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Q

from backend.fixed_reads import FixedRead
from tests.factories import UserFactory

FIELDS = ("id", "username", "is_active", "is_staff", "date_joined", "last_login",
          "groups__name")


class Counted:
    """A read's builder that counts how often the ORM built it."""

    def __init__(self, build):
        self.build, self.calls = build, 0

    def __call__(self, *params):
        self.calls += 1
        return self.build(*params)


def _by_name(name):
    return get_user_model().objects.filter(username=name).values_list(*FIELDS).order_by(
        "groups__name")


def _by_id_and_name(pk, name):
    return get_user_model().objects.filter(pk=pk, username=name).values_list(*FIELDS)


@pytest.fixture
def users():
    made = [UserFactory(username=f"fixed{i}", role="provider" if i % 2 else None)
            for i in range(4)]
    made[3].groups.add(Group.objects.get_or_create(name="operator")[0])
    made[2].is_active = False
    made[2].save()
    return made


@pytest.mark.django_db
def test_the_rows_are_the_orms_and_the_read_is_built_once(users):
    build = Counted(_by_name)
    read = FixedRead(build, [str])
    for user in [*users, *users]:
        orm = [tuple(r) for r in _by_name(user.username)]
        assert read.rows(user.username) == orm
        assert all(isinstance(row[4], datetime) and isinstance(row[2], bool) for row in orm)
    assert read.rows("nobody-of-that-name") == []
    assert build.calls == 1           # the markers' build; every call after ran its SQL
    assert [r[-1] for r in read.rows("fixed3")] == ["operator", "provider"]


@pytest.mark.django_db
def test_two_parameters_of_two_kinds_go_to_their_places(users):
    build = Counted(_by_id_and_name)
    read = FixedRead(build, [int, str])
    for a in users:
        for b in users:
            assert read.rows(a.pk, b.username) == [
                tuple(r) for r in _by_id_and_name(a.pk, b.username)]
    assert build.calls == 1


@pytest.mark.django_db
def test_a_read_the_compile_changes_goes_through_the_orm_every_time(users):
    def by_prefix(prefix):
        return get_user_model().objects.filter(username__startswith=prefix).values_list(
            "username").order_by("username")

    build = Counted(by_prefix)
    read = FixedRead(build, [str])
    assert read.rows("fixed") == [(u.username,) for u in users]
    assert read.rows("fixed%") == []      # a pattern's own % is escaped, as the ORM does
    assert read.rows("fixed1") == [("fixed1",)]
    assert build.calls == 4               # the markers' build, then the ORM at every call


@pytest.mark.django_db
def test_a_parameter_of_another_kind_goes_through_the_orm(users):
    build = Counted(lambda pk: get_user_model().objects.filter(pk=pk).values_list("username"))
    read = FixedRead(build, [int])
    assert read.rows(users[1].pk) == [(users[1].username,)]
    assert read.rows(None) == []
    assert read.rows(str(users[1].pk)) == [(users[1].username,)]
    assert build.calls == 3


def test_only_strings_and_integers_are_parameters():
    with pytest.raises(TypeError):
        FixedRead(_by_name, [float])


@pytest.mark.django_db
def test_a_parameter_used_twice_takes_both_places(users):
    def named_or_mailed(value):
        return get_user_model().objects.filter(
            Q(username=value) | Q(email=value)).values_list("username").order_by("username")

    build = Counted(named_or_mailed)
    read = FixedRead(build, [str])
    for value in ("fixed1", "fixed2@example.org", "fixed9"):
        assert read.rows(value) == [tuple(r) for r in named_or_mailed(value)]
    assert read.rows("fixed1") == [("fixed1",)] and read.rows("fixed2@example.org") == [
        ("fixed2",)]
    assert build.calls == 1
