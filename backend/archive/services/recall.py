"""Recall and reading, the interface for distribution: files made available, cached files opened."""
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Q, Sum

from backend.catalog import checksums
from backend.catalog.models import File

from .. import hardware
from ..models import CacheEntry, Drive
from .cache import touch, touch_if_cached
from .completeness import readable_copies
from .objects import object_copy_for
from .paths import cache_path
from .policy import ArchiveError
from .queueing import Req, nudge, queue_once


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
                if not readable_copies().filter(file=f).exists():
                    out.append(Availability(f.pk, False, error="no readable copy"))
                    continue
                first = object_copy_for(f)
                request = queue_once(
                    kind=Req.Kind.RECALL, priority=priority, file=f, bytes_total=f.size,
                    requested_by=requested_by, bucket_id=first.bucket_id if first else None,
                ) or Req.objects.get(file=f, kind=Req.Kind.RECALL,
                                     state__in=[Req.State.QUEUED, Req.State.RUNNING])
                created = True
            elif priority < request.priority:
                Req.objects.filter(pk=request.pk).update(priority=priority)
        out.append(Availability(f.pk, False, request.pk, estimate_recall_s(request)))
    if created:
        transaction.on_commit(nudge)
    return out


# What an object store is taken to deliver to the cache, for estimates only.
OBJECT_STORE_B_S = 100e6


def estimate_recall_s(request):
    """Rough time until a recall is done: the work queued ahead of it over the online drives,
    or, from an object store (no mount), the bytes ahead of it at the store's rate."""
    if request.bucket_id:
        ahead = _active_recalls().filter(bucket__isnull=False, created_at__lte=request.created_at)
        return round(1 + (ahead.aggregate(total=Sum("bytes_total"))["total"] or 0)
                     / OBJECT_STORE_B_S, 1)
    drives = _online_drives()
    if not drives:
        return None
    ahead = _active_recalls().filter(
        Q(priority__lt=request.priority)
        | Q(priority=request.priority, created_at__lte=request.created_at))
    totals = ahead.aggregate(count=Count("pk"), total=Sum("bytes_total"))
    return _recall_seconds(drives, totals["count"], totals["total"] or 0)


def estimate_availability(granule_ids):
    """{granule id: (in_cache, eta_s)} for granules not yet ordered: every file in the cache
    now (eta None), or roughly how long until the rest would be, if the granule were ordered
    on its own now. A file some recall is already fetching is ready when that recall is;
    the others would queue behind every user recall. eta_s is None where nobody can say:
    no drive online, or a file with no readable copy on tape. Nothing is queued or touched:
    this is what the cart shows before an order."""
    files = list(File.objects.filter(granule_id__in=granule_ids)
                 .values_list("pk", "granule_id", "size"))
    cached = set(CacheEntry.objects.filter(file_id__in=[f[0] for f in files])
                 .exclude(state=CacheEntry.State.STAGING).values_list("file_id", flat=True))
    missing = [f for f in files if f[0] not in cached]
    answer = {pk: (True, None) for pk in granule_ids}
    if not missing:
        return answer
    ids = [f[0] for f in missing]
    fetching = {r.file_id: r for r in _active_recalls().filter(file_id__in=ids)}
    readable = set(readable_copies().filter(file_id__in=ids).values_list("file_id", flat=True))
    drives = _online_drives()
    queued = _active_recalls().filter(priority__lte=Req.Priority.USER).aggregate(
        count=Count("pk"), total=Sum("bytes_total"))
    by_granule = {}
    for pk, granule_id, size in missing:
        by_granule.setdefault(granule_id, []).append((pk, size))
    for granule_id, rows in by_granule.items():
        new = [(pk, size) for pk, size in rows if pk not in fetching]
        if not drives or any(pk not in readable for pk, _ in new):
            answer[granule_id] = (False, None)
            continue
        etas = [estimate_recall_s(fetching[pk]) for pk, _ in rows if pk in fetching]
        if new:
            etas.append(_recall_seconds(drives, queued["count"] + len(new),
                                        (queued["total"] or 0) + sum(s for _, s in new)))
        answer[granule_id] = (False, max(etas))
    return answer


def _online_drives():
    return list(Drive.objects.exclude(state=Drive.State.OFFLINE).select_related("model"))


def _active_recalls():
    return Req.objects.filter(kind=Req.Kind.RECALL,
                              state__in=[Req.State.QUEUED, Req.State.RUNNING])


def _recall_seconds(drives, count, nbytes):
    """`count` recalls of `nbytes` in all, shared by `drives`, plus one mount for the last."""
    model = drives[0].model
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
