"""The suite hashes passwords in one quick round (tests/conftest.py); what a deployment runs is
Django's deliberate default, checked here: the settings as a server loads them, and a sign-in
against a password stored by that hasher."""
import json
import os
import subprocess
import sys

import pytest
from django.conf import global_settings, settings
from django.contrib.auth.hashers import identify_hasher
from django.test import override_settings
from rest_framework.test import APIClient

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_server_hashes_passwords_with_djangos_deliberate_default():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    shown = subprocess.run(
        [sys.executable, "-c", "import json, django; from django.conf import settings; "
         "django.setup(); print(json.dumps(settings.PASSWORD_HASHERS))"],
        env=dict(env, DJANGO_SETTINGS_MODULE="backend.settings"), cwd=settings.BASE_DIR,
        capture_output=True, text=True, check=True)
    assert json.loads(shown.stdout.strip().splitlines()[-1]) == \
        global_settings.PASSWORD_HASHERS


@override_settings(PASSWORD_HASHERS=global_settings.PASSWORD_HASHERS)
def test_a_password_stored_by_the_default_hasher_signs_in():
    user = UserFactory(username="ada")
    user.set_password("correct-horse")
    user.save()
    assert identify_hasher(user.password).algorithm == "pbkdf2_sha256"
    client = APIClient()
    assert client.post("/api/v1/auth/login/",
                       {"username": "ada", "password": "wrong"}).status_code == 401
    assert client.post("/api/v1/auth/login/",
                       {"username": "ada", "password": "correct-horse"}).status_code == 200
