"""The RAID cache: usage, the watermark purge, release, pins, and placing bytes in it."""
import os
import shutil
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, Sum
from django.utils import timezone

from backend.catalog.models import File
from backend.dbtriggers import compact, kept, refill

from .. import cache_policy
from ..models import CacheEntry, CacheStateTotal
from .completeness import file_copies_complete, files_copies_complete
from .paths import cache_path
from .policy import ArchiveError
from .queueing import Req

PURGE_CANDIDATES = 10000


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
    if kept():
        rows = CacheStateTotal.objects.values("state").annotate(total=Sum("bytes")).values_list(
            "state", "total").order_by()
    else:
        rows = CacheEntry.objects.values("state").annotate(total=Sum("size")).values_list(
            "state", "total")
    for state, total in rows:
        sums[state] = total or 0
    return CacheUsage(
        capacity=settings.GRANARY_CACHE_BYTES, used=sum(sums.values()),
        dirty=sums["dirty"], clean=sums["clean"], pinned=sums["pinned"], staging=sums["staging"],
    )


def rebuild_totals():
    """Sum the cache entries again (after a load that bypassed the trigger, such as COPY with
    triggers off); PostgreSQL only, where the totals are kept."""
    table = CacheEntry._meta.db_table
    refill(CacheStateTotal._meta.db_table, table, "state, bytes, entries",
           f"SELECT state, sum(size), count(*) FROM {table} GROUP BY state")


def _watermarks():
    return cache_policy.Watermarks(settings.GRANARY_CACHE_HIGH_WATERMARK,
                                   settings.GRANARY_CACHE_LOW_WATERMARK)


def _copies_verified_ids(file_ids):
    """The files among file_ids whose every required copy is verified end to end."""
    return files_copies_complete(list(
        File.objects.filter(pk__in=file_ids).select_related("granule__collection")))


def _unkept_clean(now):
    """Clean entries no order keeps any longer, least recently used first: the only ones the
    purge may take (a kept entry is filtered here, so thousands of kept files never crowd the
    purgeable ones out of the candidates). Browse images are never taken: they are small, and
    granule pages and search show them whatever the data's residency."""
    return (CacheEntry.objects.filter(state=CacheEntry.State.CLEAN)
            .filter(Q(keep_until__isnull=True) | Q(keep_until__lte=now))
            .exclude(file__role=File.Role.BROWSE)
            .exclude(Exists(_copy_being_written()))
            .order_by("last_access"))


def _copy_being_written():
    """A migration of the entry's file queued or running: a repack or repair writes a copy
    from these bytes, so they stay until it is written (dropping them made the mover recall
    the file again, or find it gone)."""
    return Req.objects.filter(file_id=OuterRef("file_id"), kind=Req.Kind.MIGRATE,
                              state__in=[Req.State.QUEUED, Req.State.RUNNING])


def _purgeable(candidates, now):
    """The policy's view of `candidates` (copies verified or not, residency)."""
    verified = _copies_verified_ids([c.file_id for c in candidates])
    return [
        cache_policy.CachedFile(
            file_id=c.file_id, size=c.size, last_access=c.last_access.timestamp(),
            keep_until=c.keep_until.timestamp() if c.keep_until else None,
            copies_verified=c.file_id in verified,
        )
        for c in candidates
    ]


def purge(incoming=0):
    """Free cache space for `incoming` bytes by the watermark rule; returns bytes freed."""
    usage = cache_usage()
    need = cache_policy.bytes_to_free(usage.used, usage.capacity, incoming, _watermarks())
    if not need:
        return 0
    now = timezone.now()
    view = _purgeable(list(_unkept_clean(now)[:PURGE_CANDIDATES]), now)
    freed = 0
    for victim in cache_policy.choose_victims(view, need, now.timestamp()):
        freed += _drop_from_cache(victim.file_id)
    return freed


def room(at_least):
    """Bytes a recall could have now: free space plus what the purge may take, counted only
    until `at_least` is reached (the scheduler asks per decision: the usual answer, free space
    enough, costs one query; a cache full of kept files costs two)."""
    usage = cache_usage()
    have = usage.capacity - usage.used
    if have >= at_least:
        return have
    now = timezone.now()
    unkept = _unkept_clean(now)
    most = have + (unkept.aggregate(total=Sum("size"))["total"] or 0)
    if most < at_least:
        return most
    candidates = list(unkept[:PURGE_CANDIDATES])
    for start in range(0, len(candidates), 500):
        for entry in _purgeable(candidates[start:start + 500], now):
            if cache_policy.purgeable(entry, now.timestamp()):
                have += entry.size
        if have >= at_least:
            break
    return have


def _drop_from_cache(file_id):
    """Delete one entry the purge chose, unless it was kept (an order made it ready) or
    pinned since the purge looked: the row lock decides, so a keep never loses to a purge."""
    with transaction.atomic():
        entry = (CacheEntry.objects.select_for_update(of=("self",))
                 .select_related("file__granule__collection")
                 .filter(file_id=file_id, state=CacheEntry.State.CLEAN)
                 .filter(Q(keep_until__isnull=True) | Q(keep_until__lte=timezone.now()))
                 .exclude(Exists(_copy_being_written()))
                 .first())
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
        if file.role == File.Role.BROWSE:
            raise ArchiveError(f"{file.name} is a browse image: those stay in the cache, "
                               "whatever the data's residency, for granule pages and search")
        if entry.keep_until and entry.keep_until > timezone.now():
            raise ArchiveError(f"{file.name} is kept in the cache for an order until "
                               f"{entry.keep_until:%Y-%m-%d %H:%M} UTC")
        if not file_copies_complete(file):
            raise ArchiveError(f"{file.name} has tape copies still unverified")
        if Req.objects.filter(file=file, kind=Req.Kind.MIGRATE,
                              state__in=[Req.State.QUEUED, Req.State.RUNNING]).exists():
            raise ArchiveError(f"{file.name} is being written to tape again (a repack or "
                               "repair); release it once that is done")
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


def place(source, target):
    """Put bytes into the cache: a hard link on the same filesystem, a copy otherwise. The
    file appears whole or not at all; its bucket directory is made the first time only."""
    target = os.fspath(target)
    try:
        os.link(source, target)
        return
    except FileNotFoundError:
        if not os.path.exists(source):
            raise
        os.makedirs(os.path.dirname(target), exist_ok=True)
    except OSError:
        pass
    tmp = target + ".incoming"
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    os.replace(tmp, target)


def compact_totals():
    """Fold the total rows the statement triggers added into one per state."""
    compact(CacheStateTotal._meta.db_table, ["state"], ["bytes", "entries"])


def keep_until(file_ids, until):
    """Keep files from the purge until `until`, never shortening a longer keep (an order's
    ready files, a collection's data pool)."""
    (CacheEntry.objects.filter(file_id__in=file_ids)
     .filter(Q(keep_until__isnull=True) | Q(keep_until__lt=until))
     .update(keep_until=until))


def end_keep(file_id, kept_until):
    """Let the purge take a file again, unless it is kept past `kept_until` (a longer keep
    than the one ending: the collection's data pool)."""
    CacheEntry.objects.filter(file_id=file_id, keep_until__lte=kept_until).update(
        keep_until=None)
