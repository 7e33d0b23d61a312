"""matching_subscriptions answers from match tables held in memory: equal to testing every
subscription in Python (bench.subscriptions.brute_force) over random subscriptions and
granules, and still equal after every kind of write to the index rows (the API, a bulk load,
a queryset update, raw SQL, cascades from a deleted subscription or user, a rolled back
change), because triggers change the collection's stamp whoever writes."""
import random
from datetime import timedelta

import pytest
from django.db import connection, transaction

from backend.catalog.models import Granule
from bench import subscriptions as bench
from bench import synthetic
from distribution.models import Subscription, SubscriptionCollection, SubscriptionIndexStamp
from distribution.services import deliveries
from distribution.services.subscriptions import save_subscription
from tests.factories import CollectionFactory, GranuleFactory, UserFactory

pytestmark = pytest.mark.django_db

YEARS = 2.0
LAST = synthetic.EPOCH + timedelta(days=365.25 * YEARS)


@pytest.fixture
def world():
    """Three collections, 120 random subscriptions (written in bulk, as the bench writes
    them) and 30 archived granules of the synthetic products, a few without a footprint."""
    collections = [CollectionFactory(short_name=p.short_name, version="1")
                   for p in synthetic.PRODUCTS[:3]]
    users = [UserFactory() for _ in range(3)]
    bench.create_subscriptions(120, collections, users, 4, synthetic.EPOCH, LAST)
    rng = random.Random(8)
    granules = []
    for g in synthetic.granules(30, YEARS, 9, synthetic.PRODUCTS[:3]):
        box = g.bbox if rng.random() > 0.1 else (None,) * 4
        granules.append(GranuleFactory(
            collection=collections[g.product], temporal_start=g.start, temporal_end=g.end,
            west=box[0], south=box[1], east=box[2], north=box[3], attributes=g.attributes))
    return collections, granules


def agree(granules):
    """Every granule matched as the brute force matches it; the matches found, in all."""
    subscriptions = list(Subscription.objects.all())
    collections_of = {s.pk: set() for s in subscriptions}
    for sub, coll in SubscriptionCollection.objects.values_list("subscription_id",
                                                                "collection_id"):
        collections_of[sub].add(coll)
    total = 0
    for granule in granules:
        granule = Granule.objects.get(pk=granule.pk)
        found = deliveries.matching_subscriptions(granule)
        assert found == sorted(found)
        assert set(found) == bench.brute_force(granule, subscriptions, collections_of), granule
        total += len(found)
    return total


def test_matching_equals_the_brute_force_through_every_kind_of_change(world):
    collections, granules = world
    assert agree(granules) > 0
    chosen = list(Subscription.objects.order_by("pk")[:12])
    for subscription in chosen[:3]:                     # edited through the service
        subscription.temporal_start, subscription.conditions = None, []
        subscription.geometry = None
        subscription.west, subscription.south, subscription.east, subscription.north = (
            170, -80, -170, 80)
        save_subscription(subscription, collections[:2])
    assert agree(granules) > 0
    Subscription.objects.filter(pk__in=[s.pk for s in chosen[3:6]]).update(active=False)
    SubscriptionCollection.objects.filter(subscription__in=chosen[3:6]).update(active=False)
    assert agree(granules) > 0
    Subscription.objects.filter(pk__in=[s.pk for s in chosen[6:9]]).delete()   # cascade
    assert agree(granules) > 0
    chosen[9].user.delete()                             # cascade from the user
    bench.create_subscriptions(20, collections, [UserFactory()], 5, synthetic.EPOCH, LAST)
    assert agree(granules) > 0
    table = connection.ops.quote_name(SubscriptionCollection._meta.db_table)
    with connection.cursor() as cursor:                 # written by hand, behind the ORM
        cursor.execute(f"UPDATE {table} SET west = NULL, south = NULL, east = NULL, "
                       "north = NULL, geometry = NULL, conditions = %s WHERE subscription_id = %s",
                       ["[]", chosen[10].pk])
        Subscription.objects.filter(pk=chosen[10].pk).update(
            west=None, south=None, east=None, north=None, geometry=None, conditions=[])
    assert agree(granules) > 0


def test_a_rolled_back_change_is_forgotten(world):
    collections, granules = world
    granule = granules[0]
    before = deliveries.matching_subscriptions(granule)
    user = UserFactory()
    with pytest.raises(RuntimeError), transaction.atomic():
        added = save_subscription(Subscription(user=user, name="everything"), collections)
        assert added.pk in deliveries.matching_subscriptions(granule)
        raise RuntimeError("roll back")
    assert deliveries.matching_subscriptions(granule) == before
    other = save_subscription(Subscription(user=user, name="again"), collections)
    assert deliveries.matching_subscriptions(granule) == sorted([*before, other.pk])


def test_a_granule_costs_one_query_while_nothing_changes(world, django_assert_num_queries):
    collections, granules = world
    deliveries.matching_subscriptions(granules[0])
    token = SubscriptionIndexStamp.objects.get(collection_id=granules[0].collection_id).token
    with django_assert_num_queries(1):                  # the stamp: the table is current
        deliveries.matching_subscriptions(granules[0])
    SubscriptionCollection.objects.filter(collection=collections[0]).update(new_versions=True)
    assert SubscriptionIndexStamp.objects.get(
        collection_id=collections[0].pk).token != token
