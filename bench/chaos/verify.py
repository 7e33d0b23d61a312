"""The end of a run judged from outside the archive: each granule's catalog state, and its
copies read straight from the volume files (tape) and from the S3 server's folder (objects: the
file the server serves for a key) and hashed against the MD5 of the bytes the run made; plus
the archive's own reconciliation."""
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


def past_end_of_data():
    """What the last reconciliation told of bytes past volumes' recorded end of data (writes
    not recorded: a note, not a discrepancy): 'M members (X MiB) on A00003, ...' or 'none'."""
    from backend.archive.models import Reconciliation

    run = Reconciliation.objects.order_by("-pk").first()
    notes = [n for n in (run.notes if run else []) if n["kind"] == "past_end_of_data"]
    return ", ".join(f"{n.get('members', '?')} members ({n['tail_bytes'] / 2**20:.1f} MiB) on "
                     f"{n['volume']}" for n in notes) or "none"


def _read_copy(segments, object_root=None, cartridges=None):
    """MD5 of a copy's bytes read from its volumes, segment after segment, or from its object's
    file under the S3 server's folder (None: unreadable); on SCSI tape `cartridges` reads the
    volumes' streams from the cartridges' backing files (tapelib.StreamFiles)."""
    from backend.archive.services.paths import volume_path

    digest = hashlib.md5()
    try:
        for segment in segments:
            if segment.bucket_id is not None and object_root is None:
                return None
            if segment.bucket_id is None and cartridges is not None:
                data = cartridges.read(segment.volume.label, segment.data_offset, segment.length)
                if len(data) < segment.length:
                    return None
                digest.update(data)
                continue
            path = (object_root / segment.bucket.bucket / segment.key
                    if segment.bucket_id is not None else volume_path(segment.volume))
            with open(path, "rb") as f:
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


def _copies_of(collection_ids):
    from backend.archive.models import FileCopy

    copies = {}
    for c in (FileCopy.objects.filter(file__granule__collection_id__in=collection_ids,
                                      state=FileCopy.State.VERIFIED)
              .select_related("volume__silo", "bucket", "file__granule")
              .order_by("file_id", "copy_number", "file_offset")):
        copies.setdefault(c.file.granule.granule_id, {}).setdefault(c.copy_number, []).append(c)
    return copies


def copies_check(collection_ids, originals, object_root=None, cartridges=None):
    """{granule_id: (catalog state, good copies)} for every granule the run made (granule ids
    are unique across the run's collections): a good copy is one whose verified segments, read
    from the volumes or the object's file, hash to the original MD5."""
    from backend.catalog.models import Granule

    states = with_db(lambda: dict(Granule.objects.filter(collection_id__in=collection_ids)
                                  .values_list("granule_id", "state")))
    copies = with_db(lambda: _copies_of(collection_ids))
    out = {}
    for granule_id, original in originals.items():
        good = 0
        for segments in copies.get(granule_id, {}).values():
            if sum(s.length for s in segments) == original.size and \
                    _read_copy(segments, object_root, cartridges) == original.md5:
                good += 1
        out[granule_id] = (states.get(granule_id), good)
    return out


def lost_granules(checked, served_bad):
    """Granules not archived, with no good tape copy, or whose download did not match."""
    return sorted(g for g, (state, good) in checked.items()
                  if state != "archived" or good == 0 or g in served_bad)
