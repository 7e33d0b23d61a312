"""The events benchmark at a small size, on PostgreSQL (its lanes write from many processes),
with its real events worker on the test database: every healthy endpoint receives every
granule once with a valid signature, the dead one's deliveries all end dead, and with RabbitMQ
the AMQP consumer gets each granule's events in the order they were emitted. The expected
counts come from the options, not from the bench."""
import json

import pytest
from celery import current_app
from django.conf import settings as django_settings
from django.core.management import call_command
from django.db import connection
from kombu import pools as kombu_pools

from tests.events.receiver import free_ports
from tests.workers import database_url


@pytest.fixture
def restored(monkeypatch):
    """The bench sets the events settings its endpoints are checked against, as its own
    process may; here they come back after the test. The broker connections earlier tests
    pooled in this process (kombu's pools, Celery's among them) may have been closed by the
    broker since: the bench starts with none, as its own process does."""
    kombu_pools.reset()
    current_app._after_fork()   # Celery's pools too, as in a process just started
    for name in ("GRANARY_EVENTS_ALLOWED_NETS", "GRANARY_EVENTS_TIMEOUT_S",
                 "GRANARY_EVENTS_RETRY_BASE_S", "GRANARY_EVENTS_MAX_TRIES",
                 "GRANARY_EVENTS_AMQP_URL"):
        monkeypatch.setattr(django_settings, name, getattr(django_settings, name))


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_small_run_delivers_every_event_once_to_every_healthy_endpoint(
        restored, data_root, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("bench events runs on PostgreSQL only (it says so and exits)")
    monkeypatch.setenv("DATABASE_URL", database_url())   # the worker's database: this test's
    monkeypatch.setenv("GRANARY_DATA_ROOT", str(data_root))
    port, dead_port = free_ports(2)
    granules, healthy = 40, 3
    out = data_root / "events.json"
    call_command("bench", "events", "--inner", "--granules", str(granules), "--rounds", "1",
                 "--endpoints", str(healthy), "--rate", "40", "--workers", "2", "--slow-s",
                 "1", "--port", str(port), "--dead-port", str(dead_port), "--json", str(out))
    result = json.loads(out.read_text())
    per_phase = granules // 2
    assert result["missing"] == 0 and result["bad_signatures"] == 0
    assert result["duplicates"] == 0
    # the dead endpoint is enabled for the mixed phase only: one dead letter per granule then
    assert result["dead_states"] == {"dead": per_phase}
    # every healthy endpoint got every granule; the slow one those of the mixed phase
    assert result["delivered"] >= granules * healthy + per_phase
    assert 0 < result["p95_s"]["alone"] and 0 < result["p95_s"]["mixed"]
    assert result["cpu"]["workers_ms"] > 0   # delivered by the worker processes, not inline
    if django_settings.CELERY_BROKER_URL.startswith("amqp"):
        assert result["amqp"] == {"received": granules * 2, "missing": 0, "out_of_order": 0,
                                  "duplicates": 0}
