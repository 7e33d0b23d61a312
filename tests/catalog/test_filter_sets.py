"""Filter sets share their class's filters and form class between requests (backend.filtering):
each must still filter for its own request and validate its own data, however many are alive
at once."""
import pytest
from django.core.exceptions import ValidationError
from django.test import RequestFactory

from backend.catalog.filters import GranuleFilter
from backend.catalog.models import Collection, Granule
from tests.factories import CollectionFactory, GranuleFactory, UserFactory


@pytest.fixture
def restricted(db):
    collection = CollectionFactory(short_name="SECRET", version="1",
                                   access=Collection.Access.RESTRICTED)
    GranuleFactory(collection=collection)
    GranuleFactory(collection=CollectionFactory(short_name="OPEN", version="1"))
    return collection


def _filter_set(user, **data):
    request = RequestFactory().get("/")
    request.user = user
    return GranuleFilter(data=data, queryset=Granule.objects.all(), request=request)


def test_each_filter_set_filters_for_its_own_user(restricted):
    alice, bob = UserFactory(), UserFactory()
    restricted.approved_users.add(alice)
    for_alice = _filter_set(alice, collection="SECRET.1")
    for_bob = _filter_set(bob, collection="SECRET.1")    # built after alice's, used after too
    assert for_alice.is_valid() and for_bob.is_valid()
    assert [g.collection_id for g in for_alice.qs] == [restricted.pk]
    with pytest.raises(ValidationError, match="unknown collection SECRET.1"):
        for_bob.qs       # noqa: B018 (evaluating it is the test)
    assert [g.collection_id for g in _filter_set(alice, collection="SECRET.1").qs] == [
        restricted.pk]


def test_each_filter_set_validates_its_own_data(restricted):
    user = UserFactory()
    wrong = _filter_set(user, state="nonsense")
    right = _filter_set(user, state=Granule.State.ARCHIVED)
    assert not wrong.is_valid() and right.is_valid()
    assert list(wrong.errors) == ["state"] and not right.errors
    assert wrong.form is not right.form and wrong.form.fields is not right.form.fields
    assert set(right.qs) == set(Granule.objects.filter(state=Granule.State.ARCHIVED))
