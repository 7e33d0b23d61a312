"""Operator functions of the archive tier (seed 000, section 3): what an operator asks of an HSM.

Each is exposed as an API endpoint and a `manage.py archive ...` subcommand; both are thin
wrappers over these functions. The movers themselves live in the services package.
"""
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Count, F, Sum
from django.utils import timezone

from backend.catalog.models import File
from backend.dbtriggers import compact, kept, refill
from backend.errors import Conflict, listed

from . import tape
from .models import (
    ArchiveRequest,
    CacheEntry,
    Drive,
    FileCopy,
    QueueTotal,
    Volume,
    VolumeGroup,
)
from .services import cache
from .services.audits import audit_files, start_audit  # noqa: F401 - the operators' API
from .services.completeness import file_copies_complete
from .services.paths import medium_of
from .services.policy import policy_copies
from .services.queueing import nudge, queue_once  # noqa: F401
from .services.remedies import retry_hopeful as retry_failed  # noqa: F401


def label_volumes(silo, media, count, prefix, workers=8):
    """Create `count` scratch volumes named PREFIX00001..., writing their labels in parallel."""
    if count < 1:
        raise Conflict("count must be at least 1")
    existing = set(Volume.objects.filter(label__startswith=prefix).values_list("label", flat=True))
    labels, n = [], 1
    while len(labels) < count:
        label = f"{prefix}{n:05d}"
        if label not in existing:
            labels.append(label)
        n += 1
    volumes = [Volume(label=lb, silo=silo, media=media, capacity_bytes=media.capacity_bytes)
               for lb in labels]

    def write_label(volume):
        return medium_of(volume).format(
                          {"silo": silo.name, "media": media.name})

    with ThreadPoolExecutor(max_workers=workers) as pool:
        ends = list(pool.map(write_label, volumes))
    for volume, end in zip(volumes, ends, strict=True):
        volume.end_of_data = end
    with transaction.atomic():
        Volume.objects.bulk_create(volumes)
    return volumes


def vary_drive(drive, online, reason=""):
    """Vary a drive off (it takes no new work) or on (errors forgiven). Varying on a drive
    that is at work leaves its state to the mover that holds it (it was shown idle while it
    wrote)."""
    with transaction.atomic():
        drive = Drive.objects.select_for_update().get(pk=drive.pk)
        if online:
            if drive.state == Drive.State.OFFLINE:
                drive.state = Drive.State.IDLE
            drive.consecutive_errors = 0
            drive.offline_reason = ""
        else:
            if drive.state in (Drive.State.READING, Drive.State.WRITING, Drive.State.MOUNTING):
                raise Conflict(f"drive {drive.name} is {drive.state}; try again when idle")
            drive.state = Drive.State.OFFLINE
            drive.offline_reason = reason or "varied off by an operator"
        drive.save()
    if online:
        nudge()
    return drive


def volume_groups():
    """Each volume group with its volumes, capacity, bytes used and % full."""
    rows = []
    groups = VolumeGroup.objects.annotate(
        volumes_count=Count("volumes"), capacity=Sum("volumes__capacity_bytes"),
        used=Sum("volumes__end_of_data"), live=Sum("volumes__live_bytes"),
    ).select_related("silo")
    for g in groups:
        capacity = g.capacity or 0
        rows.append({
            "name": g.name, "role": g.role, "silo": g.silo.name if g.silo else None,
            "volumes": g.volumes_count, "capacity_bytes": capacity,
            "used_bytes": g.used or 0, "live_bytes": g.live or 0,
            "percent_full": round(100.0 * (g.used or 0) / capacity, 2) if capacity else 0.0,
        })
    return rows


def media_by_state(state=None):
    qs = Volume.objects.select_related("silo", "group", "drive")
    if state:
        if state not in Volume.State.values:
            raise Conflict(f"unknown volume state {state!r}; one of "
                                + ", ".join(Volume.State.values))
        qs = qs.filter(state=state)
    return qs


def files_on_volume(volume):
    return (FileCopy.objects.filter(volume=volume).exclude(state=FileCopy.State.RELEASED)
            .select_related("file__granule__collection").order_by("position"))


def file_status(file):
    """Where a file lives: its cache state and every copy on its medium (a volume and
    position, or a bucket and key)."""
    entry = CacheEntry.objects.filter(file=file).first()
    copies = (FileCopy.objects.filter(file=file)
              .select_related("volume__silo", "bucket", "file__granule")
              .order_by("copy_number", "segment"))
    requests = ArchiveRequest.objects.filter(file=file).order_by("-created_at")[:10]
    return {
        "file": file,
        "cache": entry,
        "copies": list(copies),
        "required_copies": [n for n, _ in policy_copies(file.granule.collection)],
        "complete": file_copies_complete(file),
        "requests": list(requests),
    }


def request_queue(states=(ArchiveRequest.State.QUEUED, ArchiveRequest.State.RUNNING), kind=None):
    qs = ArchiveRequest.objects.filter(state__in=states).select_related(
        "file", "volume_group", "volume", "drive")
    if kind:
        qs = qs.filter(kind=kind)
    return qs.order_by("priority", "created_at")


def cancel_request(request):
    with transaction.atomic():
        updated = ArchiveRequest.objects.filter(
            pk=request.pk, state=ArchiveRequest.State.QUEUED,
        ).update(state=ArchiveRequest.State.CANCELLED, finished_at=timezone.now(),
                 error="cancelled by an operator")
    if not updated:
        raise Conflict(f"request {request.pk} is not queued; only queued work can stop")


def pin(files, pinned=True):
    return [cache.set_pinned(f, pinned) for f in files]


@dataclass
class Released:
    """What a release did: the files dropped from the cache and their bytes, and the files it
    left there, each with the reason the purge would keep it too."""

    files: list
    freed_bytes: int
    kept: list   # [(file, reason)]


def release(files):
    """Drop the cache copies of `files` now (they stay on their copies), each on its own: a
    file the purge must keep is listed with its reason and holds up none of the others. A
    Conflict, with every reason, when none could be released."""
    done, freed, kept = [], 0, []
    for f in files:
        try:
            freed += cache.release(f)
            done.append(f)
        except Conflict as exc:
            kept.append((f, str(exc)))
    if kept and not done:
        raise Conflict(listed([reason for _, reason in kept], "; "))
    return Released(done, freed, kept)


def find_file(ref):
    """A file by id or by 'COLLECTION:GRANULE/NAME'."""
    try:
        if str(ref).isdigit():
            return File.objects.select_related("granule__collection").get(pk=int(ref))
        coll, _, rest = str(ref).partition(":")
        granule_id, _, name = rest.rpartition("/")
        short, _, version = coll.partition(".")
        return File.objects.select_related("granule__collection").filter(
            granule__collection__short_name=short, granule__collection__version=version,
            granule__granule_id=granule_id, name=name,
        ).latest("granule__version")
    except File.DoesNotExist as exc:
        raise Conflict(f"no file {ref}; give an id or COLLECTION:GRANULE/NAME") from exc


def volume_sparseness():
    """Volumes ordered by dead space (used minus live), the repack candidates first."""
    return (Volume.objects.filter(state__in=[Volume.State.FULL, Volume.State.FILLING])
            .annotate(dead=F("end_of_data") - F("live_bytes")).order_by("-dead"))


def install_layout(*, silos=("silo1", "silo2"), drives_per_silo=4, volumes_per_silo=8,
                   model=None):
    """Silos, drives and labelled scratch volumes, with a primary group in the first silo and a
    backup group in the last (idempotent: what exists is kept)."""
    from .models import DriveModel, Silo

    spec = model or {"name": "LTO-9 (emulated)", "rate_mb_s": 400, "mount_s_min": 10,
                     "mount_s_max": 20, "unmount_s": 15, "position_s_per_gb": 0.3,
                     "capacity_bytes": 5 * 10**9}
    spec = dict(spec)
    drive_model, _ = DriveModel.objects.get_or_create(name=spec.pop("name"), defaults=spec)
    made = []
    for i, name in enumerate(silos):
        silo, _ = Silo.objects.get_or_create(name=name)
        for d in range(drives_per_silo):
            Drive.objects.get_or_create(name=f"{name}-d{d + 1}", defaults={
                "silo": silo, "model": drive_model})
        have = Volume.objects.filter(silo=silo).count()
        if have < volumes_per_silo:
            prefix = f"{chr(ord('A') + i)}"
            label_volumes(silo, drive_model, volumes_per_silo - have, prefix)
        made.append(silo)
    primary, _ = VolumeGroup.objects.get_or_create(
        name="primary", defaults={"role": VolumeGroup.Role.PRIMARY, "silo": made[0]})
    backup, _ = VolumeGroup.objects.get_or_create(
        name="backup", defaults={"role": VolumeGroup.Role.BACKUP, "silo": made[-1]})
    return primary, backup


def set_policy(collection, groups, cache_residency_days=0):
    """The collection's archive policy: copy N goes to groups[N-1], a volume group or a
    bucket."""
    from .models import ArchivePolicy, PolicyCopy
    from .services.policy import target_fields

    if not groups:
        raise Conflict("a policy needs at least one copy target")
    with transaction.atomic():
        policy, _ = ArchivePolicy.objects.update_or_create(
            collection=collection, defaults={"cache_residency_days": cache_residency_days})
        policy.copy_groups.all().delete()
        for number, target in enumerate(groups, start=1):
            PolicyCopy.objects.create(policy=policy, copy_number=number,
                                      **target_fields(target))
    return policy


def start_repack(volume, requested_by=None):
    """Repack a volume: copy its live files to other volumes of its group, then recycle it.

    Crash-safe: each old copy is released only in the transaction that records its verified
    replacement, and the volume is recycled only when nothing on it is live.
    """
    with transaction.atomic():
        volume = Volume.objects.select_for_update().get(pk=volume.pk)
        if volume.state not in (Volume.State.FILLING, Volume.State.FULL, Volume.State.READ_ONLY,
                                Volume.State.SUSPECT):
            raise Conflict(f"volume {volume.label} is {volume.state}; only filling, full, "
                           "read-only or suspect volumes can be repacked")
        if volume.group is None:
            raise Conflict(f"volume {volume.label} belongs to no volume group")
        if ArchiveRequest.objects.filter(kind=ArchiveRequest.Kind.REPACK, volume=volume, state__in=[
                ArchiveRequest.State.QUEUED, ArchiveRequest.State.RUNNING]).exists():
            raise Conflict(f"volume {volume.label} is already being repacked")
        if volume.state != Volume.State.SUSPECT:  # a suspect one stays unread: other copies
            volume.state = Volume.State.READ_ONLY  # serve while its copies are written again
            volume.save(update_fields=["state"])
        request = ArchiveRequest.objects.create(
            kind=ArchiveRequest.Kind.REPACK, priority=ArchiveRequest.Priority.BACKGROUND,
            volume=volume, bytes_total=volume.live_bytes, requested_by=requested_by,
        )
        transaction.on_commit(nudge)
    return request


def rebuild_catalog(volumes=None, progress=None):
    """Recreate the copy catalog from the volumes alone: every member is read back and checked
    against the checksum in its own headers. Returns counts. Existing rows are kept."""
    from backend.catalog import checksums
    from backend.catalog.models import Collection

    counts = {"volumes": 0, "members": 0, "created": 0, "existing": 0, "bad": 0, "unknown": 0,
              "duplicate": 0}
    volumes = volumes if volumes is not None else Volume.objects.exclude(
        state=Volume.State.RETIRED).select_related("silo")
    for volume in volumes:
        medium = medium_of(volume)
        members = [m for m in medium.scan() if not m.is_label]
        counts["volumes"] += 1
        end, live, files, group = None, 0, 0, volume.group
        for m in members:
            counts["members"] += 1
            h = m.headers
            try:
                collection = Collection.objects.get_by_key(h["collection"])
                f = File.objects.get(granule__collection=collection,
                                     granule__granule_id=h["granule_id"],
                                     granule__version=int(h.get("granule_version", 1)),
                                     name=h["file"])
            except (KeyError, Collection.DoesNotExist, File.DoesNotExist):
                counts["unknown"] += 1
                continue
            digest = medium.read(m.data_offset, m.size, h["checksum_type"])
            good = checksums.same(h["checksum_type"], digest, h["checksum"])
            copy, created = _catalog_member(volume, m, f, h, good)
            if copy is None:
                counts["duplicate"] += 1
                continue
            counts["created" if created else "existing"] += 1
            counts["bad"] += 0 if good else 1
            if good and copy.state == FileCopy.State.VERIFIED:
                live += m.size
                files += 1
            end = m.data_offset + m.size + (-m.size) % tape.TAR_BLOCK
            if group is None:
                group = dict(policy_copies(collection)).get(int(h["copy"]))
        if end is not None:
            Volume.objects.filter(pk=volume.pk).update(
                end_of_data=max(end, volume.end_of_data), live_bytes=live, file_count=files,
                group=group, state=volume.state if volume.state != Volume.State.SCRATCH
                else Volume.State.FILLING)
        if progress:
            progress(volume, counts)
    return counts


def _catalog_member(volume, member, file, headers, good):
    """(copy, created) for a member found on a volume: the catalog's row at its position, or
    a new one. (None, False) when the catalog already holds a live copy of that (file, copy,
    segment) elsewhere: the member is a leftover (a write that never counted), not a copy."""
    existing = FileCopy.objects.filter(volume=volume, position=member.position).first()
    if existing is not None:
        return existing, False
    copy = FileCopy(
        volume=volume, position=member.position, file=file, copy_number=int(headers["copy"]),
        segment=int(headers["segment"]), file_offset=int(headers["file_offset"]),
        data_offset=member.data_offset, length=member.size,
        checksum_type=headers["checksum_type"], checksum=headers["checksum"],
        verified_at=timezone.now(),
        state=FileCopy.State.VERIFIED if good else FileCopy.State.BAD)
    try:
        with transaction.atomic():
            copy.save()
    except IntegrityError:
        return None, False
    return copy, True


PENDING = [ArchiveRequest.State.QUEUED, ArchiveRequest.State.RUNNING]


def _pending_grouped():
    """Pending requests per kind, state and group name: n, total and done bytes, oldest."""
    from django.db.models import Min

    return (ArchiveRequest.objects.filter(state__in=PENDING)
            .values("kind", "state", "volume_group__name")
            .annotate(n=Count("id"), total=Sum("bytes_total"), done=Sum("bytes_done"),
                      oldest=Min("created_at")))


def _pending_kept():
    """What _pending_grouped answers, from the trigger-kept QueueTotal rows: bytes done summed
    over the running requests only (a few per drive), the oldest one probe per group of the
    request_pending index."""
    from django.db.models import Min

    names = dict(VolumeGroup.objects.values_list("pk", "name"))
    done = {(r["kind"], r["volume_group"] or 0): r["done"] for r in (
        ArchiveRequest.objects.filter(state=ArchiveRequest.State.RUNNING)
        .values("kind", "volume_group").annotate(done=Sum("bytes_done")))}
    totals = (QueueTotal.objects.values("kind", "state", "group_id")
              .annotate(n=Sum("requests"), total=Sum("bytes_total")).filter(n__gt=0)
              .order_by("kind", "state", "group_id"))
    for t in totals:
        kind, state, group = t["kind"], t["state"], t["group_id"]
        oldest = ArchiveRequest.objects.filter(
            kind=kind, state=state, volume_group=group or None).aggregate(
            oldest=Min("created_at"))["oldest"]
        yield {"kind": kind, "state": state, "volume_group__name": names.get(group),
               "n": t["n"], "total": t["total"], "oldest": oldest,
               "done": done.get((kind, group)) if state == "running" else 0}


def rebuild_queue_totals():
    """Group the pending requests again (after a load that bypassed the trigger); PostgreSQL
    only, where the totals are kept."""
    table = ArchiveRequest._meta.db_table
    refill(QueueTotal._meta.db_table, table, "kind, state, group_id, requests, bytes_total",
           f"SELECT kind, state, coalesce(volume_group_id, 0), count(*), sum(bytes_total) "
           f"FROM {table} WHERE state IN ('queued', 'running') GROUP BY 1, 2, 3")


def queue_summary(now=None):
    """Pending work per kind and volume group: counts, bytes, the oldest request's age, and how
    far the running ones are."""

    now = now or timezone.now()
    rows = {}
    for g in (_pending_kept() if kept() else _pending_grouped()):
        key = (g["kind"], g["volume_group__name"])
        row = rows.setdefault(key, {
            "kind": g["kind"], "volume_group": g["volume_group__name"], "queued": 0,
            "queued_bytes": 0, "running": 0, "running_bytes": 0, "running_done_bytes": 0,
            "oldest_at": None,
        })
        if g["state"] == ArchiveRequest.State.QUEUED:
            row["queued"] += g["n"]
            row["queued_bytes"] += g["total"] or 0
        else:
            row["running"] += g["n"]
            row["running_bytes"] += g["total"] or 0
            row["running_done_bytes"] += g["done"] or 0
        if row["oldest_at"] is None or g["oldest"] < row["oldest_at"]:
            row["oldest_at"] = g["oldest"]
    out = []
    for row in sorted(rows.values(), key=lambda r: (r["kind"], r["volume_group"] or "")):
        row["oldest_age_s"] = round((now - row["oldest_at"]).total_seconds(), 1)
        row["running_percent_done"] = (round(100.0 * row["running_done_bytes"]
                                             / row["running_bytes"], 1)
                                       if row["running_bytes"] else None)
        out.append(row)
    return out


def cancel_queued(requests):
    ids = [r.pk for r in requests]
    return ArchiveRequest.objects.filter(pk__in=ids, state=ArchiveRequest.State.QUEUED).update(
        state=ArchiveRequest.State.CANCELLED, finished_at=timezone.now(),
        error="cancelled by an operator")


def compact_totals():
    """Fold the rows the delta triggers added to every kept total (granules per state, cache
    bytes per state, pending requests per queue) into one per key: run by beat, so what the
    dashboards sum stays a few rows."""
    from backend.catalog import counts

    counts.compact()
    cache.compact_totals()
    compact_queue_totals()


def compact_queue_totals():
    """Fold the queue total rows the statement triggers added into one per queue."""
    compact(QueueTotal._meta.db_table, ["kind", "state", "group_id"], ["requests", "bytes_total"])
