"""The archive's promises that the database alone can check (and a stat of cached files)."""
import os
from collections import defaultdict

from django.db.models import Count, F, Max, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from backend.catalog.models import File, Granule

from ..models import ArchiveRequest, CacheEntry, FileCopy, PolicyCopy, Volume
from ..services.paths import cache_path
from . import (
    CACHE_FILE_MISSING,
    CACHE_FILE_SIZE,
    COPIES_SHARE_VOLUME,
    COPY_DUPLICATE,
    COPY_EXTRA,
    COPY_MISSING,
    COPY_WRONG_GROUP,
    MIGRATION_MISSING,
    RECALL_UNSERVABLE,
    REPACK_NOT_RECYCLED,
    REQUEST_DUPLICATE,
    REQUEST_STUCK,
    VOLUME_COUNTS,
    Violation,
)

Req = ArchiveRequest
ACTIVE = (Req.State.QUEUED, Req.State.RUNNING)
UNREADABLE = (Volume.State.SUSPECT, Volume.State.RETIRED)
CHUNK = 2000


def policies():
    """{collection id: {copy number: target}}, a target being ("tape", volume group id) or
    ("object", bucket id)."""
    out = defaultdict(dict)
    for collection_id, number, group_id, bucket_id in PolicyCopy.objects.values_list(
            "policy__collection_id", "copy_number", "volume_group_id", "bucket_id"):
        out[collection_id][number] = ("object", bucket_id) if bucket_id else ("tape", group_id)
    return out


def target_of(segment):
    """The target a verified segment row lies on, as policies() names targets."""
    if segment["bucket_id"]:
        return ("object", segment["bucket_id"])
    return ("tape", segment["volume__group_id"])


def where(segment):
    """Where a segment row lies, for people."""
    if segment["bucket_id"]:
        return f"{segment['bucket__name']}/{segment['key']}"
    return segment["volume__label"]


def verified_segments(file_ids):
    """{file id: {copy number: [segment rows]}} of the VERIFIED copies of these files."""
    out = defaultdict(lambda: defaultdict(list))
    file_ids = sorted(set(file_ids))
    for at in range(0, len(file_ids), CHUNK):
        rows = (FileCopy.objects.filter(file_id__in=file_ids[at:at + CHUNK],
                                        state=FileCopy.State.VERIFIED)
                .order_by("file_offset").values("pk", "file_id", "copy_number", "file_offset",
                                                "length", "volume_id", "volume__group_id",
                                                "volume__state", "volume__label", "bucket_id",
                                                "bucket__name", "key"))
        for row in rows:
            out[row["file_id"]][row["copy_number"]].append(row)
    return out


def covered(segments):
    """Bytes of the file covered from its start by these segments, without gap or overlap."""
    end = 0
    for s in sorted(segments, key=lambda s: s["file_offset"]):
        if s["file_offset"] != end:
            break
        end += s["length"]
    return end


def readable(segments):
    """The segments on volumes that can be read (a copy counts only while its volume can)."""
    return [s for s in segments if s["volume__state"] not in UNREADABLE]


def readable_copy(segments, size):
    """These VERIFIED segments make one whole copy on volumes that can be read (segments left
    on an unreadable volume after the copy was rewritten elsewhere do not matter)."""
    return covered(readable(segments)) == size


def _chunks(queryset):
    rows = list(queryset)
    for at in range(0, len(rows), CHUNK):
        yield rows[at:at + CHUNK]


# granules whose copies the policy still asks for (a withdrawn one is kept on tape)
KEPT = (Granule.State.ARCHIVED, Granule.State.WITHDRAWN)


def archived_copies():
    """Every ARCHIVED granule's files have exactly the copies the policy asks for, each whole,
    VERIFIED and readable, in the copy's volume group, on volumes of their own."""
    found, policy = [], policies()
    files = File.objects.filter(granule__state__in=KEPT).order_by("pk").values_list(
        "pk", "size", "granule__collection_id", "name")
    for chunk in _chunks(files):
        ids = [f for f, *_ in chunk]
        copies = verified_segments(ids)
        active = Req.objects.filter(file_id__in=ids, state__in=ACTIVE, kind__in=[
            Req.Kind.MIGRATE, Req.Kind.RECALL])
        pending = set(active.values_list("file_id", "copy_number"))
        for file_id, size, collection_id, name in chunk:
            found += _file_copies(file_id, size, name, policy.get(collection_id, {}),
                                  copies.get(file_id, {}), pending)
    return found


def _file_copies(file_id, size, name, wanted, copies, pending=frozenset()):
    """The copy promises for one file. `pending`: its (file, copy number) with a migration
    under way, and (file, None) when a recall is: a missing copy then says a repair is on."""
    found, volumes = [], {}
    for number, target in sorted(wanted.items()):
        segments = copies.get(number, [])
        if not readable_copy(segments, size):
            places = ", ".join(f"{where(s)} ({s['volume__state'] or 'object'})"
                               for s in segments)
            repairing = (file_id, number) in pending or (file_id, None) in pending
            found.append(Violation(
                COPY_MISSING, f"{name}: copy {number} is not whole, verified and readable"
                + (f" (verified segments on {places})" if places else " (no verified segment)")
                + ("; a repair is under way" if repairing else ""),
                file_id=file_id, extra={"copy_number": number, "pending": repairing}))
        for s in segments:
            if target_of(s) != target:
                found.append(Violation(
                    COPY_WRONG_GROUP, f"{name}: copy {number} is on {where(s)}, not its "
                    "policy's volume group or bucket", file_id=file_id, copy_id=s["pk"],
                    volume_id=s["volume_id"]))
        if sum(s["length"] for s in readable(segments)) > size:
            found.append(Violation(
                COPY_DUPLICATE, f"{name}: copy {number} has verified segments covering more "
                f"than its {size} bytes", file_id=file_id, extra={"copy_number": number}))
        volumes[number] = {s["volume_id"] for s in segments if s["volume_id"]}
    for number, segments in copies.items():
        if number not in wanted:
            found += [Violation(COPY_EXTRA, f"{name}: copy {number} is not in the policy",
                                file_id=file_id, copy_id=s["pk"], volume_id=s["volume_id"])
                      for s in segments]
    numbers = sorted(volumes)
    for i, a in enumerate(numbers):
        for b in numbers[i + 1:]:
            for volume_id in volumes[a] & volumes[b]:
                found.append(Violation(
                    COPIES_SHARE_VOLUME, f"{name}: copies {a} and {b} share a volume",
                    file_id=file_id, volume_id=volume_id))
    return found


def live_segments_unique():
    """No two live (not released) rows of one (file, copy number, segment)."""
    rows = (FileCopy.objects.exclude(state=FileCopy.State.RELEASED).order_by()
            .values("file_id", "copy_number", "segment").annotate(n=Count("pk"))
            .filter(n__gt=1))
    return [Violation(COPY_DUPLICATE, f"{r['n']} live rows of copy {r['copy_number']} segment "
                      f"{r['segment']}", file_id=r["file_id"],
                      extra={"copy_number": r["copy_number"]}) for r in rows]


def volume_counts():
    """Each volume's live_bytes and file_count are those of its VERIFIED copies (one statement,
    so a write recorded meanwhile is seen whole or not at all)."""
    verified = FileCopy.objects.filter(volume=OuterRef("pk"), state=FileCopy.State.VERIFIED
                                       ).order_by().values("volume")
    drifted = (Volume.objects.annotate(
        verified_bytes=Coalesce(Subquery(verified.annotate(t=Sum("length")).values("t")), 0),
        verified_count=Coalesce(Subquery(verified.annotate(n=Count("pk")).values("n")), 0))
        .exclude(live_bytes=F("verified_bytes"), file_count=F("verified_count"))
        .values_list("pk", "label", "live_bytes", "file_count", "verified_bytes",
                     "verified_count"))
    return [Violation(VOLUME_COUNTS, f"{label} records {live_bytes} live bytes in {file_count} "
                      f"copies; its verified copies hold {live} in {copies}", volume_id=pk,
                      extra={"live_bytes": live, "file_count": copies})
            for pk, label, live_bytes, file_count, live, copies in drifted]


DUPLICATE_KEYS = {Req.Kind.MIGRATE: ("file_id", "copy_number"), Req.Kind.RECALL: ("file_id",),
                  Req.Kind.AUDIT: ("file_id", "copy_number", "volume_id"),
                  Req.Kind.REPACK: ("volume_id",)}


def requests_unique():
    """No two queued or running requests for the same work (the later ones are reported)."""
    found = []
    for kind, keys in DUPLICATE_KEYS.items():
        seen = {}
        for row in Req.objects.filter(kind=kind, state__in=ACTIVE).order_by("pk").values(
                "pk", *keys):
            key = tuple(row[k] for k in keys)
            if key in seen:
                found.append(Violation(
                    REQUEST_DUPLICATE, f"{kind} request {row['pk']} repeats request {seen[key]}",
                    request_id=row["pk"], file_id=row.get("file_id"),
                    volume_id=row.get("volume_id")))
            else:
                seen[key] = row["pk"]
    return found


def stuck_requests(now=None):
    """A running request is on a drive whose lease is live, or held by an object mover's live
    lease (a repack runs without a drive)."""
    now = now or timezone.now()
    live = (Q(drive__lease_until__gt=now) & ~Q(drive__lease_owner="")) | Q(
        bucket__isnull=False, drive__isnull=True, lease_until__gt=now)
    rows = (Req.objects.filter(state=Req.State.RUNNING).exclude(kind=Req.Kind.REPACK)
            .exclude(live).values_list("pk", "kind", "file_id", "drive__name"))
    return [Violation(REQUEST_STUCK, f"{kind} request {pk} is running on "
                      + (f"drive {drive}, whose lease has run out" if drive else "no drive"),
                      request_id=pk, file_id=file_id) for pk, kind, file_id, drive in rows]


def unservable_recalls():
    """A pending recall has a whole, verified, readable copy to read."""
    rows = list(Req.objects.filter(kind=Req.Kind.RECALL, state__in=ACTIVE).values_list(
        "pk", "file_id", "file__size", "file__name"))
    copies = verified_segments([file_id for _, file_id, _, _ in rows])
    return [Violation(RECALL_UNSERVABLE, f"recall {pk} of {name} waits for a copy that no "
                      "readable volume or bucket holds", request_id=pk, file_id=file_id)
            for pk, file_id, size, name in rows
            if not any(readable_copy(s, size) for s in copies.get(file_id, {}).values())]


def missing_migrations():
    """A cached file of an ARCHIVING granule, and a DIRTY one, has a queued or running migration
    for every copy its policy asks for that is not yet whole and readable on tape."""
    entries = CacheEntry.objects.exclude(state=CacheEntry.State.STAGING).filter(
        Q(state=CacheEntry.State.DIRTY) | Q(file__granule__state=Granule.State.ARCHIVING))
    found, policy = [], policies()
    for chunk in _chunks(entries.order_by("file_id").values_list(
            "file_id", "file__size", "file__name", "file__granule__collection_id")):
        ids = [file_id for file_id, *_ in chunk]
        copies = verified_segments(ids)
        pending = set(Req.objects.filter(kind=Req.Kind.MIGRATE, state__in=ACTIVE,
                                         file_id__in=ids).values_list("file_id", "copy_number"))
        for file_id, size, name, collection_id in chunk:
            for number, target in sorted(policy.get(collection_id, {}).items()):
                segments = copies.get(file_id, {}).get(number, [])
                if (file_id, number) in pending or readable_copy(segments, size) or any(
                        s["volume__state"] in UNREADABLE for s in segments):
                    continue  # whole, queued, or for background repair to replace
                found.append(Violation(
                    MIGRATION_MISSING, f"{name}: copy {number} is missing and no migration "
                    "writes it", file_id=file_id,
                    extra={"copy_number": number, "target": list(target)}))
    return found


def cache_files():
    """Each cache entry's file is there, with the entry's size."""
    found = []
    entries = (CacheEntry.objects.exclude(state=CacheEntry.State.STAGING)
               .select_related("file__granule__collection").order_by("file_id"))
    for entry in entries.iterator(chunk_size=CHUNK):
        path = cache_path(entry.file)
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            found.append(Violation(CACHE_FILE_MISSING, f"{entry.file.name} ({entry.state}) is "
                                   f"not at {path}", file_id=entry.file_id))
            continue
        if size != entry.size or size != entry.file.size:
            found.append(Violation(CACHE_FILE_SIZE, f"{entry.file.name} in the cache has {size} "
                                   f"bytes, not {entry.file.size}", file_id=entry.file_id))
    return found


def repacks_recycled():
    """The last repack of a volume, once DONE, left it recycled: not read-only, and nothing on
    it verified from before the repack ended."""
    found = []
    last = (Req.objects.filter(kind=Req.Kind.REPACK).order_by().values("volume_id")
            .annotate(last=Max("pk")))
    for repack in Req.objects.filter(pk__in=[r["last"] for r in last], state=Req.State.DONE
                                     ).select_related("volume"):
        volume = repack.volume
        older = FileCopy.objects.filter(volume=volume, state=FileCopy.State.VERIFIED,
                                        created_at__lt=repack.finished_at or timezone.now())
        if volume.state == Volume.State.READ_ONLY or older.exists():
            found.append(Violation(
                REPACK_NOT_RECYCLED, f"repack {repack.pk} is done but {volume.label} is "
                f"{volume.state} with copies from before it", request_id=repack.pk,
                volume_id=volume.pk))
    return found


CHECKS = (archived_copies, live_segments_unique, volume_counts, requests_unique, stuck_requests,
          unservable_recalls, missing_migrations, cache_files, repacks_recycled)
