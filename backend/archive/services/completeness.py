"""Whether copies are complete, and the granules that become ARCHIVED when they are."""
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from backend.catalog import bulk
from backend.catalog.models import Collection, File, Granule
from backend.events import services as events

from ..models import FileCopy, Volume
from ..signals import granule_archived, granules_archived
from .policy import policy_copies

UNREADABLE = (Volume.State.SUSPECT, Volume.State.RETIRED)


def readable_copies():
    """Verified segments on volumes that can be read: the only ones that count. A copy on a
    suspect or retired volume is kept in the catalog (the volume may come back) but neither
    completes a file nor lets its cache copy go, so it is repaired like a bad one."""
    return FileCopy.objects.filter(state=FileCopy.State.VERIFIED).exclude(
        volume__state__in=UNREADABLE)


def recall_candidates(file):
    """[(copy_number, [segments])] per copy that can still serve: verified, on readable volumes."""
    copies = (readable_copies().filter(file=file).select_related("volume", "bucket")
              .order_by("copy_number", "file_offset"))
    by_copy = {}
    for c in copies:
        by_copy.setdefault(c.copy_number, []).append(c)
    return list(by_copy.items())


def object_copy_for(file, exclude=()):
    """The readable object copy a recall of `file` reads first, or None (tape then)."""
    return (readable_copies().filter(file=file, bucket__isnull=False)
            .exclude(pk__in=list(exclude)).order_by("copy_number").first())


def complete_copies(files):
    """{(file id, copy number)} among `files` whose readable verified segments cover the
    whole file."""
    sizes = {f.pk: f.size for f in files}
    rows = (readable_copies().filter(file_id__in=list(sizes))
            .order_by().values_list("file_id", "copy_number").annotate(total=Sum("length")))
    return {(file_id, n) for file_id, n, total in rows if (total or 0) >= sizes[file_id]}


def copy_complete(file, copy_number):
    """Verified segments of this copy cover the whole file."""
    return (file.pk, copy_number) in complete_copies([file])


def files_copies_complete(files):
    """The ids of `files` (granule and collection loaded) whose every required copy is
    verified end to end."""
    complete, policies = complete_copies(files), {}
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


# A granule in these states is never made ARCHIVED by a copy being verified: it is already, or
# an operator withdrew or deleted it (a repair of a withdrawn granule's copy must not publish it).
SETTLED = (Granule.State.ARCHIVED, Granule.State.WITHDRAWN, Granule.State.DELETED)


def complete_granules_if_archived(granule_ids, complete_files=frozenset()):
    """Mark ARCHIVED those granules whose every file has every required copy verified, and
    send granule_archived for each after commit. The granule rows are locked first, so two
    movers that verify the last two copies at once cannot both miss the other's.
    `complete_files`: ids the caller has just found complete under the same locks."""
    if not granule_ids:
        return []
    with transaction.atomic():
        granules = {g.pk: g for g in Granule.objects.select_for_update().filter(
            pk__in=granule_ids).exclude(state__in=SETTLED).order_by("pk").only(
            "pk", "state", "collection_id", "granule_id", "version", "replaces_id")}
        if not granules:
            return []
        collections = Collection.objects.in_bulk({g.collection_id for g in granules.values()})
        for g in granules.values():
            g.collection = collections[g.collection_id]
        # plain rows: a batch's files are nearly all among complete_files, and need no object;
        # unordered (the model's order by granule joins and sorts the granules)
        files = list(File.objects.filter(granule_id__in=list(granules)).order_by().values_list(
            "pk", "granule_id", "size"))
        unknown = [bulk.loaded(File, ("id", "granule_id", "size"), row) for row in files
                   if row[0] not in complete_files]
        for f in unknown:
            f._state.fields_cache["granule"] = granules[f.granule_id]
        complete = set(complete_files) | files_copies_complete(unknown)
        done = set(granules) - {granule_id for pk, granule_id, _ in files if pk not in complete}
        if not done:
            return []
        now = timezone.now()
        Granule.objects.filter(pk__in=done).update(
            state=Granule.State.ARCHIVED, archived_at=now, updated_at=now)
        archived = [granules[pk] for pk in sorted(done)]
        for granule in archived:
            granule.state, granule.archived_at = Granule.State.ARCHIVED, now
        events.emit_many([events.granule_event("granule.archived", g) for g in archived])
        transaction.on_commit(lambda: _announce(archived))
    return archived


def _announce(granules):
    granules_archived.send(sender=Granule, granules=granules)
    for granule in granules:
        granule_archived.send(sender=Granule, granule=granule)
