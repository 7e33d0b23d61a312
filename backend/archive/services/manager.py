"""The storage manager: idle drives pull work through the scheduler."""
import logging
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.db.models import F, FloatField, Func, Q
from django.utils import timezone

from backend import leases
from backend.nudges import debounced, send

from .. import hardware
from .. import scheduler as _scheduler
from ..models import Drive, FileCopy, Silo, Volume, VolumeGroup
from . import shares
from .background import advance_background
from .cache import room as cache_room
from .drives import VolumeBusy, dismount, drive_error, mount, set_drive
from .objects import queued_work, run_object_movers
from .queueing import WAITING_FOR_CACHE, Req, claim, nudge, requeue
from .reading import read_copies
from .writing import SPAN_MIN, write_copies

log = logging.getLogger(__name__)


def recover_stale_work(force=False):
    """Requeue work of movers that died: running requests whose drive lease ran out.

    With force, every running request is requeued (for a restart of the whole archive).
    A repack is not a mover's work: it runs without a drive while its migrations do, and
    advance_background carries it to the end.
    """
    now = timezone.now()
    stale = Drive.objects.filter(leases.free(now))
    if force:
        stale = Drive.objects.all()
    running = Req.objects.filter(state=Req.State.RUNNING).exclude(kind=Req.Kind.REPACK)
    if not force:
        # object work is held by its mover's lease, not a drive's
        running = running.filter(Q(drive__isnull=True) | Q(drive__in=stale)).exclude(
            bucket__isnull=False, lease_until__gte=now)
    requests = list(running)
    requeue(requests, "the mover stopped before finishing; requeued")
    for request in requests:
        # a partial recall file may be stale: a new attempt starts it again
        if request.kind == Req.Kind.RECALL:
            Req.objects.filter(pk=request.pk).update(bytes_done=0)
    busy = [Drive.State.MOUNTING, Drive.State.READING, Drive.State.WRITING,
            Drive.State.UNLOADING]
    stale.filter(state__in=busy).update(state=Drive.State.IDLE, lease_owner="",
                                        lease_until=None, current_rate_b_s=0)
    return len(requests)


def scheduler_config(model):
    from ..scheduler import SchedulerConfig

    return SchedulerConfig.for_drive(
        model.rate_mb_s, model.capacity_bytes / 1e9, (model.mount_s_min + model.mount_s_max) / 2,
        model.unmount_s,
        write_max_wait_s=settings.GRANARY_WRITE_MAX_WAIT_S,
        read_max_wait_s=settings.GRANARY_READ_MAX_WAIT_S,
        read_idle_wait_s=settings.GRANARY_READ_MAX_WAIT_S,
        dismount_delay_s=settings.GRANARY_DISMOUNT_DELAY_S,
        remount_delay_s=settings.GRANARY_REMOUNT_DELAY_S,
        remount_override_age_s=max(settings.GRANARY_READ_MAX_WAIT_S * 4, 60.0),
        span_min_bytes=SPAN_MIN,
    )


_KLASS = {Req.Priority.OPERATOR: "operator", Req.Priority.USER: "user",
          Req.Priority.MIGRATION: "migration", Req.Priority.BACKGROUND: "audit"}
SNAPSHOT_LIMIT = 20000


def snapshot(drive_id, now=None):
    """The scheduler's view of the archive, read from the database."""
    from .. import scheduler as s

    now = now if now is not None else timezone.now().timestamp()
    drives = list(Drive.objects.select_related("silo", "mounted_volume"))
    volumes = {
        v.label: s.Volume(v.label, v.silo.name, v.group.name if v.group else None, v.state,
                          v.capacity_bytes, v.end_of_data,
                          v.last_dismounted_at.timestamp() if v.last_dismounted_at else None)
        for v in Volume.objects.exclude(state=Volume.State.RETIRED).select_related("silo", "group")
    }
    queue = _queue_rows(next((d for d in drives if d.pk == drive_id), None))
    recall_files = [r[_FILE] for r in queue if r[_KIND] != Req.Kind.MIGRATE]
    segments = {}
    for c in (FileCopy.objects.filter(file_id__in=recall_files, state=FileCopy.State.VERIFIED,
                                      volume__isnull=False).select_related("volume")
              .order_by("copy_number", "file_offset")):
        segments.setdefault(c.file_id, []).append(c)
    down = silos_down(exclude=next((d.silo.name for d in drives if d.pk == drive_id), None))
    cache_full, fits = _cache_room([r for r in queue if r[_KIND] == Req.Kind.RECALL])
    groups = _group_names() if queue else {}
    # a recall without cache room waits for it; served now, it would be put back at once
    requests = [_scheduler_request(r, segments.get(r[_FILE], ()), groups) for r in queue
                if not (r[_KIND] == Req.Kind.RECALL and not fits(r)
                        and not (cache_full and _KLASS[r[_PRIORITY]] != "audit"))]
    return s.Snapshot(
        drive=str(drive_id),
        drives=[s.Drive(str(d.pk), d.silo.name, str(d.model_id),
                        Drive.State.OFFLINE if d.silo.name in down else d.state,
                        d.mounted_volume.label if d.mounted_volume else None, d.mode or None,
                        d.head_position, d.mounted_at.timestamp() if d.mounted_at else None,
                        d.last_used_at.timestamp() if d.last_used_at else None)
                for d in drives],
        volumes=volumes, requests=requests, now=now, cache_full=cache_full,
        **_shares(),
    )


def _queued_for(drive):
    """The queued drive work a decision for `drive` looks at: every read (a recall's copies in
    other silos rank its volumes) and the writes its silo can take. A policy passes over a
    write bound to another silo (View.writes, fifo), so those rows, half the queue when each
    silo holds a copy, are not read for it."""
    queue = Req.objects.filter(state=Req.State.QUEUED, bucket__isnull=True, kind__in=[
        Req.Kind.MIGRATE, Req.Kind.RECALL, Req.Kind.AUDIT]).exclude(
        kind=Req.Kind.MIGRATE, error=WAITING_FOR_CACHE)
    if drive is None:
        return queue
    return queue.filter(~Q(kind=Req.Kind.MIGRATE) | Q(volume_group__silo__isnull=True)
                        | Q(volume_group__silo_id=drive.silo_id))


def _shares():
    """The operator's weights and what each kind was served lately (nothing without weights:
    then shares play no part and nothing is counted)."""
    weights = shares.weights()
    return {"weights": weights, "served": shares.served_lately()} if weights else {}


class _Epoch(Func):
    """Seconds since the epoch, as PostgreSQL's float8: the same float as the datetime's
    timestamp() (both round the exact microseconds once), without a timestamp parsed per
    row, which was the largest cost of reading the queue."""

    template = "EXTRACT(EPOCH FROM %(expressions)s)::float8"
    output_field = FloatField()

    def get_db_converters(self, connection):
        return []   # psycopg gives float8 as a float already: no call per row


# the columns of a queue row (_queue_rows)
_PK, _KIND, _PRIORITY, _SUBMITTED, _FILE, _COPY, _VOLUME, _TOTAL, _DONE, _GROUP, _SHARE = range(11)


def _queue_rows(drive):
    """The queued work a decision for `drive` looks at (_queued_for), oldest first within a
    priority (ties by id), as plain tuples: the queue can hold thousands and this runs per
    decision. The arrival time comes as epoch seconds and the volume group as its id."""
    queue = _queued_for(drive).order_by("priority", "created_at", "pk")
    submitted = _Epoch("created_at") if connection.vendor == "postgresql" else F("created_at")
    rows = queue.annotate(submitted=submitted).values_list(
        "pk", "kind", "priority", "submitted", "file_id", "copy_number", "volume_id",
        "bytes_total", "bytes_done", "volume_group_id", "share")[:SNAPSHOT_LIMIT]
    if connection.vendor == "postgresql":
        return list(rows)
    return [(*r[:_SUBMITTED], r[_SUBMITTED].timestamp(), *r[_SUBMITTED + 1:]) for r in rows]


def _group_names():
    """{volume group id: (its name, its silo's name or None)}: a few rows, read once per
    decision instead of joined to every queued row."""
    return {pk: (name, silo) for pk, name, silo in
            VolumeGroup.objects.values_list("pk", "name", "silo__name")}


def _scheduler_request(r, segments, groups):
    """Queue row `r` (_queue_rows) as the scheduler sees it; `segments` are its file's
    verified copies: an audit reads its own copy, a recall the segments holding its next
    byte; `groups` names the volume groups (_group_names)."""
    s = _scheduler
    klass = _KLASS[r[_PRIORITY]]
    if r[_KIND] == Req.Kind.MIGRATE:
        group, silo = groups.get(r[_GROUP], (None, None))
        return s.Request(r[_PK], s.WRITE, klass, r[_SUBMITTED], (), group, r[_TOTAL] - r[_DONE],
                         silo)
    if r[_KIND] == Req.Kind.AUDIT:
        copies = tuple(s.Copy(c.volume.label, c.data_offset, c.length) for c in segments
                       if c.copy_number == r[_COPY] and c.volume_id == r[_VOLUME])
        return s.Request(r[_PK], s.READ, "audit", r[_SUBMITTED], copies=copies,
                         size=r[_TOTAL])
    copies = tuple(s.Copy(c.volume.label, c.data_offset, c.length) for c in segments
                   if c.file_offset <= r[_DONE] < c.file_offset + c.length)
    return s.Request(r[_PK], s.READ, klass, r[_SUBMITTED], copies=copies,
                     size=r[_TOTAL], share=r[_SHARE])


def _cache_room(recalls):
    """(cache_full, fits): full when the free space plus the purgeable bytes cannot take even
    the smallest waiting recall, so the scheduler waits instead of mounting for recalls that
    would be put back at once (clean files an order keeps cannot be purged); fits(r) whether
    recall r has room now."""
    if not recalls:
        return False, lambda r: True
    have = cache_room(max(r[_TOTAL] for r in recalls))
    return have < min(r[_TOTAL] for r in recalls), lambda r: r[_TOTAL] <= have


def _acquire_lease(drive_id, owner):
    now = timezone.now()
    return Drive.objects.filter(pk=drive_id).exclude(state=Drive.State.OFFLINE).filter(
        leases.free(now) | Q(lease_owner=owner),
    ).update(lease_owner=owner,
             lease_until=leases.until(settings.GRANARY_DRIVE_LEASE_S, now)) == 1


def _release_lease(drive_id, owner):
    Drive.objects.filter(pk=drive_id, lease_owner=owner).update(lease_owner="", lease_until=None)


def step(drive, owner=None):
    """One scheduler decision for an idle drive, carried out. Returns the decision."""
    from .. import scheduler

    policy = scheduler.POLICIES[settings.GRANARY_SCHEDULER]
    decision = policy(snapshot(drive.pk), scheduler_config(drive.model))
    if decision.action == scheduler.WAIT:
        return decision
    if decision.action == scheduler.DISMOUNT:
        dismount(drive)
        return decision
    volume = Volume.objects.select_related("silo").get(label=decision.volume)
    if decision.action == scheduler.MOUNT:
        try:
            mount(drive, volume)
        except VolumeBusy:
            return decision
        except hardware.DriveFault as exc:
            drive_error(drive, exc)
            return decision
    set_drive(drive, mode=decision.mode)
    won = claim([s.request for s in decision.serve], drive)
    if not won:
        return decision
    if decision.mode == scheduler.WRITE:
        write_copies(drive, volume, won)
    else:
        read_copies(drive, volume, won)
        last = decision.serve[-1]
        Drive.objects.filter(pk=drive.pk).update(head_position=last.position + last.length)
    if owner:
        _acquire_lease(drive.pk, owner)
    return decision


def _mover_failed(drive, error):
    """A step failed in a way the mover did not handle: put its running work back now, not
    after its lease runs out. A database hiccup (a deadlock, a lost connection) is nobody's
    fault and spends no attempt; anything else is charged, so a request that keeps breaking
    the mover ends FAILED with the reason instead of looping."""
    from django.db import DatabaseError, connection

    transient = isinstance(error, DatabaseError)
    log.exception("drive %s: the mover's step failed", drive.name, exc_info=error)
    if transient:
        connection.close()   # a broken connection is not reused
    running = list(Req.objects.filter(state=Req.State.RUNNING, drive=drive))
    requeue(running, f"the mover failed: {error}"[:500], charge=not transient)
    Drive.objects.filter(pk=drive.pk).exclude(state=Drive.State.OFFLINE).update(
        state=Drive.State.IDLE)


def run_drive(drive_id, max_steps=200):
    """Work one drive until the scheduler says wait (a Celery task per drive, leased)."""
    import uuid

    from .. import scheduler

    owner = uuid.uuid4().hex
    if not _acquire_lease(drive_id, owner):
        return 0
    steps, looked_at = 0, timezone.now()
    # renewed every third of the lease while the mover works, so the lease can be short (a
    # mover killed -9 frees its drive soon) and a long write never outlives it
    keeper = leases.Keeper(settings.GRANARY_DRIVE_LEASE_S,
                           lambda _: _acquire_lease(drive_id, owner), f"lease-{drive_id}",
                           held=[drive_id])
    keeper.start()
    try:
        while steps < max_steps:
            drive = Drive.objects.select_related("model", "silo", "mounted_volume").get(
                pk=drive_id)
            if drive.state == Drive.State.OFFLINE:
                break
            looked_at = timezone.now()
            try:
                decision = step(drive, owner)
            except Exception as exc:  # noqa: BLE001 - the mover must leave its work claimable
                _mover_failed(drive, exc)
                break
            if decision.action == scheduler.WAIT:
                break
            steps += 1
    finally:
        keeper.stop()
        _release_lease(drive_id, owner)
    # work queued after the last look found this drive still leased, so its nudge started
    # nothing: nudge again now that the drive is free (the next look sees that work)
    if Req.objects.filter(state=Req.State.QUEUED, created_at__gte=looked_at).exists():
        nudge()
    return steps


def _run_drive_in_thread(drive_id):
    from django.db import connection

    try:
        return run_drive(drive_id)
    finally:
        connection.close()


def run_until_idle(max_rounds=10000, parallel=False):
    """Run every drive in this process until none has anything to do now (tests, CLI, bench).

    With parallel, each drive runs in its own thread, as separate movers would.
    """
    from concurrent.futures import ThreadPoolExecutor

    total = 0
    for _ in range(max_rounds):
        advance_background()
        moved = run_object_movers(max_seconds=0)
        drive_ids = list(Drive.objects.exclude(state=Drive.State.OFFLINE).values_list(
            "pk", flat=True))
        if parallel:
            with ThreadPoolExecutor(max_workers=len(drive_ids) or 1) as pool:
                done = sum(pool.map(_run_drive_in_thread, drive_ids))
        else:
            done = sum(run_drive(d) for d in drive_ids)
        total += done + moved
        if not done and not moved:
            break
    return total


def drive_queue(silo_name):
    """Where a drive's work is sent: with storage managers bound to silos
    (GRANARY_ARCHIVE_QUEUE_PER_SILO) its silo's queue, archive.<silo>, so only that silo's
    manager runs it and, while that manager is down, the work waits there and in the database;
    else None (the archive queue, served by every archive worker)."""
    return f"archive.{silo_name}" if settings.GRANARY_ARCHIVE_QUEUE_PER_SILO else None


def silos_down(exclude=None):
    """Names of the silos whose storage manager has not answered its heartbeat for
    GRANARY_SILO_STALE_S (or never has), when storage managers are bound to silos (else none):
    the scheduler takes their drives as offline. `exclude`: the asking drive's own silo, alive
    since it asks."""
    from backend.metrics.models import QueueHeartbeat

    if not settings.GRANARY_ARCHIVE_QUEUE_PER_SILO:
        return set()
    fresh = timezone.now() - timedelta(seconds=settings.GRANARY_SILO_STALE_S)
    alive = set(QueueHeartbeat.objects.filter(
        queue__startswith="archive.", seen_at__gte=fresh).values_list("queue", flat=True))
    return {name for name in Silo.objects.values_list("name", flat=True)
            if drive_queue(name) not in alive and name != exclude}


def _silo_heartbeats():
    """A heartbeat on each silo's queue: the storage manager serving it records it, so the
    managers of other silos can tell whether it is up (silos_down) and the health check shows
    the queue."""
    if not settings.GRANARY_ARCHIVE_QUEUE_PER_SILO:
        return
    now = timezone.now().isoformat()
    for name in Silo.objects.values_list("name", flat=True):
        send("backend.metrics.heartbeat", drive_queue(name), now, queue=drive_queue(name))


# nudges closer together than this are one tick: every mover that ends with new work queued
# nudges, and each tick starts every free drive, so under a repack (which queues work at every
# tick) nudges bred ticks faster than an archive worker ran them (727 queued in a chaos run on
# SCSI tape, the drives idle behind them for minutes)
TICK_EVERY_S = 1.0


def tick_due(window=None):
    """Whether a nudged tick should run: False when another has run in this window of
    TICK_EVERY_S; a skipped nudge leaves one trailing tick behind it, for the next window
    (`window`: the one a trailing tick was sent for; backend.nudges.debounced)."""
    return debounced("backend.archive.tick", TICK_EVERY_S, "archive-tick", window)


def tick():
    """Beat and nudges: recover dead movers' work, then start every free drive."""
    _silo_heartbeats()
    recover_stale_work()
    advance_background()
    if queued_work().exists():
        for _ in range(max(settings.GRANARY_OBJECT_MOVERS, 1)):
            send("backend.archive.run_objects")
    if not Req.objects.filter(state=Req.State.QUEUED).exists() and not Drive.objects.filter(
            mounted_volume__isnull=False).exists():
        return 0
    now = timezone.now()
    free = Drive.objects.exclude(state=Drive.State.OFFLINE).filter(
        leases.free(now)).values_list("pk", "silo__name")
    for drive_id, silo in free:
        send("backend.archive.run_drive", drive_id, queue=drive_queue(silo))
    return len(free)
