"""Asking a provider to deliver a granule again, when nothing on the archive's side can finish
it (a file's only copy is damaged in the cache): the archive gives the granule up (FAILED, its
work cancelled, its copies dropped) and ingest fails the delivery with the reason in the same
transaction, so the provider's request stops reading "archiving" and says what to do."""
from django.db import transaction

from backend.actions import REDELIVER, possible
from backend.archive import services as archive
from backend.archive.models import ArchiveRequest
from backend.catalog.models import Granule
from backend.errors import Conflict, DomainError, NotFound
from ingest import services as ingest

from .failures import find_group
from .sources import ARCHIVE

ASK = ("the archive's only copy of {files} was damaged before it reached tape: deliver the "
       "granule again (stage its files and retry, or submit it in a new request)")


def redeliver(actor, granule_id, reason):
    """Give the granule up and tell its provider to deliver it again; returns (granule, the
    damaged files, how many ingest rows failed). Conflict when it can still be archived."""
    granule = Granule.objects.filter(pk=granule_id).first()
    if granule is None:
        raise NotFound(f"There is no granule {granule_id}.")
    with transaction.atomic():
        damaged = archive.fail_for_redelivery(granule, by=actor, reason=reason)
        told = ingest.archive_gave_up(granule.pk, ASK.format(files=", ".join(damaged))
                                      + f". Operator's note: {reason.strip()}")
    granule.refresh_from_db()
    return granule, damaged, told


def redeliver_group(actor, key, reason):
    """redeliver() for every granule of a failure group whose archive work only a redelivery can
    help; returns {granules: how many, not_redelivered: [{id, reason}]}."""
    source, _, ids = find_group(key)
    if source.where != ARCHIVE:
        raise Conflict("only archive work is given up for a redelivery; a granule that failed "
                       "in ingest is delivered again by its provider, who sees why it failed")
    judged = source.actions(ids)
    chosen = [pk for pk in ids if possible(judged.get(pk, []), REDELIVER)]
    granules = sorted(set(ArchiveRequest.objects.filter(pk__in=chosen)
                          .values_list("file__granule_id", flat=True)))
    if not granules:
        raise Conflict("no granule of this group needs a redelivery: retry it instead")
    done, refused = 0, []
    for granule_id in granules:
        try:
            redeliver(actor, granule_id, reason)
            done += 1
        except DomainError as exc:
            refused.append({"id": granule_id, "reason": exc.detail})
    return {"key": key, "granules": done, "not_redelivered": refused}
