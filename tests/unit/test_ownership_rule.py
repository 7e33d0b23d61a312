"""Ownership is one rule: every model a user or provider owns declares how its rows lead to
their owner, and every view over such rows fetches them through `accounts.ownership`."""
import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from backend.accounts import ownership, roles
from backend.accounts.models import Provider
from distribution.models import Destination, Order
from tests.api.test_role_matrix import routes
from tests.factories import UserFactory

OWNER_MODELS = {get_user_model(), Provider}


def _owned_models():
    for model in apps.get_models():
        if model._meta.app_label in ("distribution", "ingest") and any(
                field.name in ("user", "provider") and field.related_model in OWNER_MODELS
                for field in model._meta.fields):
            yield model


def test_every_model_with_an_owner_declares_its_ownership():
    found = list(_owned_models())
    assert {m.__name__ for m in found} >= {"Order", "Subscription", "Destination", "CartItem",
                                           "IngestRequest", "Pdr"}
    for model in found:
        assert isinstance(getattr(model, "ownership", None), ownership.Ownership), model


def test_every_view_over_owned_rows_fetches_them_through_the_rule():
    for (name, _), pattern in routes().items():
        view = getattr(pattern.callback, "cls", None)
        queryset = getattr(view, "queryset", None)
        if queryset is not None and hasattr(queryset.model, "ownership"):
            assert issubclass(view, ownership.OwnedViewMixin), name


@pytest.mark.django_db
def test_anonymous_reaches_nothing_and_operators_only_what_the_model_allows():
    alice, olga = UserFactory(role=roles.USER), UserFactory(role=roles.OPERATOR)
    order = Order.objects.create(user=alice)
    lab = Destination.objects.create(user=alice, name="lab")
    assert not ownership.owned(Order.objects, AnonymousUser()).exists()
    assert list(ownership.owned(Order.objects, olga)) == [order]
    assert not ownership.owned(Destination.objects, olga).exists()
    assert list(ownership.owned(Destination.objects, alice)) == [lab]
