"""Input a hostile or careless client sends gets a 4xx with a JSON sentence, never a 500 or an
HTML page: ids that are no number, bodies too large or nested too deep."""
import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("method", "path"), [
    ("get", "/api/v1/orders/abc/"),
    ("get", "/api/v1/orders/abc/links/"),
    ("get", "/api/v1/orders/abc/script/"),
    ("post", "/api/v1/orders/abc/cancel/"),
    ("get", "/api/v1/subscriptions/abc/"),
    ("patch", "/api/v1/subscriptions/abc/"),
    ("delete", "/api/v1/subscriptions/abc/"),
    ("get", "/api/v1/subscriptions/null,null/deliveries/"),
    ("get", "/api/v1/destinations/1.5/"),
    ("get", "/api/v1/granules/abc/"),
    ("get", "/api/v1/archive/requests/abc/"),
    ("get", "/api/v1/archive/buckets/abc/"),
    ("get", "/api/v1/archive/buckets/board/1/"),
    ("get", "/api/v1/cart/abc/"),
    ("get", "/api/v1/config/users/abc/"),
    ("patch", "/api/v1/config/users/1.5/"),
    ("get", f"/api/v1/config/users/{2**70}/"),
    ("get", "/api/v1/ingest/requests/abc/"),
    ("get", "/api/v1/console/bulk/abc/"),
    ("get", "/api/v1/console/bulk/abc/items/"),
    ("post", "/api/v1/console/bulk/abc/cancel/"),
    ("get", "/api/v1/console/granules/abc/"),
    ("post", "/api/v1/console/granules/abc/withdraw/"),
    ("post", f"/api/v1/console/granules/{2**70}/delete/"),
    # numbers no 64-bit key column holds (SQLite raised OverflowError, PostgreSQL a DataError)
    ("delete", f"/api/v1/cart/{2**70}/"),
    ("get", f"/api/v1/orders/{2**70}/"),
    ("get", f"/api/v1/archive/files/{2**64}/"),
    ("get", f"/api/v1/files/{2**64}/download"),
])
@pytest.mark.parametrize("who", ["user_api", "operator_api"])
def test_an_id_that_is_no_number_is_a_json_404(request, who, method, path):
    client = request.getfixturevalue(who)
    answer = getattr(client, method)(path, {"active": False}, format="json")
    assert answer.status_code == 404, answer.content
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["detail"]


def test_unknown_api_path_is_a_json_404(api):
    answer = api.get("/api/v1/nothing-here/")
    assert answer.status_code == 404 and answer.json()["detail"]


def test_web_app_paths_keep_the_html_404_handling(client, settings, tmp_path):
    (tmp_path / "index.html").write_text("<!doctype html><div id=root></div>")
    settings.FRONTEND_DIST = tmp_path
    assert client.get("/admin/nothing-here/").status_code in (302, 404)


def test_json_nested_100000_levels_deep_is_a_json_400(user_api):
    body = "[" * 100_000 + "]" * 100_000
    answer = user_api.post("/api/v1/cart/", body, content_type="application/json")
    assert answer.status_code == 400 and answer["Content-Type"] == "application/json"
    assert "nested deeper than 32 levels" in answer.json()["detail"]


def test_stac_search_body_nested_too_deep_is_a_json_400(api):
    body = '{"intersects": ' + "[" * 5000 + "]" * 5000 + "}"
    answer = api.post("/stac/search", body, content_type="application/json")
    assert answer.status_code == 400 and "nested deeper than" in answer.json()["detail"]


def test_body_over_the_limit_is_a_json_413(user_api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    answer = user_api.post("/api/v1/cart/", {"granules": list(range(1000))}, format="json")
    assert answer.status_code == 413
    assert "larger than 1000 bytes" in answer.json()["detail"]


@pytest.mark.parametrize(("path", "body"), [
    ("/api/v1/cart/", {"granules": [2**70]}),
    ("/api/v1/orders/", {"granules": [1], "destination": 2**64}),
    ("/api/v1/archive/cache/pin/", {"files": [2**63]}),
    ("/api/v1/archive/requests/bulk/", {"action": "cancel", "ids": [2**63]}),
    ("/api/v1/console/dead-letter/replay/", {"ids": {"archive": [2**63]}}),
])
def test_an_id_in_a_body_beyond_64_bits_is_a_400(operator_api, path, body):
    answer = operator_api.post(path, body, format="json")
    assert answer.status_code == 400, answer.content
    assert "less than or equal to 9223372036854775807" in answer.json()["detail"]


@pytest.mark.parametrize(("path", "body", "content_type"), [
    ("/api/v1/auth/login/", "username=" + "x" * 3000, "application/x-www-form-urlencoded"),
    ("/api/v1/ingest/pdrs/?name=A.PDR", "ORIGINATING_SYSTEM = " + "x" * 3000,
     "text/plain"),
])
def test_form_and_text_bodies_over_the_limit_are_a_json_413(operator_api, settings, path, body,
                                                            content_type):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    answer = operator_api.generic("POST", path, body, content_type=content_type)
    assert answer.status_code == 413, answer.content
    assert "larger than 1000 bytes" in answer.json()["detail"]


@pytest.mark.parametrize(("path", "body"), [
    ("/api/v1/console/failures/groups/retry/", '{"key": ' + "[" * 5000 + "]" * 5000 + "}"),
    ("/api/v1/console/dead-letter/replay/", '{"ids": ' + "{\"a\": " * 40 + "1" + "}" * 41),
])
def test_console_bodies_nested_too_deep_are_a_json_400(operator_api, path, body):
    answer = operator_api.post(path, body, content_type="application/json")
    assert answer.status_code == 400 and "nested deeper than" in answer.json()["detail"]


def test_a_nul_character_where_a_name_is_looked_up_is_a_400(operator_api):
    """PostgreSQL text holds no NUL: the silo lookup raised DataError, a 500 (schemathesis)."""
    response = operator_api.post("/api/v1/archive/volumes/label/",
                                 {"silo": "silo\x001", "media": "LTO-9", "count": 1,
                                  "prefix": "G"})
    assert response.status_code == 400
    assert response.json()["detail"]


def test_an_instant_with_an_offset_postgresql_refuses_is_compared_in_utc(operator_api):
    """-23:07 is a valid ISO 8601 offset beyond PostgreSQL's +-15:59 (a 500, schemathesis):
    the audit log compares the instant in UTC, so it finds what is after it."""
    from backend.accounts import audit

    audit.record(None, "update", "collection", 1)
    after = operator_api.get("/api/v1/config/audit/", {"since": "0287-09-19T20:24:58.527-23:07"})
    before = operator_api.get("/api/v1/config/audit/", {"until": "0287-09-19T20:24:58-23:07"})
    assert after.status_code == before.status_code == 200
    assert len(after.json()["results"]) == 1
    assert before.json()["results"] == []
