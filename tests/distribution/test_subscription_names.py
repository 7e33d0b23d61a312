"""A user's subscription names are unique whatever their case: a clear 400 from the API, the
database constraint behind it (a race between two saves), and the migration that renames the
clashes already stored."""
import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from backend.errors import DomainError
from distribution.models import Subscription
from distribution.services.subscriptions import save_subscription
from tests.factories import CollectionFactory, UserFactory

URL = "/api/v1/subscriptions/"


@pytest.fixture
def collection(db):
    return CollectionFactory(short_name="MOD021KM", version="061")


def create(client, name):
    return client.post(URL, {"name": name, "collections": ["MOD021KM.061"]}, format="json")


@pytest.mark.django_db
def test_a_second_name_differing_only_in_case_is_a_400(user_api, collection):
    assert create(user_api, "Fires in Australia").status_code == 201
    answer = create(user_api, "FIRES in australia")
    assert answer.status_code == 400
    assert ("You already have a subscription named Fires in Australia"
            in answer.json()["detail"])
    assert Subscription.objects.filter(user=user_api.user).count() == 1


@pytest.mark.django_db
def test_renaming_onto_another_is_refused_but_keeping_ones_own_name_is_fine(user_api,
                                                                          collection):
    first = create(user_api, "fires").json()["id"]
    second = create(user_api, "floods").json()["id"]
    answer = user_api.patch(f"{URL}{second}/", {"name": "Fires"}, format="json")
    assert answer.status_code == 400 and "named fires" in answer.json()["detail"]
    assert user_api.patch(f"{URL}{first}/", {"name": "FIRES"}, format="json").status_code == 200


@pytest.mark.django_db
def test_other_users_may_use_the_same_name(user_api, collection):
    other = UserFactory()
    Subscription.objects.create(user=other, name="fires")
    assert create(user_api, "Fires").status_code == 201


@pytest.mark.django_db
def test_the_constraint_holds_when_the_check_is_raced(collection):
    user = UserFactory()
    save_subscription(Subscription(user=user, name="fires"), [collection])
    with pytest.raises(DomainError, match="already have a subscription named FIRES"):
        save_subscription(Subscription(user=user, name="FIRES"), [collection])


@pytest.mark.django_db(transaction=True)
def test_the_migration_renames_names_that_clash():
    executor = MigrationExecutor(connection)
    before = [("distribution", "0006_destination_path_in_own_folder")]
    after = [("distribution", "0007_subscription_name_unique")]
    executor.migrate(before)
    apps = executor.loader.project_state(before).apps
    User = apps.get_model("auth", "User")
    Old = apps.get_model("distribution", "Subscription")
    alice, bob = User.objects.create(username="alice"), User.objects.create(username="bob")
    made = [Old.objects.create(user=alice, name=n).pk
            for n in ("Fires", "fires", "FIRES", "fires (2)", "x" * 120, "X" * 120)]
    Old.objects.create(user=bob, name="fires")
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(after)
    # the model as it is right after this migration (later ones add columns)
    New = executor.loader.project_state(after).apps.get_model("distribution", "Subscription")
    names = dict(New.objects.filter(user__username="alice").values_list("pk", "name"))
    # the oldest keeps its name, the rest are told apart, never clashing with another
    assert [names[pk] for pk in made] == [
        "Fires", "fires (3)", "FIRES (4)", "fires (2)", "x" * 120, "X" * 116 + " (2)"]
    assert New.objects.get(user__username="bob").name == "fires"
    call_command("migrate", verbosity=0)
