"""Operations of the archive tier: the RAID cache, migration to tape, recall, and their state.

Interface for ingest and distribution (everything else here is the storage manager's own):

- archive_granule(granule, sources) -> Admission
    Take a registered granule's files (sources: File.pk -> path of the validated bytes,
    usually in staging) into the cache and queue one migration per copy its policy requires.
    Never fails for lack of cache space: it answers admitted=False and the caller tries again.
    The granule becomes ARCHIVED, and `signals.granule_archived` is sent, once every copy is
    written and verified (and `signals.granules_archived` once per batch archived together).
- archive_granules([(granule, sources)]) -> [Admission]
    The same for many granules at once (one reservation, one transaction, one nudge).
- make_available(files, requested_by=None, priority=USER) -> [Availability]
    Files in the cache are ready now; the others get a recall (one per file, shared by all who
    ask) and an estimate of when they will be.
- open_verified(file) -> open binary file
    A cached file whose checksum has just been checked against the catalog.

State lives in the database; every step is idempotent on ids, so a message lost or delivered
twice, or a mover killed mid-write, costs time but never data.
"""
import logging
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, transaction
from django.db.models import Count, F, Q, Sum
from django.utils import timezone

from backend.catalog import bulk, checksums
from backend.catalog.models import Collection, File, Granule
from backend.metrics.services import record_transfer

from . import cache_policy, hardware, tape
from .models import (
    ArchivePolicy,
    ArchiveRequest,
    CacheEntry,
    Drive,
    FileCopy,
    Volume,
)
from .signals import file_recalled, granule_archived, granules_archived

log = logging.getLogger(__name__)

SPAN_MIN = 16 << 20      # don't start a file on a volume with less room than this: span instead
HEADER_ROOM = 16 << 10   # room kept for a member's pax header and padding
MAX_ATTEMPTS = 5

Req = ArchiveRequest


class ArchiveError(Exception):
    """An archive operation that cannot proceed, with a message for operators."""


# ---------------------------------------------------------------------------------------------
# Paths


def volume_path(volume):
    return str(settings.VOLUMES_ROOT / volume.silo.name / volume.label)


# Cache files sit in buckets of this many file ids: a directory is made once per bucket, not
# once per granule (a directory costs several times a file's hard link on a journaled disk).
CACHE_BUCKET = 1000


def cache_path(file):
    """Where a file's cache copy lives: by collection, then file id, so every version of a
    granule has its own path and a small granule costs no directory of its own."""
    return (settings.CACHE_ROOT / file.granule.collection.key
            / f"{file.pk // CACHE_BUCKET:06d}" / f"{file.pk}-{file.name}")


def member_name(file, segment=None):
    granule = file.granule
    name = f"{granule.collection.key}/{granule.granule_id}/v{granule.version}/{file.name}"
    return name if segment is None else f"{name}.seg{segment:03d}"


# ---------------------------------------------------------------------------------------------
# Policy


def policy_copies(collection):
    """[(copy_number, volume_group)] the collection's policy requires."""
    try:
        policy = collection.archive_policy
    except ArchivePolicy.DoesNotExist as exc:
        raise ArchiveError(f"collection {collection.key} has no archive policy") from exc
    copies = [(c.copy_number, c.volume_group) for c in policy.copy_groups.select_related(
        "volume_group")]
    if not copies:
        raise ArchiveError(f"the archive policy of {collection.key} names no volume group")
    return copies


# ---------------------------------------------------------------------------------------------
# The RAID cache


@dataclass
class CacheUsage:
    capacity: int
    used: int
    dirty: int
    clean: int
    pinned: int
    staging: int

    @property
    def free(self):
        return max(0, self.capacity - self.used)


def cache_usage():
    sums = {state: 0 for state in CacheEntry.State.values}
    for row in CacheEntry.objects.values("state").annotate(total=Sum("size")):
        sums[row["state"]] = row["total"] or 0
    return CacheUsage(
        capacity=settings.GRANARY_CACHE_BYTES, used=sum(sums.values()),
        dirty=sums["dirty"], clean=sums["clean"], pinned=sums["pinned"], staging=sums["staging"],
    )


def _watermarks():
    return cache_policy.Watermarks(settings.GRANARY_CACHE_HIGH_WATERMARK,
                                   settings.GRANARY_CACHE_LOW_WATERMARK)


def _copies_verified_ids(file_ids):
    """The files among file_ids whose every required copy is verified end to end."""
    return files_copies_complete(list(
        File.objects.filter(pk__in=file_ids).select_related("granule__collection")))


def purge(incoming=0):
    """Free cache space for `incoming` bytes by the watermark rule; returns bytes freed."""
    usage = cache_usage()
    need = cache_policy.bytes_to_free(usage.used, usage.capacity, incoming, _watermarks())
    if not need:
        return 0
    candidates = list(CacheEntry.objects.filter(state=CacheEntry.State.CLEAN)
                      .order_by("last_access")[:10000])
    verified = _copies_verified_ids([c.file_id for c in candidates])
    now = timezone.now().timestamp()
    view = [
        cache_policy.CachedFile(
            file_id=c.file_id, size=c.size, last_access=c.last_access.timestamp(),
            keep_until=c.keep_until.timestamp() if c.keep_until else None,
            copies_verified=c.file_id in verified,
        )
        for c in candidates
    ]
    freed = 0
    for victim in cache_policy.choose_victims(view, need, now):
        freed += _drop_from_cache(victim.file_id)
    return freed


def _drop_from_cache(file_id):
    with transaction.atomic():
        entry = (CacheEntry.objects.select_for_update(of=("self",))
                 .select_related("file__granule__collection")
                 .filter(file_id=file_id, state=CacheEntry.State.CLEAN).first())
        if entry is None:
            return 0
        path = cache_path(entry.file)
        entry.delete()
    path.unlink(missing_ok=True)
    return entry.size


def release(file):
    """Drop one file's cache copy now instead of waiting for the watermarks (an operator's
    purge: frees room, or sends a file to tape only). Refused, with the reason, when the
    purge could not drop it either: dirty, pinned, kept for an order, or copies unverified."""
    with transaction.atomic():
        entry = CacheEntry.objects.select_for_update().filter(file=file).first()
        if entry is None or entry.state == CacheEntry.State.STAGING:
            raise ArchiveError(f"{file.name} is not in the cache")
        if entry.state == CacheEntry.State.DIRTY:
            raise ArchiveError(f"{file.name} is dirty: a copy is still to be written to tape")
        if entry.state == CacheEntry.State.PINNED:
            raise ArchiveError(f"{file.name} is pinned; unpin it first")
        if entry.keep_until and entry.keep_until > timezone.now():
            raise ArchiveError(f"{file.name} is kept in the cache for an order until "
                               f"{entry.keep_until:%Y-%m-%d %H:%M} UTC")
        if not file_copies_complete(file):
            raise ArchiveError(f"{file.name} has tape copies still unverified")
        entry.delete()
    cache_path(file).unlink(missing_ok=True)
    return entry.size


def reserve_cache(nbytes):
    """True when `nbytes` more fit in the cache (purging clean files if need be)."""
    usage = cache_usage()
    if usage.used + nbytes <= usage.capacity * settings.GRANARY_CACHE_HIGH_WATERMARK:
        return True
    purge(nbytes)
    return cache_usage().used + nbytes <= settings.GRANARY_CACHE_BYTES


def touch(files):
    CacheEntry.objects.filter(file__in=files).update(last_access=timezone.now())


def touch_if_cached(file):
    """Mark a file in the cache as just used; False if it is not there (or still staging).
    One write, where a check and a touch would take two round trips."""
    return bool(CacheEntry.objects.filter(file=file).exclude(state=CacheEntry.State.STAGING)
                .update(last_access=timezone.now()))


def set_pinned(file, pinned):
    """Pin a cached file (it is never purged) or unpin it. A dirty file stays dirty."""
    with transaction.atomic():
        entry = CacheEntry.objects.select_for_update().filter(file=file).first()
        if entry is None:
            raise ArchiveError(f"{file.name} is not in the cache; recall it first")
        if pinned and entry.state == CacheEntry.State.CLEAN:
            entry.state = CacheEntry.State.PINNED
        elif not pinned and entry.state == CacheEntry.State.PINNED:
            entry.state = CacheEntry.State.CLEAN
        entry.pinned = pinned
        entry.save(update_fields=["state", "pinned"])
    return entry


def _place(source, target):
    """Put bytes into the cache: a hard link on the same filesystem, a copy otherwise. The
    file appears whole or not at all; its bucket directory is made the first time only."""
    try:
        os.link(source, target)
        return
    except FileNotFoundError:
        if not os.path.exists(source):
            raise
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass
    tmp = target.with_name(target.name + ".incoming")
    tmp.unlink(missing_ok=True)
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    os.replace(tmp, target)


# ---------------------------------------------------------------------------------------------
# Admission (the interface for ingest)


@dataclass
class Admission:
    admitted: bool
    reason: str = ""
    migrations: int = 0
    error: str = ""


def archive_granule(granule, sources):
    """Take a granule's files into the cache and queue its migrations (idempotent)."""
    admission = archive_granules([(granule, sources)])[0]
    if admission.error:
        raise ArchiveError(admission.error)
    return admission


def archive_granules(items):
    """archive_granule for many granules [(granule, sources)] at once: one cache reservation,
    one transaction of bulk inserts and one nudge. Returns an Admission per item, in order;
    a granule that cannot be taken gets one with `error` set and holds up no other."""
    out = [None] * len(items)
    granule_ids = [g.pk for g, _ in items]
    files = {}
    for f in File.objects.filter(granule_id__in=granule_ids).order_by("pk"):
        files.setdefault(f.granule_id, []).append(f)
    cached = set(CacheEntry.objects.filter(file__granule_id__in=granule_ids).exclude(
        state=CacheEntry.State.STAGING).values_list("file_id", flat=True))
    policies, todo = {}, []
    for i, (granule, sources) in enumerate(items):
        try:
            if granule.collection_id not in policies:
                policies[granule.collection_id] = policy_copies(granule.collection)
        except ArchiveError as exc:
            out[i] = Admission(False, error=str(exc))
            continue
        mine = files.get(granule.pk, [])
        missing = [f.name for f in mine if f.pk not in sources and f.pk not in cached]
        if missing:
            out[i] = Admission(False, error=f"no source for {', '.join(missing)}")
            continue
        todo.append((i, granule, sources, mine, [f for f in mine if f.pk not in cached]))
    todo = _reserve_room(todo, out)
    placed = {}
    for i, granule, sources, _, to_place in todo:
        done = []
        try:
            for f in to_place:
                f.granule = granule
                _place(sources[f.pk], cache_path(f))
                done.append(f)
        except OSError as exc:
            for f in done:
                cache_path(f).unlink(missing_ok=True)
            out[i] = Admission(False, error=f"{exc}")
            continue
        placed[i] = done
    todo = [t for t in todo if t[0] in placed]
    try:
        created = _register_in_cache([(g, mine, placed[i], policies[g.collection_id])
                                      for i, g, _, mine, _ in todo])
    except Exception:
        for done in placed.values():
            for f in done:
                cache_path(f).unlink(missing_ok=True)
        raise
    for (i, _, _, _, _), migrations in zip(todo, created, strict=True):
        out[i] = Admission(True, migrations=migrations)
    return out


def _reserve_room(todo, out):
    """The items that fit in the cache, all at once when possible, else in order until one
    does not; the others are answered admitted=False (they wait, they do not fail)."""
    def size(item):
        return sum(f.size for f in item[4])

    if not reserve_cache(sum(size(t) for t in todo)):
        fits, total = [], 0
        for item in todo:
            if not reserve_cache(total + size(item)):
                break
            fits.append(item)
            total += size(item)
        for item in todo[len(fits):]:
            out[item[0]] = Admission(False, "the cache is full; the granule waits for space")
        todo = fits
    return todo


@transaction.atomic
def _register_in_cache(batch):
    """Cache entries for the placed files and the migrations still missing, for a batch of
    (granule, files, placed, copies); the number of migrations queued per granule."""
    now = timezone.now()
    entries, wanted, residency = [], [], {}
    for granule, files, placed, copies in batch:
        if granule.collection_id not in residency:
            residency[granule.collection_id] = (
                granule.collection.archive_policy.cache_residency_days)
        days = residency[granule.collection_id]
        keep_until = now + timedelta(days=days) if days else None
        # ids, not objects, for the foreign keys: Django's related setters cost more than the
        # rest of building these thousands of rows
        entries += [CacheEntry(file_id=f.pk, state=CacheEntry.State.DIRTY, size=f.size,
                               last_access=now, keep_until=keep_until) for f in placed]
        wanted += [(f, n, group) for f in files for n, group in copies]
    CacheEntry.objects.bulk_create(entries, batch_size=1000, update_conflicts=True,
                                   unique_fields=["file"],
                                   update_fields=["state", "size", "last_access", "keep_until"])
    file_ids = [f.pk for f, _, _ in wanted]
    pending = set(Req.objects.filter(
        file_id__in=file_ids, kind=Req.Kind.MIGRATE,
        state__in=[Req.State.QUEUED, Req.State.RUNNING]).values_list("file_id", "copy_number"))
    complete = _complete_copies([f for f, _, _ in wanted])
    missing = [(f, n, group) for f, n, group in wanted
               if (f.pk, n) not in pending and (f.pk, n) not in complete]
    new = [Req(kind=Req.Kind.MIGRATE, priority=Req.Priority.MIGRATION, file_id=f.pk,
               copy_number=n, volume_group_id=group.pk, bytes_total=f.size)
           for f, n, group in missing]
    bulk.insert(new)
    per_granule = {}
    for f, _, _ in missing:
        per_granule[f.granule_id] = per_granule.get(f.granule_id, 0) + 1
    Granule.objects.filter(pk__in=[g.pk for g, _, _, _ in batch]).update(
        state=Granule.State.ARCHIVING, updated_at=now)
    if new:
        transaction.on_commit(nudge)
    _complete_granules_if_archived([g.pk for g, _, _, _ in batch if g.pk not in per_granule])
    return [per_granule.get(g.pk, 0) for g, _, _, _ in batch]


# ---------------------------------------------------------------------------------------------
# Completeness


def _complete_copies(files):
    """{(file id, copy number)} among `files` whose verified segments cover the whole file."""
    sizes = {f.pk: f.size for f in files}
    rows = (FileCopy.objects.filter(file_id__in=list(sizes), state=FileCopy.State.VERIFIED)
            .order_by().values_list("file_id", "copy_number").annotate(total=Sum("length")))
    return {(file_id, n) for file_id, n, total in rows if (total or 0) >= sizes[file_id]}


def copy_complete(file, copy_number):
    """Verified segments of this copy cover the whole file."""
    return (file.pk, copy_number) in _complete_copies([file])


def files_copies_complete(files):
    """The ids of `files` (granule and collection loaded) whose every required copy is
    verified end to end."""
    complete, policies = _complete_copies(files), {}
    out = set()
    for f in files:
        collection = f.granule.collection
        if collection.pk not in policies:
            policies[collection.pk] = [n for n, _ in policy_copies(collection)]
        if all((f.pk, n) in complete for n in policies[collection.pk]):
            out.add(f.pk)
    return out


def file_copies_complete(file):
    return file.pk in files_copies_complete([file])


def _complete_granule_if_archived(granule):
    return bool(_complete_granules_if_archived([granule.pk]))


def _complete_granules_if_archived(granule_ids, complete_files=frozenset()):
    """Mark ARCHIVED those granules whose every file has every required copy verified, and
    send granule_archived for each after commit. The granule rows are locked first, so two
    movers that verify the last two copies at once cannot both miss the other's.
    `complete_files`: ids the caller has just found complete under the same locks."""
    if not granule_ids:
        return []
    with transaction.atomic():
        granules = {g.pk: g for g in Granule.objects.select_for_update().filter(
            pk__in=granule_ids).exclude(state=Granule.State.ARCHIVED).order_by("pk").only(
            "pk", "state", "collection_id", "granule_id", "version", "replaces_id")}
        if not granules:
            return []
        collections = Collection.objects.in_bulk({g.collection_id for g in granules.values()})
        for g in granules.values():
            g.collection = collections[g.collection_id]
        files = list(File.objects.filter(granule_id__in=list(granules)).only(
            "pk", "granule_id", "size"))
        unknown = [f for f in files if f.pk not in complete_files]
        for f in unknown:
            f.granule = granules[f.granule_id]
        complete = set(complete_files) | files_copies_complete(unknown)
        done = set(granules) - {f.granule_id for f in files if f.pk not in complete}
        if not done:
            return []
        now = timezone.now()
        Granule.objects.filter(pk__in=done).update(
            state=Granule.State.ARCHIVED, archived_at=now, updated_at=now)
        archived = [granules[pk] for pk in sorted(done)]
        for granule in archived:
            granule.state, granule.archived_at = Granule.State.ARCHIVED, now
        transaction.on_commit(lambda: _announce(archived))
    return archived


def _announce(granules):
    granules_archived.send(sender=Granule, granules=granules)
    for granule in granules:
        granule_archived.send(sender=Granule, granule=granule)


# ---------------------------------------------------------------------------------------------
# Recall and reading (the interface for distribution)


@dataclass
class Availability:
    file_id: int
    ready: bool
    request_id: int | None = None
    eta_s: float | None = None
    error: str = ""


def make_available(files, requested_by=None, priority=Req.Priority.USER):
    """Ready files now; queue one shared recall for each of the others, with an estimate."""
    out, created = [], False
    for f in files:
        if touch_if_cached(f):
            out.append(Availability(f.pk, True))
            continue
        with transaction.atomic():
            request = (Req.objects.select_for_update()
                       .filter(file=f, kind=Req.Kind.RECALL,
                               state__in=[Req.State.QUEUED, Req.State.RUNNING]).first())
            if request is None:
                if not FileCopy.objects.filter(file=f, state=FileCopy.State.VERIFIED).exists():
                    out.append(Availability(f.pk, False, error="no verified copy on tape"))
                    continue
                request = Req.objects.create(
                    kind=Req.Kind.RECALL, priority=priority, file=f, bytes_total=f.size,
                    requested_by=requested_by,
                )
                created = True
            elif priority < request.priority:
                Req.objects.filter(pk=request.pk).update(priority=priority)
        out.append(Availability(f.pk, False, request.pk, estimate_recall_s(request)))
    if created:
        transaction.on_commit(nudge)
    return out


def estimate_recall_s(request):
    """Rough time until a recall is done: the work queued ahead of it over the online drives."""
    drives = list(Drive.objects.exclude(state=Drive.State.OFFLINE).select_related("model"))
    if not drives:
        return None
    model = drives[0].model
    ahead = Req.objects.filter(kind=Req.Kind.RECALL, state__in=[Req.State.QUEUED,
                                                               Req.State.RUNNING])
    ahead = ahead.filter(Q(priority__lt=request.priority)
                         | Q(priority=request.priority, created_at__lte=request.created_at))
    count = ahead.count()
    nbytes = ahead.aggregate(total=Sum("bytes_total"))["total"] or 0
    per_mount = (model.mount_s_min + model.mount_s_max) / 2 + model.unmount_s
    seconds = (count * per_mount / 4 + hardware.transfer_seconds(model, nbytes)) / len(drives)
    return round(seconds + per_mount, 1)


def open_verified(file):
    """Open a cached file after checking its checksum against the catalog."""
    path = cache_path(file)
    entry = CacheEntry.objects.filter(file=file).exclude(state=CacheEntry.State.STAGING).first()
    if entry is None or not path.exists():
        raise ArchiveError(f"{file.name} is not in the cache")
    digest, size = checksums.of_file(file.checksum_type, path)
    if size != file.size or not checksums.same(file.checksum_type, digest, file.checksum):
        raise ArchiveError(f"the cached copy of {file.name} fails its checksum")
    touch([file])
    return open(path, "rb")


# ---------------------------------------------------------------------------------------------
# Drives: mount, dismount, faults


class VolumeBusy(ArchiveError):
    """Another drive took the volume first (two movers decided on the same snapshot)."""


def mount(drive, volume):
    """Put `volume` in `drive` (robot exchange + load), honouring injected mount faults.

    The volume is claimed for this drive first, atomically: the loser of a race gets VolumeBusy.
    """
    if drive.mounted_volume_id == volume.pk:
        return
    if drive.mounted_volume_id:
        dismount(drive)
    try:
        with transaction.atomic():
            Drive.objects.filter(pk=drive.pk).update(mounted_volume=volume,
                                                      state=Drive.State.MOUNTING)
    except IntegrityError as exc:
        raise VolumeBusy(f"volume {volume.label} is in another drive") from exc
    drive.mounted_volume, drive.state = volume, Drive.State.MOUNTING
    try:
        hardware.check_fault(drive, "mount")
    except hardware.DriveFault:
        _set_drive(drive, mounted_volume=None)
        raise
    hardware.pause(volume.silo.robot_exchange_s + hardware.mount_seconds(drive.model))
    now = timezone.now()
    Volume.objects.filter(pk=volume.pk).update(mount_count=F("mount_count") + 1)
    _set_drive(drive, state=Drive.State.IDLE, mounted_at=now, last_used_at=now)


def dismount(drive):
    volume = drive.mounted_volume
    if volume is None:
        return
    _set_drive(drive, state=Drive.State.UNLOADING)
    hardware.pause(drive.model.unmount_s)
    Volume.objects.filter(pk=volume.pk).update(last_dismounted_at=timezone.now())
    _set_drive(drive, state=Drive.State.IDLE, mounted_volume=None, mounted_at=None,
               mode="", current_rate_b_s=0)


def _set_drive(drive, **fields):
    for key, value in fields.items():
        setattr(drive, key, value)
    drive.save(update_fields=[*fields, "updated_at"])


def drive_error(drive, error, requests=()):
    """Count an error against the drive (varying it off at the limit) and requeue its work."""
    drive.refresh_from_db()
    drive.consecutive_errors += 1
    drive.error_count += 1
    drive.last_error = str(error)
    fields = ["consecutive_errors", "error_count", "last_error", "state", "updated_at"]
    drive.state = Drive.State.IDLE
    if drive.consecutive_errors >= settings.GRANARY_DRIVE_ERROR_LIMIT:
        drive.state = Drive.State.OFFLINE
        drive.offline_reason = (f"varied off after {drive.consecutive_errors} consecutive "
                                f"errors; last: {error}")
        drive.mounted_volume = None
        fields += ["offline_reason", "mounted_volume"]
        log.warning("drive %s varied off: %s", drive.name, error)
    drive.save(update_fields=fields)
    requeue(requests, f"drive {drive.name}: {error}")


def requeue(requests, error):
    """Put interrupted requests back in the queue, or fail them after too many attempts."""
    for request in requests:
        request.refresh_from_db()
        if request.state != Req.State.RUNNING:
            continue
        request.attempts += 1
        request.error = error
        request.drive = None
        request.state = Req.State.FAILED if request.attempts >= MAX_ATTEMPTS else Req.State.QUEUED
        if request.state == Req.State.FAILED:
            request.finished_at = timezone.now()
        request.save(update_fields=["attempts", "error", "drive", "state", "finished_at"])


def _drive_ok(drive):
    if drive.consecutive_errors:
        Drive.objects.filter(pk=drive.pk).update(consecutive_errors=0)
        drive.consecutive_errors = 0


# ---------------------------------------------------------------------------------------------
# Writing copies (migration)


# What a mover reads of a request, its file and the granule: claimed as plain rows and built with
# Model.from_db, so a batch of thousands costs no select_related object graph (half the CPU of
# the claim) and parses no footprints or timestamps. Other fields load on first use.
_MOVER_FIELDS = (
    (Req, "", ("id", "kind", "state", "priority", "file_id", "copy_number", "volume_group_id",
               "volume_id", "drive_id", "bytes_total", "bytes_done", "attempts")),
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

    One conditional UPDATE claims them: a request another mover claimed first is no longer
    QUEUED when this UPDATE sees it (PostgreSQL re-checks the condition after the other commits)
    so it is not won twice. The rows won are read back by this claim's drive and start time.
    """
    ids = [getattr(r, "pk", r) for r in requests]
    now = timezone.now()
    Req.objects.filter(pk__in=ids, state=Req.State.QUEUED).update(
        state=Req.State.RUNNING, drive=drive, started_at=now)
    order = {pk: i for i, pk in enumerate(ids)}
    rows = list(Req.objects.filter(pk__in=ids, state=Req.State.RUNNING, drive=drive,
                                   started_at=now).values_list(
        *(prefix + name for _, prefix, names in _MOVER_FIELDS for name in names)))
    return sorted(_mover_objects(rows), key=lambda r: order[r.pk])


def _segment_numbers(requests):
    """{(file id, copy number): segments already recorded} for the requests' copies."""
    rows = (FileCopy.objects.filter(file_id__in=[r.file_id for r in requests])
            .exclude(state=FileCopy.State.RELEASED).order_by()
            .values_list("file_id", "copy_number").annotate(n=Count("pk")))
    return {(file_id, n): count for file_id, n, count in rows}


def write_copies(drive, volume, requests):
    """Write migrations onto the mounted volume, verify each by reading it back, record them.

    A copy is recorded (and counts) only after the volume is synced and the bytes read back
    match. A file larger than the room left is written in part (a segment) and the rest stays
    queued for the next volume of the group.
    """
    volume.refresh_from_db()
    if volume.state not in (Volume.State.SCRATCH, Volume.State.FILLING):
        raise ArchiveError(f"volume {volume.label} is {volume.state}, not writable")
    _set_drive(drive, state=Drive.State.WRITING)
    writer = tape.VolumeWriter(volume_path(volume), volume.end_of_data)
    written, started = [], timezone.now()
    segments = _segment_numbers(requests)
    checking = _ReadBack(volume)
    try:
        for request in requests:
            f = request.file
            room = volume.capacity_bytes - writer.end_of_data - HEADER_ROOM
            remaining = f.size - request.bytes_done
            length = min(remaining, max(room, 0))
            if length < remaining and length < SPAN_MIN:
                break  # volume is full: the rest waits for the next volume
            hardware.check_fault(drive, "write")
            spanning = length < f.size
            recorded = segments.get((f.pk, request.copy_number), 0)
            segment = recorded if spanning or request.bytes_done or recorded else 0
            expected = _expected_checksum(f, request.bytes_done, length, spanning)
            headers = {
                "granule_id": f.granule.granule_id, "collection": f.granule.collection.key,
                "granule_version": f.granule.version, "file": f.name, "file_size": f.size,
                "checksum_type": f.checksum_type, "checksum": expected,
                "file_checksum": f.checksum, "copy": request.copy_number,
                "segment": segment, "file_offset": request.bytes_done,
            }
            with open(cache_path(f), "rb") as source:
                source.seek(request.bytes_done)
                result = writer.add(member_name(f, segment if spanning else None), source,
                                    length, None, headers)
            hardware.pause(hardware.transfer_seconds(drive.model, length))
            result.checksum = expected   # proven, or disproven, by the read-back
            written.append((request, result, segment))
            if length >= READ_BACK_AHEAD:
                writer.sync()
                checking.start(request, result)
        writer.close(sync=True)
    except hardware.DriveFault as exc:
        writer.abandon()
        checking.finish([])
        drive_error(drive, exc, requests)
        return set()
    except Exception:
        writer.abandon()
        checking.finish([])
        raise
    verified = checking.finish(written)
    done = {r.pk for r, _, _ in written}
    unwritten = [r for r in requests if r.pk not in done]
    _record_writes(drive, volume, written, verified, writer.end_of_data, unwritten, started)
    _drive_ok(drive)
    return verified


def _release_replaced(requests):
    """New copies are verified: release the bad segments of those copies and, for a repack, the
    old segments on the volume being emptied. Runs in the transaction that records the copies."""
    if not requests:
        return
    replacing = {r.volume_id for r in requests if r.volume_id is not None}
    candidates = FileCopy.objects.filter(file_id__in=[r.file_id for r in requests]).filter(
        Q(state=FileCopy.State.BAD) | Q(volume_id__in=replacing, state=FileCopy.State.VERIFIED))
    wanted = {(r.file_id, r.copy_number): r.volume_id for r in requests}
    old = [c for c in candidates if (c.file_id, c.copy_number) in wanted and (
        c.state == FileCopy.State.BAD or c.volume_id == wanted[(c.file_id, c.copy_number)])]
    for segment in old:
        if segment.state == FileCopy.State.VERIFIED:
            Volume.objects.filter(pk=segment.volume_id).update(
                live_bytes=F("live_bytes") - segment.length, file_count=F("file_count") - 1)
    FileCopy.objects.filter(pk__in=[c.pk for c in old]).update(state=FileCopy.State.RELEASED)


def _expected_checksum(file, offset, length, spanning):
    if not spanning:
        return file.checksum
    digest = checksums.hasher(file.checksum_type)
    with open(cache_path(file), "rb") as source:
        source.seek(offset)
        remaining = length
        while remaining:
            chunk = source.read(min(tape.BLOCK, remaining))
            digest.update(chunk)
            remaining -= len(chunk)
    return digest.hexdigest()


# A member at least this large is synced on its own and read back while the next is written,
# as a drive's read-after-write head does: the disk reads one while it writes the other.
READ_BACK_AHEAD = 64 << 20


class _ReadBack:
    """The read-back of a write batch: large members checked in a thread as soon as they are
    on disk, the rest after the batch is synced. finish() -> ids of requests whose bytes match
    the catalog checksum."""

    def __init__(self, volume):
        self.volume, self.path, self.pool, self.early = volume, volume_path(volume), None, {}

    def start(self, request, result):
        if self.pool is None:
            self.pool = ThreadPoolExecutor(1, thread_name_prefix="read-back")
        self.early[request.pk] = self.pool.submit(self._matches, request, result)

    def finish(self, written):
        try:
            rest = [(request, result) for request, result, _ in written
                    if request.pk not in self.early]
            digests = tape.read_many(
                self.path, [(result.data_offset, result.length, request.file.checksum_type)
                            for request, result in rest],
                drop_cache=settings.GRANARY_VERIFY_FROM_DISK)
            good = {request.pk for (request, result), digest in zip(rest, digests, strict=True)
                    if self._same(request, result, digest)}
            return good | {request.pk for request, _, _ in written
                           if request.pk in self.early and self.early[request.pk].result()}
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True)

    def _matches(self, request, result):
        readback = tape.read(self.path, result.data_offset, result.length,
                             request.file.checksum_type,
                             drop_cache=settings.GRANARY_VERIFY_FROM_DISK)
        return self._same(request, result, readback)

    def _same(self, request, result, readback):
        if checksums.same(request.file.checksum_type, readback, result.checksum):
            return True
        log.error("read-back of %s on %s does not match the catalog checksum",
                  request.file.name, self.volume.label)
        return False


@transaction.atomic
def _record_writes(drive, volume, written, verified, end_of_data, unwritten, started):
    """Record a write batch in bulk: its copies, its requests, the cache entries made clean,
    one transfer record per collection and the granules now archived."""
    now = timezone.now()
    volume = Volume.objects.select_for_update().get(pk=volume.pk)
    copies, done, moved = [], [], {}
    for request, result, segment in written:
        f = request.file
        if request.pk not in verified:
            request.error = ("read-back does not match the catalog checksum (is the cached "
                             "copy damaged?); will be written again")
            request.state = Req.State.QUEUED
            request.attempts += 1
            request.drive = None
            continue
        copies.append(FileCopy(
            file_id=f.pk, copy_number=request.copy_number, segment=segment,
            file_offset=request.bytes_done, volume_id=volume.pk, position=result.position,
            data_offset=result.data_offset, length=result.length,
            checksum_type=f.checksum_type, checksum=result.checksum,
            state=FileCopy.State.VERIFIED, verified_at=now,
        ))
        request.bytes_done += result.length
        request.error = ""
        if request.bytes_done >= f.size:
            request.state, request.finished_at = Req.State.DONE, now
            done.append(request)
        else:
            request.state, request.drive = Req.State.QUEUED, None
        collection = f.granule.collection
        moved[collection.pk] = (collection, moved.get(collection.pk, (None, 0))[1] + result.length)
    bulk.insert(copies)
    Req.objects.filter(pk__in=[r.pk for r in done]).update(
        state=Req.State.DONE, bytes_done=F("bytes_total"), error="", finished_at=now)
    Req.objects.bulk_update([r for r, _, _ in written if r.state != Req.State.DONE],
                            ["bytes_done", "error", "state", "drive", "attempts"])
    _release_replaced(done)
    # Lock the granules first: a mover recording another copy of the same files waits here, so
    # whichever commits second sees both copies (and cleans the files, completes the granules).
    granule_ids = sorted({r.file.granule_id for r in done})
    list(Granule.objects.select_for_update().filter(pk__in=granule_ids).order_by("pk")
         .values_list("pk", flat=True))
    clean = files_copies_complete([r.file for r in done])
    CacheEntry.objects.filter(file_id__in=clean, state=CacheEntry.State.DIRTY,
                              pinned=False).update(state=CacheEntry.State.CLEAN)
    CacheEntry.objects.filter(file_id__in=clean, state=CacheEntry.State.DIRTY,
                              pinned=True).update(state=CacheEntry.State.PINNED)
    for collection, nbytes in moved.values():
        record_transfer("migrate", nbytes, started, now, collection)
    good_bytes = sum(c.length for c in copies)
    volume.end_of_data = end_of_data
    volume.live_bytes += good_bytes
    volume.file_count += len(verified)
    if volume.group_id is None:
        volume.group_id = written[0][0].volume_group_id if written else None
    if volume.state == Volume.State.SCRATCH:
        volume.state = Volume.State.FILLING
    if unwritten or volume.capacity_bytes - end_of_data - HEADER_ROOM < SPAN_MIN:
        volume.state = Volume.State.FULL
    volume.save()
    Req.objects.filter(pk__in=[r.pk for r in unwritten], state=Req.State.RUNNING).update(
        state=Req.State.QUEUED, drive=None)
    elapsed = max((now - started).total_seconds(), 1e-6)
    _set_drive(drive, state=Drive.State.IDLE, last_used_at=now,
               current_rate_b_s=sum(r.length for _, r, _ in written) / elapsed)
    _complete_granules_if_archived(sorted({r.file.granule_id for r in done
                                           if r.file_id in clean}), clean)


# ---------------------------------------------------------------------------------------------
# Reading copies (recall, audit)


def recall_candidates(file):
    """[(copy_number, FileCopy of the next segment needed)] per copy that can still serve."""
    out = []
    copies = (FileCopy.objects.filter(file=file, state=FileCopy.State.VERIFIED)
              .select_related("volume").order_by("copy_number", "file_offset"))
    by_copy = {}
    for c in copies:
        by_copy.setdefault(c.copy_number, []).append(c)
    for number, segments in by_copy.items():
        if any(s.volume.state in (Volume.State.SUSPECT, Volume.State.RETIRED) for s in segments):
            continue
        out.append((number, segments))
    return out


def read_copies(drive, volume, requests):
    """Recall files from the mounted volume into the cache; verify each against the catalog."""
    _set_drive(drive, state=Drive.State.READING)
    done = []
    for request in requests:
        f = request.file
        try:
            hardware.check_fault(drive, "read")
        except hardware.DriveFault as exc:
            drive_error(drive, exc, [r for r in requests if r not in done])
            return done
        if request.kind == Req.Kind.AUDIT:
            _audit(drive, volume, request)
            done.append(request)
            continue
        segments = [s for _, segs in recall_candidates(f) for s in segs if s.volume_id == volume.pk]
        if not segments:
            requeue([request], f"no usable copy of {f.name} on {volume.label}")
            continue
        try:
            if _recall_from(drive, volume, request, segments):
                done.append(request)
        except tape.VolumeError as exc:
            _volume_suspect(volume, str(exc))
            requeue([request], f"volume {volume.label}: {exc}")
            return done
    _drive_ok(drive)
    _set_drive(drive, state=Drive.State.IDLE, last_used_at=timezone.now())
    return done


def _recall_from(drive, volume, request, segments):
    f = request.file
    if not reserve_cache(f.size):
        # a full cache is a reason to wait, never to fail: no attempt is counted
        Req.objects.filter(pk=request.pk, state=Req.State.RUNNING).update(
            state=Req.State.QUEUED, drive=None, error="waiting for cache space")
        return False
    target = cache_path(f)
    partial = target.with_name(target.name + ".recall")
    partial.parent.mkdir(parents=True, exist_ok=True)
    started = timezone.now()
    if volume.fault == "bad":
        raise tape.VolumeError("media error (injected)")
    mode = "r+b" if partial.exists() and request.bytes_done else "wb"
    with open(partial, mode) as out:
        for segment in segments:
            out.seek(segment.file_offset)
            digest = tape.read(volume_path(volume), segment.data_offset, segment.length,
                               segment.checksum_type, sink=out.write)
            hardware.pause(hardware.transfer_seconds(drive.model, segment.length))
            if not checksums.same(segment.checksum_type, digest, segment.checksum):
                FileCopy.objects.filter(pk=segment.pk).update(state=FileCopy.State.BAD)
                raise tape.VolumeError(f"checksum mismatch reading {f.name}")
            request.bytes_done += segment.length
        out.flush()
        os.fsync(out.fileno())
    if request.bytes_done < f.size:
        Req.objects.filter(pk=request.pk).update(bytes_done=request.bytes_done,
                                                 state=Req.State.QUEUED, drive=None)
        return False
    digest, size = checksums.of_file(f.checksum_type, partial)
    if size != f.size or not checksums.same(f.checksum_type, digest, f.checksum):
        partial.unlink(missing_ok=True)
        raise tape.VolumeError(f"recalled {f.name} does not match its catalog checksum")
    os.replace(partial, target)
    now = timezone.now()
    with transaction.atomic():
        CacheEntry.objects.update_or_create(file=f, defaults={
            "state": CacheEntry.State.CLEAN, "size": f.size, "last_access": now})
        Req.objects.filter(pk=request.pk).update(
            state=Req.State.DONE, bytes_done=f.size, finished_at=now, error="")
        record_transfer("recall", f.size, started, now, f.granule.collection)
        transaction.on_commit(lambda: file_recalled.send(sender=File, file_id=f.pk))
    return True


def _audit(drive, volume, request):
    """Re-read one copy's segments on this volume and check them; a bad one is marked for repair."""
    segments = FileCopy.objects.filter(file=request.file, copy_number=request.copy_number,
                                       volume=volume, state=FileCopy.State.VERIFIED)
    now, bad = timezone.now(), []
    for segment in segments:
        try:
            if volume.fault == "bad":
                raise tape.VolumeError("media error (injected)")
            digest = tape.read(volume_path(volume), segment.data_offset, segment.length,
                               segment.checksum_type)
            hardware.pause(hardware.transfer_seconds(drive.model, segment.length))
            ok = checksums.same(segment.checksum_type, digest, segment.checksum)
        except tape.VolumeError as exc:
            ok, digest = False, str(exc)
        if ok:
            FileCopy.objects.filter(pk=segment.pk).update(verified_at=now)
        else:
            FileCopy.objects.filter(pk=segment.pk).update(state=FileCopy.State.BAD)
            bad.append(segment)
    error = f"bad copy on {volume.label}; repair queued" if bad else ""
    Req.objects.filter(pk=request.pk).update(
        state=Req.State.DONE, bytes_done=request.bytes_total, finished_at=now, error=error)
    return not bad


def _volume_suspect(volume, reason):
    log.error("volume %s marked suspect: %s", volume.label, reason)
    Volume.objects.filter(pk=volume.pk).update(state=Volume.State.SUSPECT)
    volume.state = Volume.State.SUSPECT


def recover_stale_work(force=False):
    """Requeue work of movers that died: running requests whose drive lease ran out.

    With force, every running request is requeued (for a restart of the whole archive).
    """
    now = timezone.now()
    stale = Drive.objects.filter(Q(lease_until__lt=now) | Q(lease_until__isnull=True))
    if force:
        stale = Drive.objects.all()
    running = Req.objects.filter(state=Req.State.RUNNING)
    if not force:
        running = running.filter(Q(drive__isnull=True) | Q(drive__in=stale))
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


# ---------------------------------------------------------------------------------------------
# The storage manager: idle drives pull work through the scheduler


def scheduler_config(model):
    from .scheduler import SchedulerConfig

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
    from . import scheduler as s

    now = now if now is not None else timezone.now().timestamp()
    drives = list(Drive.objects.select_related("silo", "mounted_volume"))
    volumes = {
        v.label: s.Volume(v.label, v.silo.name, v.group.name if v.group else None, v.state,
                          v.capacity_bytes, v.end_of_data,
                          v.last_dismounted_at.timestamp() if v.last_dismounted_at else None)
        for v in Volume.objects.exclude(state=Volume.State.RETIRED).select_related("silo", "group")
    }
    # plain rows, not model objects: the queue can hold thousands and this runs per decision
    queue = list(Req.objects.filter(state=Req.State.QUEUED, kind__in=[
        Req.Kind.MIGRATE, Req.Kind.RECALL, Req.Kind.AUDIT])
                 .order_by("priority", "created_at")
                 .values_list("pk", "kind", "priority", "created_at", "file_id", "copy_number",
                              "volume_id", "bytes_total", "bytes_done", "volume_group__name",
                              "volume_group__silo__name", named=True)[:SNAPSHOT_LIMIT])
    recall_files = [r.file_id for r in queue if r.kind != Req.Kind.MIGRATE]
    segments = {}
    for c in (FileCopy.objects.filter(file_id__in=recall_files, state=FileCopy.State.VERIFIED)
              .select_related("volume").order_by("copy_number", "file_offset")):
        segments.setdefault(c.file_id, []).append(c)
    requests = []
    for r in queue:
        klass = _KLASS[r.priority]
        if r.kind == Req.Kind.MIGRATE:
            requests.append(s.Request(r.pk, s.WRITE, klass, r.created_at.timestamp(),
                                      group=r.volume_group__name,
                                      size=r.bytes_total - r.bytes_done,
                                      silo=r.volume_group__silo__name))
        elif r.kind == Req.Kind.AUDIT:
            copies = tuple(s.Copy(c.volume.label, c.data_offset, c.length)
                           for c in segments.get(r.file_id, ())
                           if c.copy_number == r.copy_number and c.volume_id == r.volume_id)
            requests.append(s.Request(r.pk, s.READ, "audit", r.created_at.timestamp(),
                                      copies=copies, size=r.bytes_total))
        else:
            copies = tuple(
                s.Copy(c.volume.label, c.data_offset, c.length)
                for c in segments.get(r.file_id, ())
                if c.file_offset + c.length > r.bytes_done
                and c.file_offset <= r.bytes_done
            )
            requests.append(s.Request(r.pk, s.READ, klass, r.created_at.timestamp(),
                                      copies=copies, size=r.bytes_total))
    usage = cache_usage()
    cache_full = usage.used >= usage.capacity * settings.GRANARY_CACHE_HIGH_WATERMARK and not (
        CacheEntry.objects.filter(state=CacheEntry.State.CLEAN).exists())
    return s.Snapshot(
        drive=str(drive_id),
        drives=[s.Drive(str(d.pk), d.silo.name, str(d.model_id), d.state,
                        d.mounted_volume.label if d.mounted_volume else None, d.mode or None,
                        d.head_position, d.mounted_at.timestamp() if d.mounted_at else None,
                        d.last_used_at.timestamp() if d.last_used_at else None)
                for d in drives],
        volumes=volumes, requests=requests, now=now, cache_full=cache_full,
    )


def _acquire_lease(drive_id, owner):
    now = timezone.now()
    return Drive.objects.filter(pk=drive_id).exclude(state=Drive.State.OFFLINE).filter(
        Q(lease_until__isnull=True) | Q(lease_until__lt=now) | Q(lease_owner=owner),
    ).update(lease_owner=owner,
             lease_until=now + timedelta(seconds=settings.GRANARY_DRIVE_LEASE_S)) == 1


def _release_lease(drive_id, owner):
    Drive.objects.filter(pk=drive_id, lease_owner=owner).update(lease_owner="", lease_until=None)


def step(drive, owner=None):
    """One scheduler decision for an idle drive, carried out. Returns the decision."""
    from . import scheduler

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
    _set_drive(drive, mode=decision.mode)
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


def run_drive(drive_id, max_steps=200):
    """Work one drive until the scheduler says wait (a Celery task per drive, leased)."""
    import uuid

    from . import scheduler

    owner = uuid.uuid4().hex
    if not _acquire_lease(drive_id, owner):
        return 0
    steps, looked_at = 0, timezone.now()
    try:
        while steps < max_steps:
            drive = Drive.objects.select_related("model", "silo", "mounted_volume").get(
                pk=drive_id)
            if drive.state == Drive.State.OFFLINE:
                break
            looked_at = timezone.now()
            decision = step(drive, owner)
            if decision.action == scheduler.WAIT:
                break
            steps += 1
    finally:
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
        drive_ids = list(Drive.objects.exclude(state=Drive.State.OFFLINE).values_list(
            "pk", flat=True))
        if parallel:
            with ThreadPoolExecutor(max_workers=len(drive_ids) or 1) as pool:
                done = sum(pool.map(_run_drive_in_thread, drive_ids))
        else:
            done = sum(run_drive(d) for d in drive_ids)
        total += done
        if not done:
            break
    return total


def tick():
    """Beat and nudges: recover dead movers' work, then start every free drive."""
    from .tasks import run_drive as run_drive_task

    recover_stale_work()
    advance_background()
    if not Req.objects.filter(state=Req.State.QUEUED).exists() and not Drive.objects.filter(
            mounted_volume__isnull=False).exists():
        return 0
    now = timezone.now()
    free = Drive.objects.exclude(state=Drive.State.OFFLINE).filter(
        Q(lease_until__isnull=True) | Q(lease_until__lt=now)).values_list("pk", flat=True)
    for drive_id in free:
        run_drive_task.delay(drive_id)
    return len(free)


# ---------------------------------------------------------------------------------------------
# Background work that needs bytes in the cache first: repack and repair


def _pending(file, kind, copy_number=None):
    qs = Req.objects.filter(file=file, kind=kind, state__in=[Req.State.QUEUED, Req.State.RUNNING])
    if copy_number is not None:
        qs = qs.filter(copy_number=copy_number)
    return qs.exists()


def _rewrite(file, copy_number, group, replacing=None):
    """Queue a new copy `copy_number` of a file, recalling it into the cache first if need be."""
    if _pending(file, Req.Kind.MIGRATE, copy_number):
        return
    if not touch_if_cached(file):
        if not _pending(file, Req.Kind.RECALL):
            make_available([file], priority=Req.Priority.BACKGROUND)
        return
    Req.objects.create(kind=Req.Kind.MIGRATE, priority=Req.Priority.BACKGROUND, file=file,
                       copy_number=copy_number, volume_group=group, volume=replacing,
                       bytes_total=file.size)


def advance_background():
    """Move repacks and repairs one step on: recall what they need, queue the new copies, and
    recycle a repacked volume once nothing on it is live."""
    for repack in Req.objects.filter(kind=Req.Kind.REPACK, state__in=[
            Req.State.QUEUED, Req.State.RUNNING]).select_related("volume__group"):
        volume = repack.volume
        live = FileCopy.objects.filter(volume=volume, state=FileCopy.State.VERIFIED)
        moved = repack.bytes_total - (live.aggregate(total=Sum("length"))["total"] or 0)
        if not live.exists():
            _recycle(volume)
            Req.objects.filter(pk=repack.pk).update(state=Req.State.DONE, bytes_done=moved,
                                                    finished_at=timezone.now())
            continue
        Req.objects.filter(pk=repack.pk).update(state=Req.State.RUNNING, bytes_done=moved)
        for segment in live.select_related("file__granule__collection"):
            _rewrite(segment.file, segment.copy_number, volume.group, replacing=volume)
    bad = (FileCopy.objects.filter(state=FileCopy.State.BAD)
           .select_related("file__granule__collection"))
    for segment in bad:
        f = segment.file
        if copy_complete(f, segment.copy_number):
            continue
        group = dict(policy_copies(f.granule.collection)).get(segment.copy_number)
        if group is not None:
            _rewrite(f, segment.copy_number, group)


def _recycle(volume):
    """Return an emptied volume to scratch: relabelled, no group, nothing live."""
    end = tape.label(volume_path(volume), volume.label, {"silo": volume.silo.name,
                                                         "recycled": timezone.now().isoformat()})
    Volume.objects.filter(pk=volume.pk).update(
        state=Volume.State.SCRATCH, group=None, end_of_data=end, live_bytes=0, file_count=0)


def nudge():
    """Wake the storage manager: the broker message is only a hint, the queue is the database."""
    from .tasks import tick

    tick.delay()
