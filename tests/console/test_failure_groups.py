"""Failures grouped by reason, over failures made through the services that fail work in
production: the groups equal a grouping done here by brute force over every failed row, and a
retry of one group sends exactly that group's items round again, nothing else."""
from collections import Counter, defaultdict

import pytest

from backend.accounts.models import AuditEvent
from backend.archive.models import ArchiveRequest, FileCopy
from backend.catalog.models import Collection
from console.reasons import normalise
from distribution.models import Order, OrderItem, SubscriptionDelivery
from distribution.services import orders
from ingest.models import IngestGranule

from .conftest import client_for, evict

pytestmark = pytest.mark.django_db

URL = "/api/v1/console/failures/groups/"
RETRY = URL + "retry/"


@pytest.fixture
def world(collections, ingest, damaged_migrations, archived, inline):
    """Failed work of every kind: wrong checksums (five, in two requests and two collections),
    a wrong size, a missing file, damaged cache copies, order items whose copies are gone, and
    a subscription delivery to a user who may no longer see the collection."""
    modis, ga = collections
    ingest([(modis, "G1", "checksum"), (modis, "G2", "checksum"), (modis, "G3", "checksum"),
            (modis, "G4", "size"), (modis, "G5", None), (ga, "G6", "checksum"),
            (ga, "G7", "missing")])
    ingest([(modis, "G8", "checksum")])
    damaged_migrations(ga, 2)

    alice = client_for("user")
    lost = archived(modis, 1)
    evict(lost)
    FileCopy.objects.filter(file__granule__in=lost).update(state="released")
    inline(orders.create_order, alice.user, [g.pk for g in lost])

    answer = alice.post("/api/v1/subscriptions/", {"name": "ga", "collections": [ga.key]},
                        format="json")
    assert answer.status_code == 201, answer.content
    Collection.objects.filter(pk=ga.pk).update(access=Collection.Access.RESTRICTED)
    archived(ga, 1)
    return collections


def failed_rows():
    """Every failed row of every kind, read here from the models: (where, kind, id, reason,
    collection key, when)."""
    rows = []
    for g in IngestGranule.objects.filter(state="failed"):
        rows.append(("ingest", "granule", g.pk, g.reason, g.collection_key, g.updated_at))
    for r in ArchiveRequest.objects.filter(state="failed").select_related(
            "file__granule__collection"):
        key = r.file.granule.collection.key if r.file else None
        rows.append(("archive", r.kind, r.pk, r.error, key, r.finished_at or r.created_at))
    for i in OrderItem.objects.filter(state="failed").select_related("granule__collection",
                                                                       "order"):
        rows.append(("distribution", "order_item", i.pk, i.error, i.granule.collection.key,
                     i.order.updated_at))
    for d in SubscriptionDelivery.objects.filter(state="failed").select_related(
            "granule__collection"):
        rows.append(("distribution", "subscription_delivery", d.pk, d.detail,
                     d.granule.collection.key, d.created_at))
    return rows


def brute_force(rows):
    groups = defaultdict(list)
    for where, kind, pk, reason, key, at in rows:
        groups[(where, kind, normalise(reason))].append((pk, key, at))
    return {name: {"count": len(members),
                   "collections": Counter(key for _, key, _ in members if key),
                   "first": min(at for _, _, at in members),
                   "last": max(at for _, _, at in members)}
            for name, members in groups.items()}


def as_found(groups):
    from django.utils.dateparse import parse_datetime
    return {(g["where"], g["kind"], g["pattern"]): {
        "count": g["count"], "collections": Counter({c["key"]: c["count"]
                                                     for c in g["collections"]}),
        "first": parse_datetime(g["first_seen"]), "last": parse_datetime(g["last_seen"])}
        for g in groups}


def test_groups_equal_a_brute_force_grouping_of_every_failed_row(operator_api, world):
    answer = operator_api.get(URL)
    assert answer.status_code == 200, answer.content
    groups = answer.json()
    assert as_found(groups) == brute_force(failed_rows())
    # the largest first
    assert [g["count"] for g in groups] == sorted((g["count"] for g in groups), reverse=True)

    # what the test made, counted from the specs, not from the rows
    checksum = [g for g in groups if g["where"] == "ingest" and "checksum is" in g["pattern"]]
    assert len(checksum) == 1
    assert checksum[0]["count"] == 5
    assert {c["key"]: c["count"] for c in checksum[0]["collections"]} == {
        "MOD021KM.061": 4, "MOD09GA.061": 1}
    assert checksum[0]["example"] in set(
        IngestGranule.objects.filter(granule_id__in=["G1", "G2", "G3", "G6", "G8"])
        .values_list("reason", flat=True))
    kinds = {(g["where"], g["kind"]) for g in groups}
    assert kinds == {("ingest", "granule"), ("archive", "migrate"),
                     ("distribution", "order_item"), ("distribution", "subscription_delivery")}
    damaged = [g for g in groups if g["kind"] == "migrate"]
    assert len(damaged) == 1 and damaged[0]["count"] == 4   # two granules, two copies each


def test_filters_keep_what_they_say(operator_api, world):
    only_ingest = operator_api.get(URL, {"where": "ingest"}).json()
    assert {g["where"] for g in only_ingest} == {"ingest"}
    ga = operator_api.get(URL, {"collection": "MOD09GA.061"}).json()
    expected = brute_force([r for r in failed_rows() if r[4] == "MOD09GA.061"])
    assert as_found(ga) == expected
    assert operator_api.get(URL, {"since": "2999-01-01T00:00:00Z"}).json() == []
    migrate = operator_api.get(URL, {"kind": "migrate"}).json()
    assert [g["kind"] for g in migrate] == ["migrate"]


def _snapshot():
    """The state of every row of work, to tell what a retry touched."""
    return {
        "ingest": dict(IngestGranule.objects.values_list("pk", "state")),
        "archive": dict(ArchiveRequest.objects.values_list("pk", "state")),
        "items": dict(OrderItem.objects.values_list("pk", "state")),
        "deliveries": dict(SubscriptionDelivery.objects.values_list("pk", "state")),
    }


def _group(operator_api, where, words):
    [group] = [g for g in operator_api.get(URL).json()
               if g["where"] == where and words in g["pattern"]]
    return group


def test_retrying_a_group_sends_exactly_its_items_again(operator_api, world,
                                                        django_capture_on_commit_callbacks):
    group = _group(operator_api, "ingest", "checksum is")
    members = set(IngestGranule.objects.filter(
        granule_id__in=["G1", "G2", "G3", "G6", "G8"]).values_list("pk", flat=True))
    before = _snapshot()
    with django_capture_on_commit_callbacks() as sent:
        answer = operator_api.post(RETRY, {"key": group["key"], "reason": "provider fixed it"},
                               format="json")
    assert answer.status_code == 202, answer.content
    result = answer.json()
    assert result["retried"] == 5 and result["matched"] == 5 and result["not_retried"] == []
    assert len(sent) == 2        # one nudge per ingest request, after the commit
    after = _snapshot()
    changed = {pk for pk in before["ingest"] if before["ingest"][pk] != after["ingest"][pk]}
    assert changed == members
    assert all(after["ingest"][pk] == "received" for pk in members)
    assert set(IngestGranule.objects.filter(pk__in=members).values_list("attempts", flat=True)) \
        == {0}
    for other in ("archive", "items", "deliveries"):
        assert before[other] == after[other]

    event = AuditEvent.objects.get(action="failures.retry_group")
    assert event.actor == operator_api.user and event.target_id == group["key"]
    assert event.reason == "provider fixed it" and event.detail["retried"] == 5

    # the group is gone until its items fail again; asking again is a 404, not a second retry
    assert operator_api.post(RETRY, {"key": group["key"]}, format="json").status_code == 404


def test_retrying_archive_and_order_item_groups(operator_api, world, inline):
    # the damaged cached copies are their files' only copies: a retry cannot help them, so
    # the group offers none, says why, and a retry asked anyway leaves every one failed
    migrate = _group(operator_api, "archive", "catalog checksum")
    retry = next(a for a in migrate["actions"] if a["action"] == "retry")
    assert retry["possible"] is False and "only copy" in retry["reason"]
    assert any(a["action"] == "redeliver" and a["possible"] for a in migrate["actions"])
    before = _snapshot()
    answer = operator_api.post(RETRY, {"key": migrate["key"]}, format="json")
    assert answer.status_code == 202, answer.content
    result = answer.json()
    assert result["retried"] == 0 and result["matched"] == 4
    assert len(result["not_retried"]) == 4
    assert all("only copy" in r["reason"] for r in result["not_retried"])
    after = _snapshot()
    assert before["archive"] == after["archive"] and before["ingest"] == after["ingest"]

    items = _group(operator_api, "distribution", "readable copy")
    failed_items = {pk for pk, s in before["items"].items() if s == "failed"}
    answer = operator_api.post(RETRY, {"key": items["key"]}, format="json")
    assert answer.status_code == 202 and answer.json()["retried"] == len(failed_items)
    assert set(OrderItem.objects.filter(pk__in=failed_items).values_list("state", flat=True)) \
        == {"waiting"}


def test_a_group_of_a_closed_order_says_why_it_was_not_retried(operator_api, world):
    items = _group(operator_api, "distribution", "readable copy")
    Order.objects.update(state=Order.State.CANCELLED)
    result = operator_api.post(RETRY, {"key": items["key"]}, format="json").json()
    assert result["retried"] == 0
    assert result["not_retried"] and all("is cancelled" in r["reason"]
                                         for r in result["not_retried"])


NO_KEYS = [{}, {"key": 5}, {"key": ["a"]}, {"key": None}, {"key": "zz" * 10}, {"key": "0" * 21},
           {"key": {"$gt": ""}}, [1, 2], "key", 7, {"key": "0" * 20, "reason": "x" * 501},
           {"key": "0" * 20, "reason": ["why"]}]


def test_a_retry_of_what_is_no_key_is_a_400_and_touches_nothing(operator_api, world):
    before = _snapshot()
    for body in NO_KEYS:
        answer = operator_api.post(RETRY, body, format="json")
        assert answer.status_code == 400, (body, answer.content)
        assert answer.json()["detail"]
    answer = operator_api.post(RETRY, "{" * 50, content_type="application/json")
    assert answer.status_code == 400
    assert _snapshot() == before and not AuditEvent.objects.exists()


def test_an_unknown_group_is_a_404(operator_api, world):
    answer = operator_api.post(RETRY, {"key": "0123456789abcdef0123"}, format="json")
    assert answer.status_code == 404 and "group key" in answer.json()["detail"]


@pytest.mark.parametrize("query", [{"since": "yesterday"}, {"where": "tape"},
                                   {"kind": "x" * 5000}, {"collection": "x" * 121}])
def test_bad_filters_are_a_400(operator_api, query):
    answer = operator_api.get(URL, query)
    assert answer.status_code == 400 and answer.json()["detail"]


@pytest.mark.parametrize("role", ["user", "provider"])
def test_only_operators_see_or_retry_failures(world, role, operator_api):
    key = operator_api.get(URL).json()[0]["key"]
    client = client_for(role)
    before = _snapshot()
    assert client.get(URL).status_code == 403
    assert client.post(RETRY, {"key": key}, format="json").status_code == 403
    assert _snapshot() == before


def test_a_delivery_group_retried_once_its_cause_is_gone_is_delivered(operator_api, world,
                                                                     inline):
    group = _group(operator_api, "distribution", "may no longer see")
    failed = SubscriptionDelivery.objects.get(state="failed")
    assert group["count"] == 1
    Collection.objects.filter(short_name="MOD09GA").update(access=Collection.Access.PUBLIC)
    before = _snapshot()
    answer = inline(operator_api.post, RETRY, {"key": group["key"]}, format="json")
    assert answer.status_code == 202 and answer.json()["retried"] == 1
    failed.refresh_from_db()
    assert failed.state == "delivered" and failed.attempts == 1
    after = _snapshot()
    assert {k: v for k, v in before.items() if k != "deliveries"} == \
        {k: v for k, v in after.items() if k != "deliveries"}
