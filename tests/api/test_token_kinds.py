"""Token kinds across the whole API: every route that changes something refuses an operator's
read-only personal token with a 403 that names the scope (before the view does any work), and
every route answers an operator's provider JWT, its personal token with every scope and its
session alike. Routes come from the role matrix's walk of the URL conf."""
import pytest
from django.urls import NoReverseMatch, reverse
from rest_framework.test import APIClient

from backend.accounts import scopes as scope_policy
from backend.accounts import tokens
from backend.accounts.models import SignInRule
from tests.api.test_bearer_tokens import claims, signed
from tests.api.test_role_matrix import FIXED_PATHS, routes
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

DUMMY = {"path": "in/x.dat", "provider": "MODAPS", "key": "X.1", "label": "V00001",
         "name": "d1", "item_id": "x", "collection_id": "X.1"}


def _url(name, pattern):
    """The route with dummy ids: numbers, or a UUID where the route takes one (stage requests)."""
    if name in FIXED_PATHS:
        return FIXED_PATHS[name]
    for ident in (1, "00000000-0000-4000-8000-000000000001"):
        kwargs = {key: DUMMY.get(key, ident) for key in pattern.pattern.regex.groupindex}
        try:
            return reverse(name, kwargs=kwargs)
        except NoReverseMatch:
            continue
    raise NoReverseMatch(name)


def _drf(pattern):
    callback = pattern.callback
    return getattr(callback, "cls", None) is not None or getattr(callback, "actions", None)


def test_a_read_only_token_changes_nothing_anywhere():
    operator = UserFactory(role="operator")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {tokens.issue(operator, 'ro', ['read'])[1]}")
    checked = 0
    for (name, method), pattern in sorted(routes().items()):
        url = _url(name, pattern)
        if not _drf(pattern) or scope_policy.needed(method, url) == scope_policy.READ:
            continue
        answer = client.generic(method, url, "{}", content_type="application/json")
        assert answer.status_code == 403, (name, method, answer.status_code)
        assert "scopes (read)" in answer.json()["detail"], (name, method)
        checked += 1
    assert checked > 40  # the walk found the API's changes, not a handful


@pytest.mark.parametrize("path", ["/api/v1/me/", "/api/v1/archive/queues/",
                                  "/api/v1/config/users/", "/api/v1/orders/"])
def test_every_kind_of_credential_answers_alike(oidc, path):
    SignInRule.objects.create(value="granary-operators", role="operator")
    jwt_client = APIClient()
    jwt_client.credentials(HTTP_AUTHORIZATION="Bearer " + signed(
        oidc, claims(oidc, sub="olga", groups=["granary-operators"])))
    assert jwt_client.get("/api/v1/me/").json()["role"] == "operator"
    operator = UserFactory(role="operator")
    personal = APIClient()
    personal.credentials(HTTP_AUTHORIZATION=f"Token {tokens.issue(operator, 'all')[1]}")
    session = APIClient()
    session.force_authenticate(operator)
    answers = {kind: c.get(path).status_code for kind, c in
               (("jwt", jwt_client), ("personal", personal), ("session", session))}
    assert set(answers.values()) == {200}, answers
