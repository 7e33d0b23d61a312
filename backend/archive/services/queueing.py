"""The request queue: claiming work for a drive, putting it back, and waking the manager."""
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from backend.catalog import bulk
from backend.catalog.models import Collection, File, Granule
from backend.nudges import send

from ..models import ArchiveRequest

MAX_ATTEMPTS = 5

Req = ArchiveRequest

# A queued migration whose file is not in the cache waits, out of the scheduler's view, for the
# recall that brings it back (the recall clears it); queued, it keeps those bytes from the purge.
WAITING_FOR_CACHE = "waiting for its file to be recalled into the cache"


# What a mover reads of a request, its file and the granule: claimed as plain rows and built with
# bulk.loaded, so a batch of thousands costs no select_related object graph (half the CPU of
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
            objects.append(bulk.loaded(model, names, row[at:at + len(names)]))
            at += len(names)
        request, f, granule = objects
        f._state.fields_cache["granule"] = granule
        request._state.fields_cache["file"] = f
        out.append(request)
    # a batch is of a few collections: one object each, not a copy per request
    collections = Collection.objects.in_bulk({r.file.granule.collection_id for r in out})
    for r in out:
        r.file.granule._state.fields_cache["collection"] = collections[
            r.file.granule.collection_id]
    return out


def claim(requests, drive):
    """Mark queued requests (objects or ids) as running on `drive`; returns those won, in order.

    The rows are locked in id order, skipping those another mover is claiming right now (they
    are its to win), then marked: a claim never waits on another, so two movers claiming
    overlapping batches can neither win a request twice nor deadlock.
    """
    ids = [getattr(r, "pk", r) for r in requests]
    return _claim(ids, {"state": Req.State.RUNNING, "drive_id": getattr(drive, "pk", drive),
                        "started_at": timezone.now()})


def claim_leased(ids, lease_until):
    """claim() for work held by a lease instead of a drive (the object movers): the rows are
    locked skipping those another mover is claiming, marked running until `lease_until`, and
    returned as the mover's objects, in the order of `ids`."""
    return _claim(list(ids), {"state": Req.State.RUNNING, "drive_id": None,
                              "started_at": timezone.now(), "lease_until": lease_until})


def _claim(ids, assign):
    """Lock, mark and read back the queued requests among `ids`: on PostgreSQL one statement
    (UPDATE ... RETURNING joined to the file and granule), elsewhere three."""
    columns = [prefix + name for _, prefix, names in _MOVER_FIELDS for name in names]
    if connection.vendor == "postgresql":
        rows = _claim_returning(ids, assign)
    else:
        with transaction.atomic():
            free = list(Req.objects.select_for_update(skip_locked=True).filter(
                pk__in=ids, state=Req.State.QUEUED).order_by("pk").values_list("pk", flat=True))
            Req.objects.filter(pk__in=free, state=Req.State.QUEUED).update(**assign)
            rows = list(Req.objects.filter(pk__in=free).values_list(*columns))
    order = {pk: i for i, pk in enumerate(ids)}
    return sorted(_mover_objects(rows), key=lambda r: order[r.pk])


def _claim_returning(ids, assign):
    qn = connection.ops.quote_name
    tables = [model._meta.db_table for model, _, _ in _MOVER_FIELDS]
    request, file, granule = (qn(t) for t in tables)
    picked = ", ".join(f"{qn(t)}.{qn(model._meta.get_field(name).column)}"
                       for (model, _, names), t in zip(_MOVER_FIELDS, tables, strict=True)
                       for name in names)
    sets = ", ".join(f"{qn(column)} = %s" for column in assign)
    values = [connection.ops.adapt_datetimefield_value(v) if hasattr(v, "tzinfo") else v
              for v in assign.values()]
    array = bulk.array_of(Req._meta.pk)
    sql = (f"UPDATE {request} SET {sets} FROM {file} JOIN {granule} "
           f"ON {granule}.id = {file}.granule_id "
           f"WHERE {request}.id IN (SELECT id FROM {request} WHERE id = ANY(%s::{array}) "
           f"AND state = %s ORDER BY id FOR UPDATE SKIP LOCKED) "
           f"AND {request}.state = %s AND {file}.id = {request}.file_id RETURNING {picked}")
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values, list(ids), Req.State.QUEUED, Req.State.QUEUED])
        return cursor.fetchall()


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
