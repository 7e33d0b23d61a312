"""Operators' alerts read off the figures the dashboards show: a daily target projected to be
missed (once per UTC day per direction) and a queue stuck (once per episode). Beat polls
every minute; the events' own rows say what was already told, so a poll that finds the same
condition again tells nothing new."""
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from backend.events import services as events
from backend.events.models import Event
from backend.metrics import services as metrics

from .models import ArchiveRequest, VolumeGroup
from .moved import last_moved
from .operations import queue_summary


def watch(now=None):
    """Poll both conditions; the alerts written (event subjects)."""
    now = now or timezone.now()
    return watch_targets(now) + watch_queues(now)


def watch_targets(now=None):
    """A target projected to be missed, told once per UTC day and direction; not before
    GRANARY_ALERT_TARGET_GRACE_S into the day (at midnight a quiet minute projects nothing)."""
    figures = metrics.today(now or timezone.now())
    if 86400 - figures["seconds_left"] < settings.GRANARY_ALERT_TARGET_GRACE_S:
        return []
    told = []
    for direction, day in figures["directions"].items():
        target = day["target_bytes"]
        if not target or day["projected_bytes"] >= target:
            continue
        subject = f"targets/{direction}/{figures['date']}"
        with transaction.atomic():
            if _told(subject):
                continue
            events.emit("target.projected_miss", subject, {
                "direction": direction, "date": figures["date"], "bytes": day["bytes"],
                "projected_bytes": day["projected_bytes"], "target_bytes": target,
                "shortfall_bytes": target - day["projected_bytes"],
                "rate_b_s": day["rate_b_s"],
                "links": {"today": events.link("metrics/today/"),
                          "targets": events.link("metrics/targets/")}}, time=figures["now"])
        told.append(subject)
    return told


def watch_queues(now=None):
    """A queue whose oldest request waits past GRANARY_ALERT_QUEUE_STUCK_S while none of its
    requests started or finished in that time is stuck; told once per episode (an episode
    ends with the first progress after it was told)."""
    now = now or timezone.now()
    bound = settings.GRANARY_ALERT_QUEUE_STUCK_S
    cutoff = now - timedelta(seconds=bound)
    told = []
    for row in queue_summary(now):
        if row["oldest_age_s"] < bound:
            continue
        queue = _queue(row)
        if _progress(queue, cutoff):
            continue
        subject = f"queues/{row['kind']}/{row['volume_group'] or '-'}"
        with transaction.atomic():
            last = (Event.objects.filter(type="queue.stuck", subject=subject)
                    .order_by("-pk").values_list("time", flat=True).first())
            if last is not None and not _progress(queue, min(last, cutoff)):
                continue  # the episode already told: nothing moved since
            events.emit("queue.stuck", subject, {
                "kind": row["kind"], "volume_group": row["volume_group"],
                "queued": row["queued"], "running": row["running"],
                "oldest_at": row["oldest_at"].isoformat(), "oldest_age_s": row["oldest_age_s"],
                "bound_s": bound, "links": {"queues": events.link("archive/queues/")}},
                time=now)
        told.append(subject)
    return told


def _told(subject):
    return Event.objects.filter(type="target.projected_miss", subject=subject).exists()


def _queue(row):
    """The queue's requests, by group id (a join on the group's name hid it from the index)."""
    group = (VolumeGroup.objects.filter(name=row["volume_group"]).values_list("pk", flat=True)
             .first() if row["volume_group"] else None)
    return ArchiveRequest.objects.filter(kind=row["kind"], volume_group_id=group)


def _progress(queue, since):
    """Whether a request of the queue started or finished since `since`."""
    return queue.alias(moved=last_moved()).filter(moved__gte=since).exists()
