"""The events benchmark at a small size, on PostgreSQL (its lanes write from many threads):
every healthy endpoint receives every granule once with a valid signature, the dead one's
deliveries all end dead, and with RabbitMQ the AMQP consumer gets each granule's events in
the order they were emitted. The expected counts come from the options, not the bench."""
import pytest
from celery import current_app
from django.conf import settings as django_settings
from django.db import connection

from backend import nudges
from bench import events
from tests.events.receiver import free_ports

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def restored(monkeypatch):
    """The bench takes over the nudges, the broker URL and the events settings, as its own
    process may; here they come back after the test."""
    monkeypatch.setattr(nudges, "send", nudges.send)
    monkeypatch.setattr(current_app.conf, "broker_url", current_app.conf.broker_url)
    for name in ("GRANARY_EVENTS_ALLOWED_NETS", "GRANARY_EVENTS_TIMEOUT_S",
                 "GRANARY_EVENTS_RETRY_BASE_S", "GRANARY_EVENTS_MAX_TRIES",
                 "GRANARY_EVENTS_AMQP_URL"):
        monkeypatch.setattr(django_settings, name, getattr(django_settings, name, None),
                            raising=False)


def test_a_small_run_delivers_every_event_once_to_every_healthy_endpoint(restored):
    if connection.vendor != "postgresql":
        pytest.skip("bench events runs on PostgreSQL only (it says so and exits)")
    port, dead_port = free_ports(2)
    granules, healthy = 40, 3
    result = events.run({"granules": granules, "rounds": 1, "endpoints": healthy, "rate": 40,
                         "threads": 4, "slow_s": 1, "port": port, "dead_port": dead_port})
    per_phase = granules // 2
    assert result["missing"] == 0 and result["bad_signatures"] == 0
    assert result["duplicates"] == 0
    # the dead endpoint is enabled for the mixed phase only: one dead letter per granule then
    assert result["dead_states"] == {"dead": per_phase}
    assert result["claims"]["sent"] >= granules * healthy
    assert result["p95_s"]["alone"] > 0 and result["p95_s"]["mixed"] > 0
    if django_settings.CELERY_BROKER_URL.startswith("amqp"):
        assert result["amqp"] == {"received": granules * 2, "missing": 0, "out_of_order": 0,
                                  "duplicates": 0}
