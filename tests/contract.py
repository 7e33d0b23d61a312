"""The API's OpenAPI schema as schemathesis reads it, and requests through the WSGI app whose
answers are checked against it: no 5xx, a documented status, content type and body shape, and
no input the schema calls invalid taken (schemathesis' negative_data_rejection skips cases
with no generation meta: the hand-made calls below)."""
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from drf_spectacular.generators import SchemaGenerator
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]

SCHEMA = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
SCHEMA.app = WSGIHandler()


def token_headers(user):
    """The Authorization header of a user (none for the anonymous caller)."""
    if user is None:
        return {}
    token, _ = Token.objects.get_or_create(user=user)
    return {"Authorization": f"Token {token.key}"}


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
