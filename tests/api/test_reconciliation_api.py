"""Reconciliation through the API: operators run one, read what it found and repair it; input
that makes no sense is refused with a 4xx, never a 500."""
import pytest

from backend.archive import services
from backend.archive.models import Reconciliation, Volume
from backend.archive.services.reconcile import reconcile
from tests.archive_fixtures import archived_collection, small_layout, staged_granule

pytestmark = pytest.mark.django_db
URL = "/api/v1/archive/reconciliation/"


@pytest.fixture
def archived(data_root, settings):
    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    settings.GRANARY_READ_MAX_WAIT_S = 0
    settings.GRANARY_REMOUNT_DELAY_S = 0
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    granule, sources = staged_granule(collection, data_root / "staging", sizes=(5000, 7000))
    services.archive_granule(granule, sources)
    services.run_until_idle()
    return granule


def _drift():
    """Two volumes whose recorded counts are wrong: two discrepancies with a repair."""
    volumes = list(Volume.objects.filter(file_count__gt=0).order_by("label"))
    Volume.objects.filter(pk__in=[v.pk for v in volumes]).update(file_count=77)
    return volumes


def test_reconciliation_is_for_operators_only(api, user_api, provider_api, archived):
    run = reconcile()
    for client in (api, user_api, provider_api):
        assert client.get(URL).status_code in (401, 403)
        assert client.post(URL, {}, format="json").status_code in (401, 403)
        assert client.post(f"{URL}{run.pk}/repair/", {}, format="json").status_code in (401, 403)


def test_post_runs_a_reconciliation_in_the_worker(operator_api, archived, eager,
                                                  django_capture_on_commit_callbacks):
    volumes = _drift()
    with django_capture_on_commit_callbacks(execute=True):
        answer = operator_api.post(URL, {"full": True}, format="json")
    assert answer.status_code == 202
    run = Reconciliation.objects.get(pk=answer.json()["id"])
    assert (run.scope, run.state, run.requested_by_id) == ("full", "done",
                                                             operator_api.user.pk)
    body = operator_api.get(URL).json()
    [latest] = body["results"]
    assert latest["id"] == run.pk and latest["discrepancy_count"] == 2
    assert latest["by_kind"] == [{"kind": "volume_counts", "count": 2, "repaired": 0}]
    assert sorted(d["volume"] for d in latest["discrepancies"]) == [v.label for v in volumes]
    assert all(d["repair"] and d["repaired_at"] is None for d in latest["discrepancies"])
    assert "next" in body and "previous" in body


def test_repair_one_then_all_then_nothing_left(operator_api, archived):
    volumes = _drift()
    run = reconcile(full=True)
    first, second = run.discrepancies.order_by("pk")
    one = operator_api.post(f"{URL}{run.pk}/repair/", {"ids": [first.pk]}, format="json")
    assert one.status_code == 200 and one.json()["repaired"] == 1
    assert [d["id"] for d in one.json()["discrepancies"]] == [first.pk]
    rest = operator_api.post(f"{URL}{run.pk}/repair/", format="json")
    assert rest.json()["repaired"] == 1 and rest.json()["discrepancies"][0]["id"] == second.pk
    again = operator_api.post(f"{URL}{run.pk}/repair/", {}, format="json")
    assert again.json()["repaired"] == 0
    assert {v.file_count for v in Volume.objects.filter(pk__in=[v.pk for v in volumes])} == {2}
    assert reconcile().discrepancy_count == 0


@pytest.mark.parametrize("body", [
    {"full": "maybe"}, {"sample": "ten"}, {"sample": 0}, {"sample": -3}, {"sample": 10**12},
    {"repair": [1]}, {"sample": {"n": 1}}, [1, 2], "full",
])
def test_start_refuses_nonsense(operator_api, archived, body):
    answer = operator_api.post(URL, body, format="json")
    assert answer.status_code == 400
    assert not Reconciliation.objects.exists()


def test_malformed_json_is_refused(operator_api, archived):
    run = reconcile()
    for url in (URL, f"{URL}{run.pk}/repair/"):
        answer = operator_api.generic("POST", url, '{"full": tru', content_type="application/json")
        assert answer.status_code == 400
    assert Reconciliation.objects.count() == 1


def test_repair_refuses_nonsense_and_other_runs_ids(operator_api, archived):
    _drift()
    mine, other = reconcile(), reconcile()
    theirs = other.discrepancies.first().pk
    for body in ({"ids": ["x"]}, {"ids": "1"}, {"ids": [0]}, {"ids": [theirs]},
                 {"ids": [10**15]}, {"ids": [10**20]}, {"ids": list(range(1, 20002))}, [1]):
        answer = operator_api.post(f"{URL}{mine.pk}/repair/", body, format="json")
        assert answer.status_code == 400, body
    assert not mine.discrepancies.filter(repaired_at__isnull=False).exists()
    assert not other.discrepancies.filter(repaired_at__isnull=False).exists()
    for path in ("abc/repair/", "99999/repair/", "-1/repair/", "1.5/repair/"):
        assert operator_api.post(f"{URL}{path}", {}, format="json").status_code == 404
    assert operator_api.get(f"{URL}abc/").status_code == 404


def test_an_unfinished_run_cannot_be_repaired(operator_api, archived):
    run = Reconciliation.objects.create()
    answer = operator_api.post(f"{URL}{run.pk}/repair/", {}, format="json")
    assert answer.status_code == 409 and "only a finished run" in answer.json()["detail"]
