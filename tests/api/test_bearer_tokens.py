"""JWT access tokens from the configured OpenID provider, accepted wherever a Granary token is,
and the hostile ones refused with a 401. The good token comes from the real provider's code
flow; the hostile ones are signed here with the provider's own key (the test made it) or
built by hand, so only the claim or header under test is wrong."""
import base64
import hashlib
import hmac
import json
import time

import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey
from rest_framework.test import APIClient

from backend.accounts.models import Provider, SignInRule
from tests.oidc_provider import AUDIENCE, provider_access_token

pytestmark = pytest.mark.django_db


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def me(token, keyword="Bearer"):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"{keyword} {token}")
    return client.get("/api/v1/me/")


def claims(provider, **changes):
    now = int(time.time())
    body = {"iss": provider.issuer, "aud": AUDIENCE, "sub": "alice", "iat": now,
            "exp": now + 600, "groups": ["granary-users"]}
    body.update(changes)
    return {k: v for k, v in body.items() if v is not None}


def signed(provider, body, key=None, kid="test-key"):
    return jwt.encode({"alg": "RS256", "kid": kid}, body, key or provider.key)


def test_the_providers_access_token_works_with_the_roles_its_groups_map_to(oidc):
    SignInRule.objects.create(value="granary-operators", role="operator")
    token = provider_access_token(oidc, "olga")
    for keyword in ("Bearer", "Token"):
        answer = me(token, keyword)
        assert answer.status_code == 200, answer.content
        assert answer.json()["username"] == "olga" and answer.json()["role"] == "operator"
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert client.get("/api/v1/archive/queues/").status_code == 200


def test_the_provider_api_takes_the_providers_token_for_a_provider_group(oidc):
    """pat is in granary-providers, which a rule maps to the provider role and MODAPS."""
    modaps = Provider.objects.create(name="MODAPS")
    SignInRule.objects.create(value="granary-providers", role="provider", provider=modaps)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {provider_access_token(oidc, 'pat')}")
    assert client.get("/api/v1/ingest/requests/").status_code == 200
    refused = client.post("/api/v1/ingest/requests/", {"provider": "OTHER", "granules": []},
                          format="json")
    assert refused.status_code in (400, 403, 404)
    assert client.get("/api/v1/me/").json()["providers"] == ["MODAPS"]


def test_a_token_signed_with_the_providers_key_is_taken(oidc):
    """The control for the hostile cases below: only their one change makes them fail."""
    answer = me(signed(oidc, claims(oidc)))
    assert answer.status_code == 200 and answer.json()["username"] == "alice"
    # an audience list (Keycloak's way) counts when Granary's audience is among them
    assert me(signed(oidc, claims(oidc, aud=["account", AUDIENCE]))).status_code == 200
    assert me(signed(oidc, claims(oidc, aud=["account", "urn:other"]))).status_code == 401


@pytest.mark.parametrize(("change", "reason"), [
    ({"exp": int(time.time()) - 3600}, "expired"),
    ({"nbf": int(time.time()) + 3600}, "not yet valid"),
    ({"aud": "urn:someone-else"}, "'aud'"),
    ({"iss": "http://127.0.0.1:1/"}, "'iss'"),
    ({"exp": None}, "'exp'"),
    ({"sub": None}, "'sub'"),
], ids=["expired", "not-yet-valid", "wrong-audience", "wrong-issuer", "no-expiry", "no-subject"])
def test_a_token_with_a_wrong_claim_is_401(oidc, change, reason):
    answer = me(signed(oidc, claims(oidc, **change)))
    assert answer.status_code == 401, answer.content
    assert answer["WWW-Authenticate"] == "Token" and reason in answer.json()["detail"]


def test_alg_none_is_401(oidc):
    header = b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    token = f"{header}.{b64(json.dumps(claims(oidc)).encode())}."
    assert me(token).status_code == 401


def test_hs256_signed_with_the_public_key_is_401(oidc):
    """The classic confusion: the public key, known to all, used as an HMAC secret."""
    public_pem = oidc.key.as_pem(private=False)
    header = b64(json.dumps({"alg": "HS256", "kid": "test-key"}).encode())
    payload = b64(json.dumps(claims(oidc)).encode())
    mac = hmac.new(public_pem, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    assert me(f"{header}.{payload}.{b64(mac)}").status_code == 401


def test_an_unknown_kid_or_a_stranger_key_is_401(oidc):
    stranger = RSAKey.generate_key(2048, private=True)
    assert me(signed(oidc, claims(oidc), key=stranger, kid="other-key")).status_code == 401
    assert me(signed(oidc, claims(oidc), key=stranger)).status_code == 401


def test_tampered_claims_are_401(oidc):
    token = provider_access_token(oidc, "alice")
    header, payload, signature = token.split(".")
    body = json.loads(base64.urlsafe_b64decode(payload + "=="))
    body["groups"] = ["granary-operators"]
    forged = f"{header}.{b64(json.dumps(body).encode())}.{signature}"
    assert me(forged).status_code == 401
    assert me(token).status_code == 200


@pytest.mark.parametrize("token", ["a.b.c", "..", "e30.e30.", "x" * 9000, "ab\u00e9.c.d"])
def test_garbage_is_401_never_500(oidc, token):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}".encode().decode("latin-1"))
    assert client.get("/api/v1/me/").status_code == 401


def test_without_a_provider_a_jwt_is_401(settings, oidc_provider):
    settings.GRANARY_OIDC = {**oidc_provider.settings(), "issuer": "", "client_id": ""}
    assert me(signed(oidc_provider, claims(oidc_provider))).status_code == 401
