"""While the database restarts, the API asks clients to wait (503 + Retry-After) instead of
answering 500: found by the chaos run, which met 500s during its PostgreSQL restart."""
import json
from copy import deepcopy

import pytest
from django.db import OperationalError, connections

from backend.views import server_error


def _unreachable_database_error():
    """A real error from Django's own connection code, to a database that is not there: a
    closed port for PostgreSQL, a folder that does not exist for SQLite."""
    settings = deepcopy(connections["default"].settings_dict)
    if settings["ENGINE"].endswith("sqlite3"):
        settings["NAME"] = "/nonexistent-granary-folder/db.sqlite3"
    else:
        settings.update(HOST="127.0.0.1", PORT="1")
        settings.setdefault("OPTIONS", {})["connect_timeout"] = 2
    away = connections["default"].__class__(settings, alias="away")
    try:
        away.ensure_connection()
    except OperationalError as exc:
        return exc
    finally:
        away.close()
    raise AssertionError("connecting to nowhere succeeded")


@pytest.mark.django_db
def test_the_database_being_away_is_a_503_with_retry_after(rf):
    error = _unreachable_database_error()
    try:
        raise error
    except OperationalError:
        response = server_error(rf.get("/api/v1/granules/"))
    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0
    assert "database is unavailable" in json.loads(response.content)["detail"]


@pytest.mark.parametrize("path", ["/api/v1/granules/", "/search"])
def test_any_other_unhandled_error_is_still_a_500(rf, path):
    try:
        raise RuntimeError("a bug")
    except RuntimeError:
        response = server_error(rf.get(path))
    assert response.status_code == 500
