"""/api/health/: a probe for anyone, the detail (database, worker hosts) for operators."""
import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from backend.accounts import tokens
from backend.metrics.models import QueueHeartbeat

pytestmark = pytest.mark.django_db


@pytest.fixture
def beat():
    now = timezone.now()
    QueueHeartbeat.objects.create(queue="archive", worker="archive@node-7.example",
                                  sent_at=now, seen_at=now)


def test_anyone_learns_only_that_it_is_up(api, user_api, provider_api, beat):
    """Worker host names and queues were shown to anonymous callers (issue 34, item 18)."""
    for client in (api, user_api, provider_api):
        response = client.get("/api/health/")
        assert response.status_code == 200 and response.json() == {"status": "ok"}
        assert b"node-7" not in response.content


def test_operators_see_the_database_and_each_queue_by_session_or_token(operator_api, beat):
    token = APIClient()
    token.credentials(HTTP_AUTHORIZATION=f"Token {tokens.issue(operator_api.user, 'probe')[1]}")
    for client in (operator_api, token):
        body = client.get("/api/health/", HTTP_ACCEPT="text/html").json()
        assert body["status"] == "ok" and body["database"] in ("sqlite", "postgresql")
        assert [(q["queue"], q["worker"], q["alive"]) for q in body["queues"]] == [
            ("archive", "archive@node-7.example", True)]
