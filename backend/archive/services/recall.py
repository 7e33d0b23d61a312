"""Recall and reading, the interface for distribution: files made available, cached files opened."""
import bisect
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q, Sum
from django.utils import timezone

from backend.catalog import checksums
from backend.catalog.models import File

from .. import hardware
from ..models import CacheEntry, Drive
from .cache import touch
from .completeness import readable_copies, recall_candidates
from .paths import cache_path
from .policy import ArchiveError
from .queueing import WAITING_FOR_CACHE, Req, nudge, queue_once


@dataclass
class Availability:
    file_id: int
    ready: bool
    request_id: int | None = None
    eta_s: float | None = None
    error: str = ""


def make_available(files, requested_by=None, priority=Req.Priority.USER, share=""):
    """Ready files now; queue one shared recall for each of the others, with an estimate.
    `share` (Req.Share) is the kind of work a new recall serves, for the drives' fair share.
    The files are handled together: a few queries whatever their number (a stage request's
    10,000 files took a dozen queries each, and an estimate that read every queued recall)."""
    files = list(files)
    ready = _touch_cached([f.pk for f in files])
    errors, requests = {}, {}
    rest = [f for f in files if f.pk not in ready]
    if rest:
        with transaction.atomic():
            requests = _active_recalls_locked([f.pk for f in rest])
            missing = [f for f in rest if f.pk not in requests]
            # a recall that committed after the check above left it cached: its DONE and the
            # cache entry commit together, so one of the two reads sees it
            ready |= _touch_cached([f.pk for f in missing])
            missing = [f for f in missing if f.pk not in ready]
            readable = set(readable_copies().filter(file_id__in=[f.pk for f in missing])
                           .values_list("file_id", flat=True))
            errors = {f.pk: "no readable copy" for f in missing if f.pk not in readable}
            queued = _queue_recalls([f for f in missing if f.pk in readable],
                                    requested_by=requested_by, priority=priority, share=share)
            requests.update(queued)
            _raise_priority([r for r in requests.values() if priority < r.priority], priority)
        if queued:
            transaction.on_commit(nudge)
    etas = _estimates(list(requests.values()))
    out = []
    for f in files:
        if f.pk in ready:
            out.append(Availability(f.pk, True))
        elif f.pk in errors:
            out.append(Availability(f.pk, False, error=errors[f.pk]))
        else:
            request = requests[f.pk]
            out.append(Availability(f.pk, False, request.pk, etas[request.pk]))
    return out


def _touch_cached(file_ids):
    """The ids among `file_ids` in the cache (not staging), marked as just used."""
    if not file_ids:
        return set()
    entries = CacheEntry.objects.filter(file_id__in=file_ids).exclude(
        state=CacheEntry.State.STAGING)
    found = set(entries.values_list("file_id", flat=True))
    if found:
        CacheEntry.objects.filter(file_id__in=found).update(last_access=timezone.now())
    return found


def _active_recalls_locked(file_ids):
    """{file id: its queued or running recall}, the rows locked (in id order) till commit."""
    return {r.file_id: r for r in Req.objects.select_for_update().filter(
        file_id__in=file_ids, kind=Req.Kind.RECALL,
        state__in=[Req.State.QUEUED, Req.State.RUNNING]).order_by("pk")}


def _queue_recalls(files, **fields):
    """{file id: recall} for `files`, one new recall each unless another process queued one
    meanwhile (the request_one_active_* constraints decide: that one is shared)."""
    if not files:
        return {}
    buckets = {}
    for file_id, bucket_id in (readable_copies().filter(
            file_id__in=[f.pk for f in files], bucket__isnull=False)
            .order_by("file_id", "-copy_number").values_list("file_id", "bucket_id")):
        buckets[file_id] = bucket_id          # the lowest copy number's bucket wins
    Req.objects.bulk_create(
        [Req(kind=Req.Kind.RECALL, file=f, bytes_total=f.size, bucket_id=buckets.get(f.pk),
             **fields) for f in files], ignore_conflicts=True, batch_size=1000)
    out = _active_recalls_locked([f.pk for f in files])
    for f in files:
        if f.pk not in out:    # queued and finished by another process in between: ask again
            out[f.pk] = queue_once(kind=Req.Kind.RECALL, file=f, bytes_total=f.size,
                                   bucket_id=buckets.get(f.pk), **fields) or Req.objects.get(
                file=f, kind=Req.Kind.RECALL, state__in=[Req.State.QUEUED, Req.State.RUNNING])
    return out


def _raise_priority(requests, priority):
    if requests:
        Req.objects.filter(pk__in=[r.pk for r in requests]).update(priority=priority)
        for r in requests:
            r.priority = priority


def _estimates(requests):
    """{request id: estimate_recall_s(request)} for many requests, in a few queries: the work
    ahead of each is the total of its class less what was queued after it."""
    if not requests:
        return {}
    drives = _online_drives()
    out = {}
    on_tape = [r for r in requests if not r.bucket_id]
    for p in {r.priority for r in on_tape}:
        mine = [r for r in on_tape if r.priority == p]
        before = _active_recalls().filter(priority__lt=p).aggregate(
            count=Count("pk"), total=Sum("bytes_total"))
        later = _after(_active_recalls().filter(priority=p), mine)
        for r in mine:
            count, nbytes = later(r)
            out[r.pk] = None if not drives else _recall_seconds(
                drives, before["count"] + count, (before["total"] or 0) + nbytes)
    stored = [r for r in requests if r.bucket_id]
    if stored:
        later = _after(_active_recalls().filter(bucket__isnull=False), stored)
        for r in stored:
            out[r.pk] = round(1 + later(r)[1] / OBJECT_STORE_B_S, 1)
    return out


def _after(queryset, requests):
    """A function: request -> (count, bytes) of the rows of `queryset` created no later than
    it (the whole queryset's totals less the rows created after it)."""
    totals = queryset.aggregate(count=Count("pk"), total=Sum("bytes_total"))
    first = min(r.created_at for r in requests)
    rows = sorted(queryset.filter(created_at__gt=first).values_list("created_at", "bytes_total"))
    stamps = [t for t, _ in rows]
    suffix = [0] * (len(rows) + 1)
    for n in range(len(rows) - 1, -1, -1):
        suffix[n] = suffix[n + 1] + (rows[n][1] or 0)

    def ahead(request):
        cut = bisect.bisect_right(stamps, request.created_at)
        return (totals["count"] - (len(rows) - cut),
                (totals["total"] or 0) - suffix[cut])
    return ahead


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
    # the files with their cache entries' states, in one statement (a cart's every answer)
    rows = (File.objects.filter(granule_id__in=granule_ids).order_by()
            .values_list("pk", "granule_id", "size", "cache_entry__state"))
    missing = [(pk, granule_id, size) for pk, granule_id, size, state in rows
               if state is None or state == CacheEntry.State.STAGING]
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


def drop_damaged_cache(file):
    """A cached copy that fails its checksum is dropped when a readable copy elsewhere can take
    its place (the next use recalls it; the recall is queued now). Returns True if dropped;
    False when the cache holds the only copy, which is kept for an operator to judge."""
    if not _has_readable_copy(file):
        return False
    CacheEntry.objects.filter(file=file).delete()
    cache_path(file).unlink(missing_ok=True)
    make_available([file], priority=Req.Priority.BACKGROUND)
    return True


def _has_readable_copy(file):
    return any(sum(s.length for s in segments) >= file.size
               for _, segments in recall_candidates(file))


def wait_for_recall(migrations):
    """Migrations whose file left the cache: recall it from a readable copy and hold them out
    of the scheduler's view until it lands; with no readable copy they fail with the reason."""
    for request in migrations:
        # the catalog's entry names bytes that are gone: forget it, or the file looks cached
        CacheEntry.objects.filter(file=request.file).exclude(
            state=CacheEntry.State.STAGING).delete()
        await_file(request, Req.State.RUNNING)


def await_file(request, state):
    """Bring a migration's file back: the request (in `state`) goes back to the queue, waiting
    unscheduled for a recall when one is needed, or fails when no copy can be read."""
    f = request.file
    answer = make_available([f], priority=Req.Priority.BACKGROUND)[0]
    if not answer.error:
        Req.objects.filter(pk=request.pk, state=state).update(
            state=Req.State.QUEUED, drive=None,
            error="" if answer.ready else WAITING_FOR_CACHE)
    else:
        Req.objects.filter(pk=request.pk, state=state).update(
            state=Req.State.FAILED, drive=None, finished_at=timezone.now(),
            error=f"{f.name} is neither in the cache nor readable in any copy")


def unblock_waiting_migrations():
    """A migration waits for its file only while a recall for it is under way: one whose recall
    failed, was cancelled or never came asks again, goes on if the file is back, or fails with
    the reason. A wait never outlives its recall."""
    recalling = Req.objects.filter(file_id=OuterRef("file_id"), kind=Req.Kind.RECALL,
                                   state__in=[Req.State.QUEUED, Req.State.RUNNING])
    waiting = (Req.objects.filter(kind=Req.Kind.MIGRATE, state=Req.State.QUEUED,
                                  error=WAITING_FOR_CACHE)
               .exclude(Exists(recalling)).select_related("file"))
    for request in waiting:
        await_file(request, Req.State.QUEUED)


def fail_unrecallable(request_ids=None):
    """Fail queued recalls whose file has no readable copy left and is not in the cache: they
    would otherwise wait forever. The reason names what happened; an operator who brings a
    suspect volume back can retry them."""
    queued = Req.objects.filter(kind=Req.Kind.RECALL, state=Req.State.QUEUED)
    if request_ids is not None:
        queued = queued.filter(pk__in=request_ids)
    readable = readable_copies().filter(file_id=OuterRef("file_id"))
    cached = CacheEntry.objects.filter(file_id=OuterRef("file_id")).exclude(
        state=CacheEntry.State.STAGING)
    lost = queued.filter(~Exists(readable), ~Exists(cached))
    return lost.update(
        state=Req.State.FAILED, finished_at=timezone.now(),
        error="no readable copy: every copy failed its check, is missing from its bucket or "
              "lies on a suspect volume; repair or clear the volume, then retry")


def recalls_eta_s(request_ids):
    """About when the last of these recalls is done: the estimate of the one served last
    (lowest priority, newest); 0 when none is still queued or running, None when no drive is
    online to say."""
    last = (_active_recalls().filter(pk__in=request_ids)
            .order_by("-priority", "-created_at").first())
    return 0 if last is None else estimate_recall_s(last)


# Layers above the archive that wait for recalls of their own (an operator's bulk recall job):
# name -> needer(file ids) -> the file ids among them still waited for. The archive cannot ask
# them (they sit above it), so they tell it who to ask (register_recall_needer, in their app's
# ready()), as reconciliation's checks do.
_needers = {}


def register_recall_needer(name, needer):
    """Before any queued recall is cancelled (cancel_recalls), `needer(file ids)` is asked
    which of those files a layer above still waits for; their recalls go on. Registering the
    same name again replaces it."""
    _needers[name] = needer


def still_needed_by_others(file_ids):
    """The file ids among `file_ids` a waiting migration or a registered needer waits for."""
    needed = set(Req.objects.filter(kind=Req.Kind.MIGRATE, state=Req.State.QUEUED,
                                    error=WAITING_FOR_CACHE, file_id__in=file_ids)
                 .values_list("file_id", flat=True))
    for needer in list(_needers.values()):
        needed |= set(needer(set(file_ids) - needed))
    return needed


def cancel_recalls(request_ids, still_needed, reason):
    """Cancel the queued recalls among `request_ids` nobody needs any more (a stage request
    cancelled or deleted). The rows are locked first, so whoever asks for the same file meanwhile
    either shows in `still_needed(file ids) -> set of file ids` (the caller's own needers: orders,
    other stage requests) or in a registered needer's answer (register_recall_needer: an
    operator's bulk recall), or finds the recall cancelled and queues a new one. A recall a
    waiting migration needs, or one already running (its bytes are moving), goes on. Returns how
    many."""
    recalls = list(Req.objects.select_for_update().filter(
        pk__in=list(request_ids), kind=Req.Kind.RECALL, state=Req.State.QUEUED)
        .order_by("pk").values_list("pk", "file_id"))
    if not recalls:
        return 0
    file_ids = {file_id for _, file_id in recalls}
    needed = set(still_needed(file_ids))
    needed |= still_needed_by_others(file_ids - needed)
    return Req.objects.filter(pk__in=[pk for pk, f in recalls if f not in needed]).update(
        state=Req.State.CANCELLED, finished_at=timezone.now(), error=reason[:1000])
