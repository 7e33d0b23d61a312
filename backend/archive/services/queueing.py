"""The request queue: claiming work for a drive, putting it back, and waking the manager."""
from django.db import DEFAULT_DB_ALIAS, IntegrityError, transaction
from django.utils import timezone

from backend.catalog.models import Collection, File, Granule
from backend.nudges import send

from ..models import ArchiveRequest

MAX_ATTEMPTS = 5

Req = ArchiveRequest

# A queued migration whose file is not in the cache waits, out of the scheduler's view, for the
# recall that brings it back (the recall clears it); queued, it keeps those bytes from the purge.
WAITING_FOR_CACHE = "waiting for its file to be recalled into the cache"


# What a mover reads of a request, its file and the granule: claimed as plain rows and built with
# Model.from_db, so a batch of thousands costs no select_related object graph (half the CPU of
# the claim) and parses no footprints or timestamps. Other fields load on first use.
_MOVER_FIELDS = (
    (Req, "", ("id", "kind", "state", "priority", "file_id", "copy_number", "volume_group_id",
               "volume_id", "bucket_id", "drive_id", "bytes_total", "bytes_done", "attempts")),
    (File, "file__", ("id", "granule_id", "name", "size", "checksum_type", "checksum")),
    (Granule, "file__granule__", ("id", "collection_id", "granule_id", "version", "state")),
)


def _mover_objects(rows):
    """[request with .file and .file.granule (and its collection) set] from claim's rows."""
    out = []
    for row in rows:
        objects, at = [], 0
        for model, _, names in _MOVER_FIELDS:
            objects.append(model.from_db(DEFAULT_DB_ALIAS, names, row[at:at + len(names)]))
            at += len(names)
        request, f, granule = objects
        f.granule, request.file = granule, f
        out.append(request)
    # a batch is of a few collections: one object each, not a copy per request
    collections = Collection.objects.in_bulk({r.file.granule.collection_id for r in out})
    for r in out:
        r.file.granule.collection = collections[r.file.granule.collection_id]
    return out


def claim(requests, drive):
    """Mark queued requests (objects or ids) as running on `drive`; returns those won, in order.

    The rows are locked in id order, skipping those another mover is claiming right now (they
    are its to win), then marked in one UPDATE: a claim never waits on another, so two movers
    claiming overlapping batches can neither win a request twice nor deadlock. The rows won are
    read back by this claim's drive and start time.
    """
    ids = [getattr(r, "pk", r) for r in requests]
    now = timezone.now()
    with transaction.atomic():
        free = list(Req.objects.select_for_update(skip_locked=True).filter(
            pk__in=ids, state=Req.State.QUEUED).order_by("pk").values_list("pk", flat=True))
        Req.objects.filter(pk__in=free, state=Req.State.QUEUED).update(
            state=Req.State.RUNNING, drive=drive, started_at=now)
    order = {pk: i for i, pk in enumerate(ids)}
    rows = list(Req.objects.filter(pk__in=ids, state=Req.State.RUNNING, drive=drive,
                                   started_at=now).values_list(
        *(prefix + name for _, prefix, names in _MOVER_FIELDS for name in names)))
    return sorted(_mover_objects(rows), key=lambda r: order[r.pk])


def claim_leased(ids, lease_until):
    """claim() for work held by a lease instead of a drive (the object movers): the rows are
    locked skipping those another mover is claiming, marked running until `lease_until`, and
    returned as the mover's objects, in the order of `ids`."""
    now = timezone.now()
    with transaction.atomic():
        free = list(Req.objects.select_for_update(skip_locked=True).filter(
            pk__in=ids, state=Req.State.QUEUED).order_by("pk").values_list("pk", flat=True))
        Req.objects.filter(pk__in=free, state=Req.State.QUEUED).update(
            state=Req.State.RUNNING, drive=None, started_at=now, lease_until=lease_until)
        rows = list(Req.objects.filter(pk__in=free).values_list(
            *(prefix + name for _, prefix, names in _MOVER_FIELDS for name in names)))
    order = {pk: i for i, pk in enumerate(ids)}
    return sorted(_mover_objects(rows), key=lambda r: order[r.pk])


def queue_once(**fields):
    """Queue a request unless the same work is already queued or running (the database's
    request_one_active_* constraints decide, so two processes racing cannot both queue it).
    Returns the new request, or None when the work was already there."""
    try:
        with transaction.atomic():
            return Req.objects.create(**fields)
    except IntegrityError:
        return None


def requeue(requests, error, charge=True):
    """Put interrupted requests back in the queue, or fail them after too many attempts.

    charge=False when the failure was not theirs (a drive's error, a damaged copy another copy
    can replace): the request goes back without spending an attempt, and what failed carries it.
    """
    for request in requests:
        request.refresh_from_db()
        if request.state != Req.State.RUNNING:
            continue
        request.attempts += 1 if charge else 0
        request.error = error
        request.drive = None
        request.state = Req.State.FAILED if request.attempts >= MAX_ATTEMPTS else Req.State.QUEUED
        if request.state == Req.State.FAILED:
            request.finished_at = timezone.now()
        request.save(update_fields=["attempts", "error", "drive", "state", "finished_at"])


def nudge(objects=False):
    """Wake the storage manager: the broker message is only a hint, the queue is the database.
    With `objects`, a mover is woken at once too, not a hop later by the tick."""
    send("backend.archive.tick")
    if objects:
        send("backend.archive.run_objects")


def retry_failed(requests):
    """Put failed requests back in the queue with fresh attempts; returns how many."""
    count = 0
    for request in ArchiveRequest.objects.filter(pk__in=[r.pk for r in requests],
                                                 state=ArchiveRequest.State.FAILED):
        try:
            with transaction.atomic():
                count += ArchiveRequest.objects.filter(pk=request.pk).update(
                    state=ArchiveRequest.State.QUEUED, attempts=0, error="", drive=None,
                    finished_at=None)
        except IntegrityError:
            # the same work is queued again already (a repair, a newer request): this one
            # is superseded, not retried twice
            ArchiveRequest.objects.filter(pk=request.pk).update(
                state=ArchiveRequest.State.CANCELLED,
                error="superseded: the same work is queued already")
    if count:
        transaction.on_commit(nudge)
    return count
