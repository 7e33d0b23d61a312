"""Operators' sign-in rules (Configuration) and those from the environment, hostile input to
their API, and the migration that turned DRF's clear tokens into hashed personal ones."""
import hashlib
import importlib

import pytest
from django.apps import apps
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from backend.accounts import oidc
from backend.accounts.models import ApiToken, AuditEvent, Provider, SignInRule
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_operators_add_and_remove_rules_with_an_audit_record(operator_api):
    Provider.objects.create(name="MODAPS")
    made = operator_api.post("/api/v1/config/sign-in-rules/", {
        "value": "modis-team", "role": "provider", "provider": "MODAPS", "reason": "MODIS"},
        format="json")
    assert made.status_code == 201, made.content
    assert made.json() == {"id": made.json()["id"], "claim": "groups", "value": "modis-team",
                           "role": "provider", "provider": "MODAPS"}
    assert operator_api.get("/api/v1/config/sign-in-rules/").json() == [made.json()]
    url = f"/api/v1/config/sign-in-rules/{made.json()['id']}/"
    assert operator_api.delete(url).status_code == 204
    assert operator_api.delete(url).status_code == 404
    assert list(AuditEvent.objects.filter(target_type="sign-in-rule")
                .values_list("action", flat=True).order_by("id")) == ["create", "delete"]


@pytest.mark.parametrize("body", [
    {"value": "x", "role": "root"}, {"value": "x", "role": "user", "provider": "NOPE"},
    {"role": "user"}, {"value": "x" * 201, "role": "user"}, {"value": ["x"], "role": "user"},
    {"value": "x", "role": "user", "claim": "c" * 101},
])
def test_hostile_rules_are_400_and_make_nothing(operator_api, body):
    answer = operator_api.post("/api/v1/config/sign-in-rules/", body, format="json")
    assert answer.status_code == 400, answer.content
    assert not SignInRule.objects.exists()


def test_rules_are_for_operators_only(user_api):
    assert user_api.get("/api/v1/config/sign-in-rules/").status_code == 403
    assert APIClient().get("/api/v1/config/sign-in-rules/").status_code == 401
    assert user_api.delete("/api/v1/config/sign-in-rules/abc/").status_code == 404


def test_the_most_capable_matching_rule_wins_and_env_rules_count(settings):
    modaps = Provider.objects.create(name="MODAPS")
    settings.GRANARY_OIDC = {**settings.GRANARY_OIDC, "groups_claim": "groups",
                             "role_rules": "ops=operator, team=provider:MODAPS, bad=root"}
    SignInRule.objects.create(claim="dept", value="science", role="provider")
    user = UserFactory(role="user")
    oidc.apply_rules(user, {"groups": ["team"], "dept": "science"})
    assert sorted(user.groups.values_list("name", flat=True)) == ["provider"]
    assert list(modaps.members.all()) == [user]
    oidc.apply_rules(user, {"groups": ["team", "ops"]})
    assert sorted(user.groups.values_list("name", flat=True)) == ["operator"] and user.is_staff
    oidc.apply_rules(user, {"groups": ["bad"]})
    assert sorted(user.groups.values_list("name", flat=True)) == ["user"] and not user.is_staff


def test_the_migration_keeps_old_tokens_working_as_hashes():
    migration = importlib.import_module("backend.accounts.migrations.0004_oidc_tokens")
    old = Token.objects.create(user=UserFactory())
    key = old.key
    migration.hash_old_tokens(apps, None)
    assert not Token.objects.exists()
    row = ApiToken.objects.get()
    assert row.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert row.scopes == ["read", "order", "ingest", "operate"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/v1/me/").json()["username"] == row.user.username
