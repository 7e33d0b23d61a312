"""Operators' alerts are events like any other: a drive varied off after repeated errors and a
volume found unreadable each write one, which an operator's rule sends (here, by mail)."""
import pytest
from django.core import mail

from backend.archive.models import Drive, Volume
from backend.archive.services import damage, drives
from backend.events import services as events
from backend.events.models import Event
from tests.archive_fixtures import small_layout

pytestmark = pytest.mark.django_db


def test_a_drive_going_offline_and_a_suspect_volume_alert_the_operator(
        operator_api, user_api, settings, eager, django_capture_on_commit_callbacks):
    small_layout()
    settings.GRANARY_DRIVE_ERROR_LIMIT = 2
    events.create(operator_api.user, "email", rules=[{"type": "drive.offline"},
                                                     {"type": "volume.*"}])
    events.create(user_api.user, "email", rules=[{"type": "*"}])  # a user sees no alert
    drive = Drive.objects.order_by("name").first()
    volume = Volume.objects.order_by("label").first()
    with django_capture_on_commit_callbacks(execute=True):
        drives.drive_error(drive, "SCSI sense 3/11/00")
        assert not Event.objects.exists()  # one error is not yet an alert
        drives.drive_error(drive, "SCSI sense 3/11/00")
        damage.volume_unreadable(volume, "label unreadable")
        damage.volume_unreadable(volume, "label unreadable")  # already suspect: no new alert
    assert sorted(Event.objects.values_list("type", "subject")) == [
        ("drive.offline", f"drives/{drive.name}"), ("volume.suspect", f"volumes/{volume.label}")]
    assert sorted(m.to[0] for m in mail.outbox) == [operator_api.user.email] * 2
    assert user_api.get("/api/v1/events/").json()["results"] == []
