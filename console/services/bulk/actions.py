"""What each kind of bulk job does to one granule (`start`) and, for the kinds that queue
archive work, when that work is over (`check`).

`start` runs inside the transaction that records the item's outcome, so the effect and its
record commit together: a worker killed in between leaves neither, and the item is done again
as if for the first time. Archive work queued by `start` (recalls, audits, migrations) is
shared with whoever else asked for the same bytes, and the item waits until it is final."""
from dataclasses import dataclass, field

from backend.archive.models import ArchiveRequest, FileCopy, Silo
from backend.archive.services import (
    ArchiveError,
    audit_files,
    complete_copies,
    delete_granule,
    make_available,
    policy_copies,
    queue_copy,
    readable_copies,
    withdraw_granule,
)
from backend.catalog.models import Granule
from ingest.models import IngestGranule
from ingest.services import outcome as ingest_outcome

DONE, SKIPPED, FAILED, WAITING = "done", "skipped", "failed", "waiting"
ACTIVE = (ArchiveRequest.State.QUEUED, ArchiveRequest.State.RUNNING)


@dataclass
class Result:
    state: str
    outcome: str
    requests: list = field(default_factory=list)


def _files(granule):
    return list(granule.files.select_related("granule__collection").order_by("pk"))


def reingest(job, granule):
    """Send the granule's failed ingest round again, with ingest's own retry: the latest
    ingest row for this collection and granule id, when it failed. An archived granule is
    skipped: the archive already holds its verified bytes, and a changed delivery is a new
    ingest request, decided by the collection's duplicate policy."""
    row = (IngestGranule.objects.filter(collection_key=granule.collection.key,
                                        granule_id=granule.granule_id)
           .select_related("request").order_by("-created_at", "-pk").first())
    if row is None:
        return Result(SKIPPED, "no ingest request delivered it")
    if row.state != IngestGranule.State.FAILED:
        return Result(SKIPPED, f"its latest ingest (request #{row.request_id}) is "
                               f"{row.state}: nothing to send round again")
    ingest_outcome.retry(row.request, positions=[row.position])
    return Result(DONE, f"sent round again in ingest request #{row.request_id} "
                        f"(it had failed: {row.reason or 'no reason given'})")


def withdraw(job, granule):
    """Hidden from users, kept on tape (the retirement service refuses what is not archived)."""
    withdraw_granule(granule, by=job.requested_by, reason=job.reason)
    return Result(DONE, "withdrawn: hidden from search and new orders, kept on tape")


def delete(job, granule):
    released = delete_granule(granule, by=job.requested_by, reason=job.reason)
    return Result(DONE, f"deleted; {released:,} bytes released on tape")


def recall(job, granule):
    """Bring every file into the cache (one recall per file, shared with orders)."""
    if granule.state != Granule.State.ARCHIVED:
        return Result(FAILED, f"the granule is {granule.state}, not archived")
    answers = make_available(_files(granule), requested_by=job.requested_by, share="bulk")
    errors = [a.error for a in answers if a.error]
    if errors:
        return Result(FAILED, errors[0])
    waiting = [a.request_id for a in answers if not a.ready]
    if not waiting:
        return Result(SKIPPED, "every file is in the cache already")
    return Result(WAITING, f"{len(waiting)} of {len(answers)} files being recalled", waiting)


def verify(job, granule):
    """Re-read every readable copy of every file and check it against the catalog checksum."""
    files = _files(granule)
    if not files:
        return Result(SKIPPED, "the granule has no files")
    queued = audit_files(files, requested_by=job.requested_by)
    bare = [f.name for f in files if not queued[f.pk]]
    if bare:
        return Result(FAILED, f"{bare[0]} has no readable copy to re-read")
    requests = [pk for ids in queued.values() for pk in ids]
    return Result(WAITING, f"{len(requests)} copies being re-read", requests)


def move(job, granule):
    """Write the copy that the collection's policy puts on the target group onto it, where it
    is not there already; the old copy is released once the new one is verified."""
    target = job.target
    files = _files(granule)
    try:
        wanted = dict(policy_copies(granule.collection))
    except ArchiveError as exc:
        return Result(FAILED, str(exc))
    number = next((n for n, g in wanted.items()
                   if g.medium == target.medium and g.pk == target.pk), None)
    if number is None:
        return Result(FAILED, f"the policy of {granule.collection.key} puts no copy on "
                              f"{target.name}; change the policy first (a copy off its "
                              "policy's group does not count)")
    complete = complete_copies(files)
    requests = []
    for f in files:
        where = _copy_targets(f, number)
        if (f.pk, number) in complete and where == {(target.medium, target.pk)}:
            continue
        clash = _silo_clash(f, number, target)
        if clash:
            return Result(FAILED, clash)
        request, error = queue_copy(f, number, target, requested_by=job.requested_by)
        if error:
            return Result(FAILED, f"{f.name}: {error}")
        request = request or ArchiveRequest.objects.filter(
            file=f, kind=ArchiveRequest.Kind.MIGRATE, state__in=ACTIVE,
            copy_number=number).first()
        requests.append(request.pk)
    if not requests:
        return Result(SKIPPED, f"copy {number} is on {target.name} already")
    return Result(WAITING, f"copy {number} of {len(requests)} files being written to "
                           f"{target.name}", requests)


def _copy_targets(file, number):
    """{(medium, volume group or bucket id)} where the live segments of this copy lie."""
    return {("object", bucket) if bucket else ("tape", group)
            for group, bucket in readable_copies().filter(file=file, copy_number=number)
            .values_list("volume__group_id", "bucket_id")}


def _silo_clash(file, number, target):
    """Why the copy may not go to `target`: another copy of the file is in its silo (copies
    are kept in different silos where there are several); '' when it may."""
    if target.medium != "tape" or target.silo_id is None or Silo.objects.count() < 2:
        return ""
    other = (FileCopy.objects.filter(file=file, state=FileCopy.State.VERIFIED,
                                     volume__silo_id=target.silo_id)
             .exclude(copy_number=number).values_list("copy_number", flat=True).first())
    if other is None:
        return ""
    return (f"{file.name}: copy {other} is in silo {target.silo.name} already, the silo of "
            f"{target.name}; copies are kept in different silos")


START = {"reingest": reingest, "withdraw": withdraw, "delete": delete, "recall": recall,
         "verify": verify, "move": move}


def check(kind, items):
    """{item pk: (state, outcome)} for the waiting `items` whose archive work is over."""
    wanted = {pk for item in items for pk in item.requests}
    requests = {r.pk: r for r in ArchiveRequest.objects.filter(pk__in=wanted).only(
        "pk", "state", "error", "file_id")}
    out = {}
    for item in items:
        mine = [requests.get(pk) for pk in item.requests]
        if any(r is not None and r.state in ACTIVE for r in mine):
            continue
        lost = [r for r in mine if r is None or r.state != ArchiveRequest.State.DONE]
        flagged = [r for r in mine if r is not None and r.error]
        if lost:
            why = lost[0].error if lost[0] is not None else "its archive request is gone"
            out[item.pk] = (FAILED, f"{_verb(kind)} failed: {why or lost[0].state}")
        elif kind == "verify" and flagged:
            out[item.pk] = (FAILED, f"{len(flagged)} of {len(mine)} copies failed: "
                                    f"{flagged[0].error}")
        else:
            out[item.pk] = (DONE, _finished(kind, len(mine)))
    return out


def _verb(kind):
    return {"recall": "the recall", "verify": "the re-read", "move": "the new copy"}[kind]


def _finished(kind, count):
    return {"recall": f"in the cache ({count} files recalled)",
            "verify": f"{count} copies re-read: each matches its checksum",
            "move": f"{count} files' copies written and verified on the new group"}[kind]
