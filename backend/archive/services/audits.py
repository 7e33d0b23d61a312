"""Fixity audits: copies re-read and checked against their checksums, on their medium (a tape
audit is the drives' work through the scheduler; an object audit the object movers')."""
from django.db import transaction
from django.db.models import Sum

from backend.errors import Conflict

from ..models import ArchiveRequest, FileCopy
from .completeness import readable_copies
from .queueing import nudge, queue_once


def start_audit(volume=None, sample=None, requested_by=None):
    """Queue a fixity audit of every copy on a volume, or of a random sample of all copies."""
    copies = FileCopy.objects.filter(state=FileCopy.State.VERIFIED)
    if volume is not None:
        copies = copies.filter(volume=volume)
    elif not sample:
        raise Conflict("name a volume or a sample size")
    if sample:
        copies = copies.order_by("?")[:sample]
    pending = set(ArchiveRequest.objects.filter(
        kind=ArchiveRequest.Kind.AUDIT,
        state__in=[ArchiveRequest.State.QUEUED, ArchiveRequest.State.RUNNING],
    ).values_list("file_id", "copy_number", "volume_id"))
    created = []
    with transaction.atomic():
        for c in copies:
            if (c.file_id, c.copy_number, c.volume_id) in pending:
                continue
            pending.add((c.file_id, c.copy_number, c.volume_id))
            created.append(ArchiveRequest(
                kind=ArchiveRequest.Kind.AUDIT, priority=ArchiveRequest.Priority.BACKGROUND,
                file_id=c.file_id, copy_number=c.copy_number, volume_id=c.volume_id,
                bucket_id=c.bucket_id, bytes_total=c.length, requested_by=requested_by,
            ))
        ArchiveRequest.objects.bulk_create(created, ignore_conflicts=True)
        transaction.on_commit(nudge)
    return len(created)


def audit_files(files, requested_by=None):
    """Queue a fixity audit of every readable verified copy of `files` (one request per file,
    copy and volume; one already queued or running is shared). Returns {file id: [request
    ids]}, empty for a file with no readable copy to audit."""
    out = {f.pk: [] for f in files}
    segments = (readable_copies().filter(file_id__in=list(out)).order_by()
                .values_list("file_id", "copy_number", "volume_id", "bucket_id")
                .annotate(n=Sum("length")))
    with transaction.atomic():
        for file_id, copy_number, volume_id, bucket_id, length in segments:
            key = {"kind": ArchiveRequest.Kind.AUDIT, "file_id": file_id,
                   "copy_number": copy_number, "volume_id": volume_id, "bucket_id": bucket_id}
            request = queue_once(priority=ArchiveRequest.Priority.BACKGROUND, bytes_total=length,
                                 requested_by=requested_by, **key) or ArchiveRequest.objects.get(
                state__in=[ArchiveRequest.State.QUEUED, ArchiveRequest.State.RUNNING], **key)
            out[file_id].append(request.pk)
        transaction.on_commit(nudge)
    return out
