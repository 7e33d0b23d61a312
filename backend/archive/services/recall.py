"""Recall and reading, the interface for distribution: files made available, cached files opened."""
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q, Sum

from backend.catalog import checksums

from .. import hardware
from ..models import CacheEntry, Drive
from .cache import touch, touch_if_cached
from .completeness import readable_copies
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
                    out.append(Availability(f.pk, False, error="no readable copy on tape"))
                    continue
                request = queue_once(
                    kind=Req.Kind.RECALL, priority=priority, file=f, bytes_total=f.size,
                    requested_by=requested_by,
                ) or Req.objects.get(file=f, kind=Req.Kind.RECALL,
                                     state__in=[Req.State.QUEUED, Req.State.RUNNING])
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
