"""What each granule of a request waits for, or why it stopped, and what happens next, with the
actions that can still succeed: every state a provider sees says so. A granule whose copies
the archive cannot write (its only cached copy fails its checksum) reads as stopped, not as
"archiving 0 %" for ever."""
import os

from backend.actions import REDELIVER, RETRY, can, cannot
from backend.archive import services as archive

from ..models import IngestGranule
from .staging import staged_path, staging_area
from .states import G

RESUBMIT = "stage its files again and retry, or submit the granule in a new request"
NEW_REQUEST = "submit the granule in a new request, declaring each file's real checksum"
WAITING = {
    G.STAGED: "Its files are in the staging area: their sizes and checksums are checked next.",
    G.VALIDATED: "Its sizes and checksums match: it is registered in the catalog and handed "
                 "to the archive next.",
    G.ARCHIVED: "Archived: every copy is written and verified.",
}


def explain(request, rows):
    """Add `status` (a sentence: what the granule waits for, or why it stopped and what
    happens next), `stopped` (it needs someone to act) and `actions` to each of `rows`
    (dicts of a request's granules with position, state, reason, catalog_granule)."""
    open_rows = [r for r in rows if r["state"] != G.ARCHIVED]
    details = dict((pos, rest) for pos, *rest in IngestGranule.objects.filter(
        request=request, position__in=[r["position"] for r in open_rows]).values_list(
        "position", "admitted", "lease_owner", "spec").iterator(chunk_size=2000))
    archiving = [r["catalog_granule"] for r in open_rows
                 if r["state"] == G.ARCHIVING and r["catalog_granule"]]
    work = archive.copy_work(archiving) if archiving else {}
    damaged = archive.damaged_only_copies(
        {w[0] for items in work.values() for w in items if w[3] == "failed"})
    area = staging_area(request.provider)
    for row in rows:
        admitted, lease, spec = details.get(row["position"], (True, "", {}))
        row["stopped"], row["actions"] = False, []
        if row["state"] == G.FAILED:
            _failed(row, area, spec)
        elif row["state"] == G.ARCHIVING:
            _archiving(row, admitted, work.get(row["catalog_granule"], []), damaged)
        elif row["state"] == G.RECEIVED:
            row["status"] = ("Being read by an ingest worker: its files are fetched and checked "
                             "next." if lease else "Waiting for an ingest worker: it is taken "
                             "in the order the requests came.")
        else:
            row["status"] = WAITING[row["state"]]
    return rows


def explain_failed(granules):
    """{pk: {"status", "actions"}} for failed IngestGranule rows of any requests (the operator's
    views), as `explain` says them to the provider."""
    out, areas, folders = {}, {}, {}
    for g in granules:
        area = areas.get(g.request.provider_id)
        if area is None:
            area = areas[g.request.provider_id] = staging_area(g.request.provider)
        row = {"reason": g.reason}
        _failed(row, area, g.spec, folders)
        out[g.pk] = {"status": row["status"], "actions": row["actions"]}
    return out


def _failed(row, area, spec, folders=None):
    """A failed granule: the reason, and whether checking its staged files again can help
    (`folders`: staged_path's cache of resolved folders, shared by a caller judging many)."""
    row["stopped"] = True
    hopeless = _placeholder_checksum(spec)
    missing = [] if hopeless else _not_staged(area, spec, folders)
    if hopeless:
        retry = cannot(RETRY, f"{hopeless} was declared with a checksum of only zeros, which no "
                              "file has: checking it again fails again")
        then = NEW_REQUEST
    elif missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        retry = cannot(RETRY, f"{missing[0]}{more} is not in the staging area: upload it, "
                              "then retry")
        then = f"upload {missing[0]}{more} to the staging area, then retry"
    else:
        retry = can(RETRY, "check its staged files again and archive them")
        then = "retry it once the cause is fixed"
    row["actions"] = [retry, can(REDELIVER, NEW_REQUEST if hopeless else RESUBMIT)]
    row["status"] = f"Stopped: {row['reason'] or 'no reason was recorded'}. Next: {then}."


def _placeholder_checksum(spec):
    """The name of a file declared with a checksum of zeros (a placeholder), or ''."""
    for f in spec.get("files", []):
        value = str(f.get("checksum") or "")
        if value and set(value) == {"0"}:
            return f.get("name") or f.get("path") or "a file"
    return ""


def _not_staged(area, spec, folders=None):
    missing = []
    for f in spec.get("files", []):
        path = staged_path(area, f.get("path") or f.get("name") or "", folders)
        if path is None or not os.path.isfile(path):
            missing.append(f.get("path") or f.get("name"))
    return missing


def _archiving(row, admitted, work, damaged):
    """In the archive's hands: waiting for cache room, for its copies, or stopped on one."""
    if not admitted:
        row["status"] = ("Waiting for room in the archive's disk cache: it is taken as soon as "
                         "older data has gone to tape. Nothing to do.")
        return
    if not work:
        row["status"] = "Every copy is written: it is marked archived next."
        return
    file_id, name, number, state, error, attempts = work[0]
    if state == "failed" and file_id in damaged:
        row["stopped"] = True
        row["actions"] = [cannot(RETRY, archive.only_copy_damaged(name)),
                          cannot(REDELIVER, "an operator gives the damaged copy up first")]
        row["status"] = (f"Stopped: the archive's only copy of {name} fails its checksum (it "
                         "changed after it was received), so no copy of it can be written to "
                         "tape. The operators have been told: they will ask you to deliver "
                         "the granule again, and it then fails here with that reason.")
    elif state == "failed":
        row["stopped"] = True
        row["status"] = (f"Stopped: writing copy {number} of {name} failed after {attempts} "
                         f"attempts: {error}. The operators have been told and retry it once "
                         "the cause is fixed.")
    elif state == "running":
        row["status"] = f"Copy {number} of {name} is being written and verified."
    else:
        waits = f" ({error})" if error else ""
        row["status"] = (f"Waiting for copy {number} of {name} to be written{waits}: "
                         f"{len(work)} cop{'y' if len(work) == 1 else 'ies'} still to write.")
