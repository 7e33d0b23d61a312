"""Why a granule's archive work stopped, and what can still be done about it (the console's
granule list and page): the archive decides (backend.archive.services.remedies), this reads it
for granules."""
from backend.actions import REDELIVER, RETRY, can, cannot
from backend.archive import services as archive
from backend.archive.models import ArchiveRequest
from backend.catalog.models import Granule

UNFINISHED = (Granule.State.REGISTERED, Granule.State.ARCHIVING)


def failures(granules):
    """{granule id: the latest reason its archive work failed for good} for those of
    `granules` (still registered or archiving) whose migrations failed."""
    ids = [g.pk for g in granules if g.state in UNFINISHED]
    rows = (ArchiveRequest.objects.filter(kind=ArchiveRequest.Kind.MIGRATE,
                                          state=ArchiveRequest.State.FAILED,
                                          file__granule_id__in=ids)
            .order_by("file__granule_id", "-finished_at", "-pk")
            .values_list("file__granule_id", "error"))
    out = {}
    for granule_id, error in rows:
        out.setdefault(granule_id, error)
    return out


def granule_actions(granule):
    """What can be done about a granule whose archive work failed: retry it, or, when a file's
    only copy is damaged, only ask its provider to deliver it again. [] when nothing failed."""
    if not failures([granule]):
        return []
    files = dict(granule.files.values_list("pk", "name"))
    damaged = sorted(files[pk] for pk in archive.damaged_only_copies(files))
    if damaged:
        return [cannot(RETRY, archive.only_copy_damaged(", ".join(damaged))),
                can(REDELIVER, "give the granule up (failed, its damaged copy dropped) and ask "
                               "its provider to deliver it again")]
    return [can(RETRY, "retry its failed archive requests (Failures page)"),
            cannot(REDELIVER, "every file still has a sound copy: retry its archive work")]
