"""Admission, the interface for ingest: a granule's files into the cache, its migrations queued."""
import os
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from backend.catalog import bulk
from backend.catalog.models import File, Granule

from ..models import CacheEntry
from .cache import place, reserve_cache
from .completeness import complete_copies, complete_granules_if_archived
from .paths import cache_location, cache_path
from .policy import ArchiveError, policy_copies, target_fields
from .queueing import Req, nudge
from .serving import fingerprint


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


def archive_granules(items, inserted=False):
    """archive_granule for many granules [(granule, sources)] at once: one cache reservation,
    one transaction of bulk inserts and one nudge. Returns an Admission per item, in order;
    a granule that cannot be taken gets one with `error` set and holds up no other.

    `inserted`: the caller's open transaction has just inserted the granules ARCHIVING (never
    admitted, so nothing of theirs is cached or queued): they are taken all together in that
    transaction, or ArchiveError is raised with nothing they placed left in the cache. Their
    state then needs no second write."""
    out = [None] * len(items)
    granule_ids = [g.pk for g, _ in items]
    files = {}
    for f in File.objects.filter(granule_id__in=granule_ids).order_by("pk"):
        files.setdefault(f.granule_id, []).append(f)
    cached = set() if inserted else set(CacheEntry.objects.filter(
        file__granule_id__in=granule_ids).exclude(
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
    placed = _place(todo, out)
    if inserted and any(a is not None for a in out):
        _unplace(placed)
        raise ArchiveError("; ".join(a.error or a.reason for a in out if a is not None))
    todo = [t for t in todo if t[0] in placed]
    try:
        created = _register_in_cache([(g, mine, placed[i], policies[g.collection_id])
                                      for i, g, _, mine, _ in todo],
                                     fresh=set(granule_ids) if inserted else None)
    except Exception:
        _unplace(placed)
        raise
    for (i, _, _, _, _), migrations in zip(todo, created, strict=True):
        out[i] = Admission(True, migrations=migrations)
    return out


def _place(todo, out):
    """Link or copy each item's files into the cache: {item index: files placed}; an item
    one of whose files cannot be placed leaves none there and is answered with the error."""
    placed = {}
    for i, granule, sources, _, to_place in todo:
        done = []
        try:
            for f in to_place:
                f.granule = granule
                place(sources[f.pk], cache_location(f))
                done.append(f)
        except OSError as exc:
            _unplace({i: done})
            out[i] = Admission(False, error=f"{exc}")
            continue
        placed[i] = done
    return placed


def _unplace(placed):
    for done in placed.values():
        for f in done:
            cache_path(f).unlink(missing_ok=True)


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
def _register_in_cache(batch, fresh=None):
    """Cache entries for the placed files and the migrations still missing, for a batch of
    (granule, files, placed, copies); the number of migrations queued per granule. `fresh`:
    the ids of granules inserted ARCHIVING in this transaction (else found by marking)."""
    now = timezone.now()
    inserted = fresh is not None
    if fresh is None:
        fresh = _to_archiving([g.pk for g, _, _, _ in batch], now)
    entries, wanted, residency = [], [], {}
    for granule, files, placed, copies in batch:
        if granule.collection_id not in residency:
            residency[granule.collection_id] = (
                granule.collection.archive_policy.cache_residency_days)
        days = residency[granule.collection_id]
        keep_until = now + timedelta(days=days) if days else None
        # ids, not objects, for the foreign keys: Django's related setters cost more than the
        # rest of building these thousands of rows
        # the bytes placed are those ingest validated: their fingerprint spares the first
        # download a hash pass before it starts (serving.open_checked checks it as it goes,
        # and records the block map of the bytes placed now)
        entries += [bulk.new(CacheEntry, file_id=f.pk, state=CacheEntry.State.DIRTY,
                             size=f.size, last_access=now, keep_until=keep_until,
                             checked=fingerprint(os.stat(cache_location(f))), verified_at=now,
                             blocks=None) for f in placed]
        wanted += [(f, n, target) for f in files for n, target in copies]
    if inserted:
        # files inserted in this transaction have no entry yet: no conflict to resolve, so the
        # rows are streamed (Django's upsert spells each of their ten values into the SQL)
        bulk.insert(entries)
    else:
        bulk.upsert(entries, unique_fields=["file"],
                    update_fields=["state", "size", "last_access", "keep_until", "checked",
                                   "verified_at", "blocks"])
    # a granule admitted for the first time has no migration or copy yet: only the others
    # (admitted again after a crash, a new copy for an archived one) are looked up
    seen = [f for f, _, _ in wanted if f.granule_id not in fresh]
    pending = set(Req.objects.filter(
        file_id__in=list({f.pk for f in seen}), kind=Req.Kind.MIGRATE,
        state__in=[Req.State.QUEUED, Req.State.RUNNING]).values_list(
        "file_id", "copy_number")) if seen else set()
    complete = complete_copies(seen) if seen else set()
    missing = [(f, n, target) for f, n, target in wanted
               if (f.pk, n) not in pending and (f.pk, n) not in complete]
    new = [bulk.new(Req, kind=Req.Kind.MIGRATE, priority=Req.Priority.MIGRATION, file_id=f.pk,
                    copy_number=n, bytes_total=f.size,
                    **{f"{name}_id": t.pk if t else None
                       for name, t in target_fields(target).items()})
           for f, n, target in missing]
    bulk.insert(new)
    per_granule = {}
    for f, _, _ in missing:
        per_granule[f.granule_id] = per_granule.get(f.granule_id, 0) + 1
    if new:
        objects = any(target.medium == "object" for _, _, target in missing)
        transaction.on_commit(lambda: nudge(objects=objects))
    complete_granules_if_archived([g.pk for g, _, _, _ in batch if g.pk not in per_granule])
    return [per_granule.get(g.pk, 0) for g, _, _, _ in batch]


def _to_archiving(granule_ids, now):
    """Mark the granules ARCHIVING; returns the ids of those that were REGISTERED: never
    admitted before, so no migration or copy of their files can exist. One UPDATE ... RETURNING
    decides it: an admission of the same granule racing this one waits on the row lock and
    then finds it ARCHIVING, so it looks its migrations up."""
    fresh = {pk for (pk,) in bulk.update_returning(
        Granule, granule_ids, {"state": Granule.State.ARCHIVING, "updated_at": now}, ["id"],
        where="state = %s", params=[Granule.State.REGISTERED])}
    Granule.objects.filter(pk__in=[pk for pk in granule_ids if pk not in fresh]).update(
        state=Granule.State.ARCHIVING, updated_at=now)
    return fresh
