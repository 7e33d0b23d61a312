"""The throttles count in the database (the "shared" cache table), so a second process, as a
second gunicorn worker or host would, sees the first one's count."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import caches
from django.core.management import call_command
from django.db import connection
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
ANOTHER_PROCESS = """
import django
django.setup()
from django.test import Client
print(Client().post("/api/v1/auth/login/", {"username": "ana", "password": "guess"}).status_code)
"""


def database_url():
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}@{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.mark.django_db(transaction=True)
def test_the_login_throttle_counts_for_every_process(settings):
    caches["shared"].clear()
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "login": "2/min"}}
    call_command("add_user", "ana", "--role", "user", "--password", "correct-horse")
    here = Client()
    assert [here.post("/api/v1/auth/login/", {"username": "ana", "password": f"g{i}"})
            .status_code for i in range(2)] == [401, 401]
    env = {**os.environ, "DATABASE_URL": database_url(), "GRANARY_LOGIN_RATE": "2/min",
           "DJANGO_SETTINGS_MODULE": "backend.settings"}
    try:
        there = subprocess.run([sys.executable, "-c", ANOTHER_PROCESS], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=120)
        assert there.stdout.split()[-1:] == ["429"], there.stderr[-2000:]
    finally:
        caches["shared"].clear()  # a flush leaves this table alone
