"""The API's OpenAPI schema as schemathesis reads it, and requests through the WSGI app whose
answers are checked against it: no 5xx, a documented status, content type and body shape, and
no input the schema calls invalid taken (schemathesis' negative_data_rejection skips cases
with no generation meta: the hand-made calls below)."""
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from drf_spectacular.generators import SchemaGenerator
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from backend.accounts import tokens
from backend.accounts.models import ApiToken

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]

SCHEMA = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
SCHEMA.app = WSGIHandler()


_TOKENS = {}  # a user's token, made once per test (the table is rolled back after each)


def token_headers(user):
    """The Authorization header of a user (none for the anonymous caller)."""
    if user is None:
        return {}
    token = _TOKENS.get(user.pk)
    if token is None or not ApiToken.objects.filter(key_hash=tokens.digest(token)).exists():
        token = _TOKENS[user.pk] = tokens.issue(user, "contract")[1]
    return {"Authorization": f"Token {token}"}


def call(user, method, path, expect, *, path_parameters=None, query=None, body=None,
         headers=None):
    """Call one operation as `user` and check the answer against the schema; the response."""
    kwargs = {"path_parameters": path_parameters or {}, "query": query or {}}
    if body is not None:
        kwargs["body"] = body
        kwargs["media_type"] = "application/json"
    case = SCHEMA[path][method.upper()].Case(**kwargs)
    response = case.call_and_validate(headers={**token_headers(user), **(headers or {})},
                                      checks=CHECKS)
    assert response.status_code == expect, response.content[:500]
    return response
