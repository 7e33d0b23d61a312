"""The API contract, fuzzed: schemathesis generates requests from the OpenAPI schema for every
operation, as an operator, a user and an anonymous client, and each answer must be no 5xx and
exactly what the schema says (a documented status, content type and body shape).

The examples are bounded and derandomized (a fixed seed), so `make test` sends the same
requests every time and a failure replays. It runs once per `make test`, on PostgreSQL when
given: the stricter of the two databases, and the longest test of both passes (172 s on SQLite);
what only SQLite refuses (a 64-bit overflow) is sent on both by test_no_5xx_from_input.py."""
import pytest
from hypothesis import HealthCheck, Phase, settings

from backend.accounts import roles
from tests.contract import CHECKS, SCHEMA, token_headers
from tests.factories import UserFactory


@pytest.fixture
def auth_headers(request, db, data_root, wsgi_keeps_the_test_connection, settings):
    # every generated login hashes a password: the fast hasher keeps the run short
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    role = request.param
    return token_headers(UserFactory(role=role) if role else None)


@pytest.mark.once
@pytest.mark.parametrize(
    "auth_headers", [roles.OPERATOR, roles.USER, None], indirect=True,
    ids=["operator", "user", "anonymous"],
)
@SCHEMA.parametrize()
@settings(
    max_examples=10, derandomize=True, deadline=None, database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_api_answers_as_its_schema_says(case, auth_headers):
    case.call_and_validate(headers=auth_headers, checks=CHECKS)
