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


def test_forms_share_their_fields_and_still_validate_apart(restricted):
    user = UserFactory()
    forms = [_filter_set(user, state=value).form
             for value in ("nonsense", Granule.State.ARCHIVED, "also wrong")]
    # one field object for every form of the class (a deep copy each was 6 % of a search)
    assert all(f.fields["state"] is forms[0].fields["state"] for f in forms)
    assert [f.is_valid() for f in forms] == [False, True, False]
    assert ["nonsense" in str(forms[0].errors), "also wrong" in str(forms[2].errors)] == [
        True, True]
    assert "nonsense" not in str(forms[2].errors) and not forms[1].errors
    assert forms[1].cleaned_data["state"] == Granule.State.ARCHIVED


def test_a_model_choice_field_is_still_copied_per_form(db):
    import django_filters

    from backend.filtering import FilterSet

    class ByCollection(FilterSet):
        collection = django_filters.ModelChoiceFilter(queryset=Collection.objects.all())

        class Meta:
            model = Granule
            fields = ["collection"]

    first = CollectionFactory(short_name="FIRST", version="1")
    one, two = (ByCollection(data={"collection": str(first.pk)}).form for _ in range(2))
    assert one.fields["collection"] is not two.fields["collection"]
    assert list(one.fields["collection"].queryset) == [first]     # fills one's results only
    second = CollectionFactory(short_name="SECOND", version="1")
    assert set(two.fields["collection"].queryset) == {first, second}
    assert two.is_valid() and two.cleaned_data["collection"] == first
