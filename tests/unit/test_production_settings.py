"""Production settings refuse to start half-configured, and pass `check --deploy` when complete."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOOD = {
    "DJANGO_SETTINGS_MODULE": "backend.settings.production",
    "DJANGO_SECRET_KEY": "Qm3v-9aZk_p2R7wYt4Lx8cN1bHs6dJf0uGe5iTo3rVy7qWn2EzA",
    "DATABASE_URL": "postgres://granary:secret@db.example.org:5432/granary",
    "CELERY_BROKER_URL": "amqp://granary:secret@mq.example.org:5672/granary",
    "DJANGO_ALLOWED_HOSTS": "granary.example.org",
}


def manage(*args, **env_changes):
    env = {k: v for k, v in os.environ.items() if k not in GOOD}
    env.update(GOOD)
    env.update(env_changes)
    env = {k: v for k, v in env.items() if v is not None}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_check_deploy_lists_no_issues(tmp_path):
    result = manage("check", "--deploy", "--fail-level", "WARNING",
                    GRANARY_DATA_ROOT=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_refuses_sqlite_default_broker_and_missing_key(tmp_path):
    result = manage("check", DATABASE_URL=None, CELERY_BROKER_URL=None, DJANGO_SECRET_KEY=None,
                    GRANARY_DATA_ROOT=str(tmp_path))
    assert result.returncode != 0
    for phrase in ("DJANGO_SECRET_KEY must be set", "DATABASE_URL must point at PostgreSQL",
                   "CELERY_BROKER_URL must point at RabbitMQ"):
        assert phrase in result.stderr
