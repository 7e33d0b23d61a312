"""The end of a run judged from outside the archive: each granule's catalog state, and its tape
copies read straight from the volume files and hashed against the MD5 of the bytes the run
made; plus the archive's own reconciliation."""
import hashlib

from .watch import with_db


def reconcile(repair):
    """The archive's full reconciliation (with repair or not): the number of discrepancies it
    lists, or None while this branch has no reconciliation yet. The one place that names it."""
    try:
        from backend.archive.services.reconcile import reconcile as archive_reconcile
    except ImportError:
        return None
    run = archive_reconcile(full=True, repair=repair)
    found = run.discrepancies
    return found.count() if hasattr(found, "all") else len(found)


def _read_copy(segments):
    """MD5 of a copy's bytes read from its volumes, segment after segment (None: unreadable)."""
    from backend.archive.services.paths import volume_path

    digest = hashlib.md5()
    try:
        for segment in segments:
            with open(volume_path(segment.volume), "rb") as f:
                f.seek(segment.data_offset)
                left = segment.length
                while left:
                    chunk = f.read(min(left, 1 << 20))
                    if not chunk:
                        return None
                    digest.update(chunk)
                    left -= len(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _copies_of(collection_id):
    from backend.archive.models import FileCopy

    copies = {}
    for c in (FileCopy.objects.filter(file__granule__collection_id=collection_id,
                                      state=FileCopy.State.VERIFIED)
              .select_related("volume__silo", "file__granule")
              .order_by("file_id", "copy_number", "file_offset")):
        copies.setdefault(c.file.granule.granule_id, {}).setdefault(c.copy_number, []).append(c)
    return copies


def tape_check(collection_id, originals, required_copies=2):
    """{granule_id: (catalog state, good copies)} for every granule the run made: a good copy
    is one whose verified segments, read from the volumes, hash to the original MD5."""
    from backend.catalog.models import Granule

    states = with_db(lambda: dict(Granule.objects.filter(collection_id=collection_id)
                                  .values_list("granule_id", "state")))
    copies = with_db(lambda: _copies_of(collection_id))
    out = {}
    for granule_id, original in originals.items():
        good = 0
        for segments in copies.get(granule_id, {}).values():
            if sum(s.length for s in segments) == original.size and \
                    _read_copy(segments) == original.md5:
                good += 1
        out[granule_id] = (states.get(granule_id), good)
    return out


def lost_granules(checked, served_bad):
    """Granules not archived, with no good tape copy, or whose download did not match."""
    return sorted(g for g, (state, good) in checked.items()
                  if state != "archived" or good == 0 or g in served_bad)
