"""What can still be done about archive work that failed, and what a granule's copies wait for.

A migration whose only source is a cached copy that fails its catalog checksum cannot succeed
however often it is tried or repaired: only the provider's bytes can replace it. The archive
decides that here (from what the failed migration recorded and the copies that are left), so
the API can list the actions that can succeed and say why the others cannot."""
from django.db.models import Q

from backend.actions import REDELIVER, RETRY, can, cannot
from backend.catalog.models import File

from .completeness import complete_copies
from .queueing import Req, retry_failed

# what a migration records when the cached file it would write fails its checksum
CACHE_CHANGED = "does not match its catalog checksum (changed after ingest?)"
ONLY_COPY_DAMAGED = ("the cache holds the only copy of {name} and it fails its catalog "
                     "checksum, so writing or repairing a copy from it cannot succeed")
REDELIVER_WHY = ("ask the provider to deliver the granule again: it is marked failed with "
                 "the reason and its damaged copy dropped; the new delivery is archived anew")
ACTIVE = (Req.State.QUEUED, Req.State.RUNNING)


def damaged_only_copies(file_ids):
    """The ids among `file_ids` whose only copy is a cached one that fails its checksum: a
    failed migration found the cached bytes changed, and no readable copy covers the file."""
    failed = set(Req.objects.filter(
        file_id__in=list(file_ids), kind=Req.Kind.MIGRATE, state=Req.State.FAILED,
        error__contains=CACHE_CHANGED).values_list("file_id", flat=True))
    if not failed:
        return set()
    files = list(File.objects.filter(pk__in=failed).only("pk", "size"))
    readable = {file_id for file_id, _ in complete_copies(files)}
    return failed - readable


def only_copy_damaged(name):
    """Why nothing from the archive's side can help a file whose only copy is damaged."""
    return ONLY_COPY_DAMAGED.format(name=name)


def request_actions(requests):
    """{request id: [action]} for archive requests given as (id, state, file id, file name): a
    failed one can be retried unless its file's only copy is damaged, when only a redelivery
    can help; other states offer nothing."""
    damaged = damaged_only_copies({f for _, state, f, _ in requests if state == Req.State.FAILED
                                   and f is not None})
    out = {}
    for pk, state, file_id, name in requests:
        if state != Req.State.FAILED:
            out[pk] = []
        elif file_id in damaged:
            out[pk] = [cannot(RETRY, only_copy_damaged(name)), can(REDELIVER, REDELIVER_WHY)]
        else:
            out[pk] = [can(RETRY, "queue it again with a fresh count of attempts")]
    return out


def copy_work(granule_ids):
    """{granule id: [(file name, copy number, state, error, attempts)]}: the migrations of the
    granules' files that are still pending or failed (what their copies wait for), the failed
    ones first, each file's latest request per copy."""
    rows = (Req.objects.filter(kind=Req.Kind.MIGRATE, file__granule_id__in=list(granule_ids))
            .filter(Q(state__in=ACTIVE) | Q(state=Req.State.FAILED))
            .order_by("file__granule_id", "file_id", "copy_number", "-pk")
            .values_list("file__granule_id", "file_id", "file__name", "copy_number", "state",
                         "error", "attempts"))
    out, seen = {}, set()
    for granule_id, file_id, name, number, state, error, attempts in rows:
        if (file_id, number) in seen:
            continue
        seen.add((file_id, number))
        out.setdefault(granule_id, []).append((file_id, name, number, state, error, attempts))
    for work in out.values():
        work.sort(key=lambda w: (w[3] != Req.State.FAILED, w[1], w[2] or 0))
    return out


def retry_hopeful(requests):
    """retry_failed for the failed requests a retry can help: those whose file's only copy is
    damaged stay failed (trying them again would only fail again). Returns how many went."""
    requests = list(requests)
    damaged = damaged_only_copies({r.file_id for r in requests if r.file_id})
    return retry_failed([r for r in requests if r.file_id not in damaged])
