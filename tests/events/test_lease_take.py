"""The one lease/claim helper (backend.leases): a conditional update that one of two takers
wins, free again once the lease runs out; a claim stamped at its start is stale after its
time. Times are given, never read off the clock."""
from datetime import UTC, datetime, timedelta

import pytest

from backend import leases
from backend.events.models import Endpoint
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


def test_one_of_two_takers_wins_and_the_lease_frees_when_it_runs_out():
    endpoint = Endpoint.objects.create(user=UserFactory(), kind="email")
    rows = Endpoint.objects.filter(pk=endpoint.pk)
    assert leases.take(rows, 30, T0, field="lane_until") == 1
    assert leases.take(rows, 30, T0 + timedelta(seconds=29), field="lane_until") == 0
    endpoint.refresh_from_db()
    assert endpoint.lane_until == T0 + timedelta(seconds=30)
    assert leases.take(rows, 30, T0 + timedelta(seconds=31), field="lane_until",
                       name="taken again") == 1
    endpoint.refresh_from_db()
    assert endpoint.name == "taken again"


def test_a_claim_stamped_at_its_start_is_stale_after_its_time():
    endpoint = Endpoint.objects.create(user=UserFactory(), kind="email", lane_until=T0)
    held = Endpoint.objects.filter(leases.stale("lane_until", 60, T0 + timedelta(seconds=59)))
    assert not held.exists()
    assert Endpoint.objects.filter(
        leases.stale("lane_until", 60, T0 + timedelta(seconds=61))).get() == endpoint
