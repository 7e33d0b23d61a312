"""The dead-letter list: work that used up its retries (archive requests whose mover died under
them every time, ingest granules whose worker died every time, a push that never landed), and
its replay from a fresh count; failures at the first try are not dead letters."""
import pytest

from backend.accounts.models import AuditEvent
from backend.archive.models import ArchiveRequest
from backend.archive.services import queueing
from distribution.models import Order, OrderItem
from distribution.services import orders, push
from distribution.targets import PushError
from ingest.models import IngestGranule
from ingest.services import pipeline
from tests.ingest.builders import granule, stage

from .conftest import client_for

pytestmark = pytest.mark.django_db

URL = "/api/v1/console/dead-letter/"
REPLAY = URL + "replay/"


@pytest.fixture
def dead_ingest(provider, provider_client, collections, settings, monkeypatch):
    """dead_ingest(n): n granules whose worker died each time it held them, until the pipeline
    gave up on them (GRANARY_INGEST_MAX_ATTEMPTS passed)."""
    settings.GRANARY_INGEST_MAX_ATTEMPTS = 2

    def make(n):
        specs = [granule(collections[0], f"D{i}", [stage(provider, f"in/D{i}.dat")], hour=i)
                 for i in range(n)]
        answer = provider_client.post("/api/v1/ingest/requests/", {"granules": specs},
                                      format="json")
        request_id = answer.json()["id"]
        with monkeypatch.context() as patched:
            def killed(chunk):
                raise RuntimeError("worker killed")
            patched.setattr(pipeline._Chunk, "run", killed)
            for _ in range(settings.GRANARY_INGEST_MAX_ATTEMPTS + 1):
                with pytest.raises(RuntimeError):
                    pipeline.process_chunk(request_id, 0, n)
        pipeline.run_request(request_id)
        return request_id
    return make


@pytest.fixture
def dead_push(archived, collections, data_root, settings):
    """A push order whose destination is blocked by a file: every push fails, until the order's
    push attempts are used up and its items fail. Returns (order id, the blocking file)."""
    settings.GRANARY_PUSH_MAX_ATTEMPTS = 2
    alice = client_for("user")
    [made] = archived(collections[0], 1)
    dest = alice.post("/api/v1/destinations/", {"name": "lab"}, format="json").json()
    blocker = data_root / "outbox" / alice.user.username / "lab"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("a file where the destination folder should be")
    order_id = alice.post("/api/v1/orders/", {"granules": [made.pk], "delivery": "push",
                                              "destination": dest["id"]},
                          format="json").json()["id"]
    orders.refresh_order(order_id)
    for _ in range(settings.GRANARY_PUSH_MAX_ATTEMPTS):
        with pytest.raises(PushError):
            push.push_order(order_id)
    return order_id, blocker


@pytest.fixture
def dead(collections, dead_recalls, dead_ingest, dead_push, damaged_migrations, ingest):
    modis, ga = collections
    recalls = dead_recalls(modis, 2)
    dead_ingest(2)
    order_id, blocker = dead_push
    damaged_migrations(ga, 1)               # failed at the first try: not dead letters
    ingest([(ga, "W1", "checksum")])        # bad input: a failure, not a dead letter
    return {"recalls": recalls, "order": order_id, "blocker": blocker}


def test_the_list_holds_what_used_up_its_retries_and_nothing_else(operator_api, dead):
    page = operator_api.get(URL, {"limit": 500}).json()
    found = {(row["kind"], row["id"]) for row in page["results"]}
    archive_dead = {("archive", pk) for pk in ArchiveRequest.objects.filter(
        state="failed", attempts__gte=queueing.MAX_ATTEMPTS).values_list("pk", flat=True)}
    assert archive_dead == {("archive", pk) for pk in dead["recalls"]}
    ingest_dead = {("ingest", pk) for pk in IngestGranule.objects.filter(
        granule_id__startswith="D").values_list("pk", flat=True)}
    items = {("order_item", pk) for pk in OrderItem.objects.filter(
        order_id=dead["order"]).values_list("pk", flat=True)}
    assert found == archive_dead | ingest_dead | items
    assert page["count"] == len(found) == 2 + 2 + len(items)
    assert not any(row["id"] in ArchiveRequest.objects.filter(kind="migrate").values_list(
        "pk", flat=True) for row in page["results"] if row["kind"] == "archive")
    for row in page["results"]:
        assert row["attempts"] >= row["max_attempts"] and row["reason"]
        assert row["collection"] == "MOD021KM.061"
    recall = next(r for r in page["results"] if r["kind"] == "archive")
    assert recall["max_attempts"] == queueing.MAX_ATTEMPTS
    assert "mover stopped" in recall["reason"] and recall["label"].startswith("recall #")
    assert "gave up after 2 attempts" in next(
        r for r in page["results"] if r["kind"] == "ingest")["reason"]


def test_pages_cover_the_list_once(operator_api, dead):
    everything = operator_api.get(URL, {"limit": 500}).json()
    seen, url = [], URL + "?limit=2"
    while url:
        page = operator_api.get(url).json()
        assert len(page["results"]) <= 2
        seen += [(r["kind"], r["id"]) for r in page["results"]]
        url = page["next"]
    assert seen == [(r["kind"], r["id"]) for r in everything["results"]]
    assert len(seen) == len(set(seen)) == everything["count"]
    only = operator_api.get(URL, {"kind": "ingest"}).json()
    assert {r["kind"] for r in only["results"]} == {"ingest"} and only["count"] == 2
    assert operator_api.get(URL, {"collection": "MOD09GA.061"}).json()["count"] == 0


def test_replay_by_ids_requeues_from_a_fresh_count_once(operator_api, dead,
                                                         django_capture_on_commit_callbacks):
    recalls = dead["recalls"]
    other = IngestGranule.objects.filter(granule_id__startswith="D")
    before = dict(other.values_list("pk", "state"))
    with django_capture_on_commit_callbacks() as sent:
        answer = operator_api.post(REPLAY, {"ids": {"archive": recalls}, "reason": "drive fixed"},
                               format="json")
    assert answer.status_code == 202, answer.content
    assert answer.json()["replayed"] == 2 and answer.json()["by_kind"] == {"archive": 2}
    assert len(sent) == 1                       # the storage manager woken, after the commit
    for request in ArchiveRequest.objects.filter(pk__in=recalls):
        assert request.state == "queued" and request.attempts == 0 and request.error == ""
    assert dict(other.values_list("pk", "state")) == before
    event = AuditEvent.objects.get(action="dead_letter.replay")
    assert event.actor == operator_api.user and event.detail["by_kind"] == {"archive": 2}

    again = operator_api.post(REPLAY, {"ids": {"archive": recalls}}, format="json").json()
    assert again["replayed"] == 0
    assert {r["id"] for r in again["not_replayed"]} == set(recalls)
    assert ArchiveRequest.objects.filter(pk__in=recalls, state="queued").count() == 2


def test_replay_by_filter(operator_api, dead):
    answer = operator_api.post(REPLAY, {"kind": "ingest"}, format="json").json()
    assert answer["replayed"] == 2
    rows = IngestGranule.objects.filter(granule_id__startswith="D")
    assert set(rows.values_list("state", "attempts")) == {("received", 0)}
    assert ArchiveRequest.objects.filter(pk__in=dead["recalls"], state="failed").count() == 2
    assert operator_api.get(URL, {"kind": "ingest"}).json()["count"] == 0


def test_a_replayed_push_lands_once_its_cause_is_gone(operator_api, dead, inline):
    dead["blocker"].unlink()
    answer = inline(operator_api.post, REPLAY, {"ids": {"order_item": list(
        OrderItem.objects.filter(order_id=dead["order"]).values_list("pk", flat=True))}},
        format="json")
    assert answer.status_code == 202 and answer.json()["replayed"] >= 1
    push.push_order(dead["order"])
    order = Order.objects.get(pk=dead["order"])
    assert order.state == "completed" and order.push_attempts == 0
    assert (dead["blocker"] / f"order-{dead['order']}" / "manifest.json").exists()


BAD_REPLAYS = [
    {}, [], "all", 5, {"all": "yes please"}, {"ids": [1, 2]}, {"ids": {"tape": [1]}},
    {"ids": {"archive": ["abc"]}}, {"ids": {"archive": [2**63]}}, {"ids": {"archive": [0]}},
    {"ids": {"archive": 1}}, {"ids": {"archive": list(range(1, 10002))}},
    {"ids": {"archive": [1]}, "kind": "archive"}, {"kind": "tape"}, {"since": "soon"},
    {"collection": "x" * 121}, {"all": True, "reason": "x" * 501}, {"ids": {"archive": [1]},
                                                                     "all": True},
]


def test_bad_replays_are_a_400_and_replay_nothing(operator_api, dead):
    states = dict(ArchiveRequest.objects.values_list("pk", "state"))
    for body in BAD_REPLAYS:
        answer = operator_api.post(REPLAY, body, format="json")
        assert answer.status_code == 400, (body, answer.content)
        assert answer.json()["detail"]
    assert dict(ArchiveRequest.objects.values_list("pk", "state")) == states
    assert not AuditEvent.objects.exists()


@pytest.mark.parametrize("query", [{"limit": 0}, {"limit": "abc"}, {"limit": 501},
                                   {"offset": -1}, {"offset": "1e9"}, {"kind": "tape"},
                                   {"since": "2024-13-45"}])
def test_bad_pages_are_a_400(operator_api, query):
    answer = operator_api.get(URL, query)
    assert answer.status_code == 400 and answer.json()["detail"]


@pytest.mark.parametrize("role", ["user", "provider"])
def test_only_operators_see_or_replay_dead_letters(dead, role):
    client = client_for(role)
    states = dict(ArchiveRequest.objects.values_list("pk", "state"))
    assert client.get(URL).status_code == 403
    assert client.post(REPLAY, {"all": True}, format="json").status_code == 403
    assert dict(ArchiveRequest.objects.values_list("pk", "state")) == states
