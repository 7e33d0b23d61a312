"""Single sign-on through a real OpenID provider (scripts/oidc-provider.mjs, started by the
tests): users made and matched by (issuer, subject), roles from operators' rules, state and
nonce used once, `next` kept on this site, sign-out ending the session."""
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from backend.accounts.models import ExternalIdentity, Provider, SignInRule
from tests.factories import UserFactory
from tests.oidc_provider import sign_in_at_provider

pytestmark = pytest.mark.django_db


def _rules():
    SignInRule.objects.create(claim="groups", value="granary-operators", role="operator")
    modaps = Provider.objects.create(name="MODAPS")
    SignInRule.objects.create(claim="groups", value="granary-providers", role="provider",
                              provider=modaps)


def start(client, next_path=None):
    """Granary's login redirect: the provider's authorization URL."""
    query = {"next": next_path} if next_path is not None else {}
    answer = client.get("/api/v1/auth/oidc/login/", query)
    assert answer.status_code == 302, answer.content[:300]
    return answer["Location"]


def back_to_granary(client, provider_redirect):
    parts = urlsplit(provider_redirect)
    return client.get(parts.path, QUERY_STRING=parts.query)


def sign_in(client, login, next_path=None):
    return back_to_granary(client, sign_in_at_provider(start(client, next_path), login))


def test_a_new_user_signs_in_with_the_role_its_group_maps_to(oidc):
    _rules()
    client = Client()
    answer = sign_in(client, "olga", "/console")
    assert answer.status_code == 302 and answer["Location"] == "/console"
    me = client.get("/api/v1/me/").json()
    assert me["username"] == "olga" and me["role"] == "operator"
    identity = ExternalIdentity.objects.get(subject="olga")
    assert identity.issuer == oidc.issuer and identity.user.username == "olga"
    assert not identity.user.has_usable_password()

    provider_user = Client()
    sign_in(provider_user, "pat")
    me = provider_user.get("/api/v1/me/").json()
    assert me["role"] == "provider" and me["providers"] == ["MODAPS"]
    nobody = Client()
    sign_in(nobody, "someone-new")
    assert nobody.get("/api/v1/me/").json()["role"] == "user"


def test_the_second_sign_in_finds_the_same_user_and_rules_follow_the_groups(oidc):
    client = Client()
    sign_in(client, "olga")
    assert client.get("/api/v1/me/").json()["role"] == "user"  # no rule yet
    _rules()
    again = Client()
    sign_in(again, "olga")
    assert again.get("/api/v1/me/").json()["role"] == "operator"
    assert ExternalIdentity.objects.filter(subject="olga").count() == 1
    assert get_user_model().objects.filter(username__startswith="olga").count() == 1


def test_a_local_user_with_the_same_email_is_not_taken_over(oidc):
    local = UserFactory(username="olga", email="olga@idp.example", role="operator")
    client = Client()
    sign_in(client, "olga")
    me = client.get("/api/v1/me/").json()
    assert me["username"] != "olga" and me["role"] == "user"
    assert ExternalIdentity.objects.get(subject="olga").user != local


def test_a_replayed_callback_is_refused(oidc):
    client = Client()
    back = sign_in_at_provider(start(client), "alice")
    assert back_to_granary(client, back).status_code == 302
    client.post("/api/v1/auth/logout/")
    replay = back_to_granary(client, back)
    assert replay.status_code == 401 and b"Sign-in failed" in replay.content
    assert client.get("/api/v1/me/").json()["authenticated"] is False


def test_a_callback_from_another_browser_is_refused(oidc):
    victim = Client()
    back = sign_in_at_provider(start(Client()), "alice")  # the attacker's own sign-in
    answer = back_to_granary(victim, back)
    assert answer.status_code == 401
    assert victim.get("/api/v1/me/").json()["authenticated"] is False


def test_an_answer_delivered_with_another_sign_ins_state_is_refused(oidc):
    """Two sign-ins started in one browser: the provider's code for the first, delivered with
    the second's state, is bound to the first's PKCE challenge (and its ID token to the first's
    nonce): the token endpoint refuses the second's verifier."""
    client = Client()
    first = start(client)
    second = start(client)
    back = sign_in_at_provider(first, "alice")
    second_state = dict(p.split("=", 1) for p in urlsplit(second).query.split("&"))["state"]
    swapped = back.replace(dict(p.split("=", 1) for p in urlsplit(back).query.split("&"))["state"],
                           second_state)
    answer = back_to_granary(client, swapped)
    assert answer.status_code == 401
    assert client.get("/api/v1/me/").json()["authenticated"] is False


@pytest.mark.parametrize("wanted", ["https://evil.example/", "//evil.example/x",
                                    "/\\evil.example", "javascript:alert(1)",
                                    "http://testserver.evil.example/"])
def test_next_never_leaves_the_site(oidc, wanted):
    client = Client()
    answer = sign_in(client, "alice", wanted)
    assert answer.status_code == 302 and answer["Location"] == "/"


def test_an_error_from_the_provider_is_a_clear_page(oidc):
    client = Client()
    start(client)
    answer = client.get("/api/v1/auth/oidc/callback/",
                        {"error": "access_denied", "state": "x"})
    assert answer.status_code == 401 and b"Sign-in failed" in answer.content


def test_sign_out_ends_the_session(oidc):
    client = Client()
    sign_in(client, "alice")
    assert client.get("/api/v1/me/").json()["authenticated"] is True
    assert client.post("/api/v1/auth/logout/").status_code == 204
    assert client.get("/api/v1/me/").json()["authenticated"] is False


def test_a_deactivated_user_cannot_sign_in(oidc):
    client = Client()
    sign_in(client, "alice")
    get_user_model().objects.filter(username="alice").update(is_active=False)
    again = Client()
    assert sign_in(again, "alice").status_code == 403
    assert again.get("/api/v1/me/").json()["authenticated"] is False


def test_the_login_page_learns_of_the_provider(oidc, api):
    assert api.get("/api/v1/auth/methods/").json() == {
        "local": True, "oidc": {"name": "Test IdP", "login_url": "/api/v1/auth/oidc/login/"}}


def test_without_a_provider_only_local_accounts(api, settings):
    settings.GRANARY_OIDC = {**settings.GRANARY_OIDC, "issuer": "", "client_id": ""}
    assert api.get("/api/v1/auth/methods/").json() == {"local": True, "oidc": None}
    assert Client().get("/api/v1/auth/oidc/login/").status_code == 404
    assert Client().get("/api/v1/auth/oidc/callback/?code=x&state=y").status_code == 404
