"""Input the schema calls invalid is refused with a 400, not quietly read as something else
(schemathesis' negative_data_rejection found each: a 200 for input that breaks the schema)."""
import pytest

from tests.contract import SCHEMA

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", ["/api/v1/archive/volumes/", "/api/v1/archive/requests/",
                                 "/api/v1/config/audit/", "/api/v1/granules/"])
@pytest.mark.parametrize("limit", ["null", "", "2.5", "false"])
def test_a_limit_that_is_no_whole_number_is_refused(operator_api, url, limit):
    """DRF's cursor pages fell back to 50 rows for `limit=null`; the granule list took an
    empty one for none."""
    answer = operator_api.get(url, {"limit": limit})
    assert answer.status_code == 400, answer.content[:200]
    assert list(answer.json()["errors"]) == ["limit"]


@pytest.mark.parametrize(("url", "name"), [
    ("/api/v1/config/audit/", "since"), ("/api/v1/config/audit/", "until"),
    ("/api/v1/completeness/worst/", "limit"), ("/api/v1/orders/", "delivery"),
    ("/api/v1/orders/", "state"), ("/api/v1/archive/volumes/", "state"),
    ("/api/v1/granules/timeline/", "bucket"), ("/api/v1/metrics/daily/", "days"),
    ("/api/v1/collections/", "access"),
    ("/api/v1/console/failures/groups/", "since"), ("/api/v1/console/failures/groups/", "kind"),
    ("/api/v1/console/dead-letter/", "collection"), ("/api/v1/console/dead-letter/", "since"),
])
def test_an_empty_filter_is_refused_not_read_as_left_out(operator_api, url, name):
    assert operator_api.get(url).status_code == 200
    answer = operator_api.get(url, {name: ""})
    assert answer.status_code == 400 and name in answer.json()["errors"]


@pytest.mark.parametrize("value", [False, True])
def test_a_target_is_a_number_not_a_boolean(operator_api, value):
    answer = operator_api.put("/api/v1/metrics/targets/", {"ingest": value}, format="json")
    assert answer.status_code == 400 and "ingest" in answer.json()["errors"]


def test_bodies_are_documented_as_json_only_where_the_view_takes_the_default_parsers():
    """The form parsers (kept for the browsable API) read `"repair": "0"` as false and a JSON
    part of a multipart body as a string: a generated client must not be offered them."""
    media = {(op.method.upper(), op.path): sorted(b.media_type for b in op.body)
             for op in (r.ok() for r in SCHEMA.get_all_operations()) if op.body}
    assert media[("POST", "/api/v1/archive/reconciliation/")] == ["application/json"]
    assert media[("POST", "/api/v1/cart/matching/")] == ["application/json"]
    assert media[("POST", "/api/v1/console/bulk/")] == ["application/json",
                                                        "multipart/form-data"]
    assert media[("POST", "/api/v1/shapes/")] == ["multipart/form-data"]


@pytest.mark.parametrize("url", ["/api/v1/granules/timeline/", "/api/v1/granules/facets/",
                                 "/api/v1/granules/search/"])
@pytest.mark.parametrize("name", ["end", "start", "q"])
def test_an_empty_filter_in_a_search_body_is_refused(operator_api, url, name):
    """A POST search's `"end": ""` searched as if no end were given."""
    assert operator_api.post(url, {}, format="json").status_code == 200
    answer = operator_api.post(url, {name: ""}, format="json")
    assert answer.status_code == 400 and name in answer.json()["errors"]


@pytest.mark.parametrize(("url", "body", "name"), [
    ("/api/v1/config/providers/", {"name": "p1", "title": 0}, "title"),
    ("/api/v1/config/providers/", {"name": "p1", "reason": 0}, "reason"),
    ("/api/v1/config/users/", {"username": "u1", "role": "user", "active": 0}, "active"),
    ("/api/v1/config/users/", {"username": "u1", "role": "user", "reason": 1.5}, "reason"),
    ("/api/v1/destinations/", {"name": "d", "kind": "folder", "path": 0}, "path"),
    ("/api/v1/archive/reconciliation/", {"full": 1}, "full"),
    ("/api/v1/archive/reconciliation/", {"repair": 0}, "repair"),
])
def test_a_number_is_no_text_and_no_truth_value(operator_api, url, body, name):
    """DRF stored `"title": 0` as "0" and read `"full": 1` as true: the schema says string and
    boolean, and JSON has both."""
    answer = operator_api.post(url, body, format="json")
    assert answer.status_code == 400, answer.content[:300]
    assert name in answer.json()["errors"]


def test_text_and_truth_values_as_json_writes_them_are_taken(operator_api):
    answer = operator_api.post("/api/v1/config/users/",
                               {"username": "u2", "role": "user", "active": False,
                                "reason": "a new colleague"}, format="json")
    assert answer.status_code == 201, answer.content[:300]
    assert answer.json()["active"] is False
