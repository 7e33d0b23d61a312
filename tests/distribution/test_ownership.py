"""Ownership: an operator acting on a user's object leaves it the user's, and a folder
destination never reaches outside its owner's own folder of the outbox."""
import pytest

from distribution.models import Destination, Order, Subscription
from distribution.services import orders, push
from distribution.services.destinations import destination_root
from distribution.targets import PushError

pytestmark = pytest.mark.django_db


def test_an_operator_pausing_a_users_subscription_leaves_it_the_users(alice, operator,
                                                                     collection):
    dest = alice.post("/api/v1/destinations/", {"name": "feed"}, format="json").json()
    sub = alice.post("/api/v1/subscriptions/", {
        "name": "fires", "collections": ["MOD021KM.061"], "mode": "push",
        "destination": dest["id"]}, format="json").json()

    response = operator.patch(f"/api/v1/subscriptions/{sub['id']}/", {"active": False},
                              format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["active"] is False

    assert Subscription.objects.get(pk=sub["id"]).user == alice.user
    mine = alice.get(f"/api/v1/subscriptions/{sub['id']}/")
    assert mine.status_code == 200 and mine.json()["active"] is False
    assert [s["id"] for s in alice.get("/api/v1/subscriptions/").json()["results"]] == [
        sub["id"]]


def test_a_subscription_takes_only_its_owners_destinations(alice, bob, operator, collection):
    sub = alice.post("/api/v1/subscriptions/", {
        "name": "fires", "collections": ["MOD021KM.061"]}, format="json").json()
    for client in (bob, operator):
        theirs = client.post("/api/v1/destinations/", {"name": "bin"}, format="json").json()
        response = operator.patch(f"/api/v1/subscriptions/{sub['id']}/",
                                  {"mode": "push", "destination": theirs["id"]}, format="json")
        assert response.status_code == 400, response.json()
        assert "destination" in response.json()["errors"]
    assert Subscription.objects.get(pk=sub["id"]).destination is None


def _push(client, granules, destination, inline):
    from tests.distribution.test_orders import _order

    return inline(_order, client, granules, delivery="push", destination=destination)


def test_a_folder_named_after_another_user_stays_in_the_owners_folder(
        alice, bob, collection, archived, inline, data_root):
    [granule] = archived(collection)
    alices = data_root / "outbox" / alice.user.username
    dest = bob.post("/api/v1/destinations/", {"name": "lab", "kind": "folder",
                                              "path": f"{alice.user.username}/lab"},
                    format="json")
    assert dest.status_code == 201, dest.json()
    bobs = data_root / "outbox" / bob.user.username / alice.user.username / "lab"
    assert dest.json()["folder"] == str(bobs)

    response = _push(bob, [granule], dest.json()["id"], inline)
    order = Order.objects.get(pk=response.json()["id"])
    assert order.state == "completed"
    assert (bobs / f"order-{order.pk}" / "manifest.json").exists()
    assert not alices.exists()


@pytest.mark.parametrize("path", ["../alice/lab", "/tmp/lab", "lab/../../alice", "..", "."])
def test_a_folder_outside_the_owners_folder_is_refused(bob, path):
    response = bob.post("/api/v1/destinations/", {"name": "x", "path": path}, format="json")
    assert response.status_code == 400, response.json()
    assert "path" in response.json()["errors"]


def test_a_link_out_of_the_owners_folder_is_refused_when_made_and_when_pushed(
        alice, bob, collection, archived, data_root):
    [granule] = archived(collection)
    alices = data_root / "outbox" / alice.user.username
    alices.mkdir(parents=True)
    bobs = data_root / "outbox" / bob.user.username
    bobs.mkdir(parents=True)
    (bobs / "shared").symlink_to(alices)
    response = bob.post("/api/v1/destinations/", {"name": "x", "path": "shared/lab"},
                        format="json")
    assert response.status_code == 400, response.json()

    dest = bob.post("/api/v1/destinations/", {"name": "later", "path": "later"},
                    format="json").json()
    (bobs / "later").symlink_to(alices)
    order_id = bob.post("/api/v1/orders/", {"granules": [granule.pk], "delivery": "push",
                                            "destination": dest["id"]},
                        format="json").json()["id"]
    orders.refresh_order(order_id)
    with pytest.raises(PushError, match="outside"):
        push.push_order(order_id)
    assert "outside" in Order.objects.get(pk=order_id).error
    assert list(alices.iterdir()) == []


def test_stored_folder_paths_keep_naming_the_same_folder_after_the_upgrade(alice, bob):
    import importlib

    from django.apps import apps

    migration = importlib.import_module(
        "distribution.migrations.0006_destination_path_in_own_folder")
    own = Destination.objects.create(user=alice.user, name="a",
                                     path=f"{alice.user.username}/lab/in")
    foreign = Destination.objects.create(user=bob.user, name="b",
                                         path=f"{alice.user.username}/lab")
    remote = Destination.objects.create(user=alice.user, name="c", kind="sftp",
                                        path=f"{alice.user.username}/x", host="h", username="u")
    migration.inside_own_folder(apps, None)
    own.refresh_from_db(), foreign.refresh_from_db(), remote.refresh_from_db()
    assert own.path == "lab/in"
    assert foreign.path == f"{alice.user.username}/lab"
    assert str(destination_root(foreign)).endswith(f"/{bob.user.username}/"
                                                   f"{alice.user.username}/lab")
    assert remote.path == f"{alice.user.username}/x"
