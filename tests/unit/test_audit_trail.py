"""The audit trail keeps who did what, even after the actor's account is gone."""
import pytest

from backend.accounts import audit, roles
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_change_is_recorded_with_its_actor_and_outlives_the_account():
    operator = UserFactory(role=roles.OPERATOR, username="ops1")
    audit.record(operator, "withdraw", "granule", 42, label="MOD.061:G1", reason="bad calibration")
    operator.delete()

    [event] = audit.events_for("granule", "42")
    assert (event.actor, event.actor_name, event.action) == (None, "ops1", "withdraw")
    assert event.reason == "bad calibration"
    assert event.target_label == "MOD.061:G1"


def test_the_system_is_named_when_no_user_acted():
    audit.record(None, "repack", "volume", "V00001")
    assert audit.events_for("volume", "V00001").get().actor_name == "system"


def test_events_are_kept_per_target_newest_first():
    audit.record(None, "withdraw", "granule", 1)
    audit.record(None, "restore", "granule", 1)
    audit.record(None, "withdraw", "granule", 2)
    assert [e.action for e in audit.events_for("granule", 1)] == ["restore", "withdraw"]
