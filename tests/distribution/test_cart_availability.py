"""The cart marks each granule cached or on tape before anything is ordered, and for one on
tape the recall estimate: the very estimate its order then gets from the archive (the path
orders take, make_available, asked right after), whatever other recalls are queued ahead."""
import pytest

from backend.archive import operations
from backend.archive import services as archive
from backend.archive.models import ArchiveRequest, Drive, Volume

pytestmark = pytest.mark.django_db


def cart_item(client, granule):
    body = client.get("/api/v1/cart/").json()
    return next(g for g in body["granules"] if g["granule"] == granule.pk)


def test_a_cached_granule_is_ready_at_once(user_api, collection, archived):
    granule = archived(collection)[0]
    user_api.post("/api/v1/cart/", {"granules": [granule.pk]}, format="json")
    item = cart_item(user_api, granule)
    assert (item["in_cache"], item["eta_s"]) == (True, None)


def test_a_granule_on_tape_shows_the_estimate_its_order_gets(user_api, collection, archived):
    ours, other = archived(collection, 2, sizes=(3000, 500, 2000))
    for granule in (ours, other):
        operations.release(list(granule.files.all()))
    # someone else's recall is queued first: ours waits behind it
    archive.make_available(list(other.files.all()))
    user_api.post("/api/v1/cart/", {"granules": [ours.pk]}, format="json")
    promised = cart_item(user_api, ours)
    assert promised["in_cache"] is False and promised["eta_s"] > 0
    answers = archive.make_available(list(ours.files.all()), requested_by=user_api.user)
    assert promised["eta_s"] == max(a.eta_s for a in answers)
    # with its recalls queued, the cart reads those recalls' own estimates: the same
    assert cart_item(user_api, ours)["eta_s"] == promised["eta_s"]
    # showing the cart queued nothing: the recalls are the three files of each granule
    assert ArchiveRequest.objects.filter(kind="recall").count() == 6


def test_no_estimate_without_a_drive_or_a_readable_copy(user_api, collection, archived):
    granule = archived(collection)[0]
    operations.release(list(granule.files.all()))
    user_api.post("/api/v1/cart/", {"granules": [granule.pk]}, format="json")
    assert cart_item(user_api, granule)["eta_s"] > 0
    states = dict(Volume.objects.values_list("pk", "state"))
    Volume.objects.update(state=Volume.State.SUSPECT)
    item = cart_item(user_api, granule)
    assert (item["in_cache"], item["eta_s"]) == (False, None)
    for pk, state in states.items():
        Volume.objects.filter(pk=pk).update(state=state)
    assert cart_item(user_api, granule)["eta_s"] > 0
    for drive in Drive.objects.all():
        operations.vary_drive(drive, online=False)
    assert cart_item(user_api, granule)["eta_s"] is None


def test_one_file_away_or_coming_back_keeps_the_granule_on_tape_read_in_one_statement(
        user_api, collection, archived):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from backend.archive.models import CacheEntry

    whole, part, staging = archived(collection, 3, sizes=(3000, 500, 2000))
    operations.release(list(part.files.all())[:1])
    entry = CacheEntry.objects.get(file=staging.files.order_by("name").first())
    entry.state = CacheEntry.State.STAGING      # its bytes are on their way back, not here
    entry.save()
    user_api.post("/api/v1/cart/", {"granules": [g.pk for g in (whole, part, staging)]},
                  format="json")
    with CaptureQueriesContext(connection) as queries:
        shown = {g: cart_item(user_api, g)["in_cache"] for g in (whole, part, staging)}
    assert shown == {whole: True, part: False, staging: False}
    # the files and their cache entries: one statement
    reads = [q["sql"] for q in queries.captured_queries if "archive_cacheentry" in q["sql"]]
    assert len(reads) == 3 and all("catalog_file" in sql for sql in reads)
