"""Buckets as copy targets: the medium of each, where a file's object lies in it, and removing
objects no live copy names (after a delete, a move off the bucket, a reconciliation's orphan)."""
import logging
import re
import secrets

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..media import CopyMissing, MediumError
from ..media.objectstore import ObjectStore, preload
from ..models import Bucket, FileCopy
from .paths import member_name
from .queueing import Req

log = logging.getLogger(__name__)


def store_for(bucket):
    """The medium of a Bucket row."""
    stores = settings.GRANARY_OBJECT_STORES
    return ObjectStore(bucket.store, bucket.bucket, stores.get(bucket.store),
                       part_bytes=settings.GRANARY_S3_PART_BYTES,
                       timeout_s=settings.GRANARY_S3_TIMEOUT_S)


def add_bucket(name, bucket, store="default", prefix="", create=False):
    """A bucket as a copy target, made once (the same name again returns it); with create, the
    bucket is made on the server when it is not there (MediumError when the store fails)."""
    from backend.errors import DomainError

    if store not in settings.GRANARY_OBJECT_STORES:
        raise DomainError(f"no object store {store} in GRANARY_OBJECT_STORES", "store")
    row = Bucket.objects.filter(name=name).first() or Bucket(
        name=name, bucket=bucket, store=store, prefix=prefix)
    if create:
        store_for(row).create_bucket()   # first: a store that fails leaves no row behind
    if row.pk is None:
        row.save()
    return row


def object_store_configured(store="default"):
    """Whether settings name an endpoint for `store`."""
    return bool(settings.GRANARY_OBJECT_STORES.get(store, {}).get("endpoint_url"))


def preload_clients(queues):
    """A worker taking the archive's queue (`queues`: those it consumes) loads the S3 client's
    code before its pool forks, when an object store is configured (~37 MB, shared by its
    children; nothing per task): objectstore.preload."""
    if "archive" in queues and any(map(object_store_configured, settings.GRANARY_OBJECT_STORES)):
        preload()


def object_key(bucket, file):
    """Where a file's copy lies in a bucket: self-describing, as a tape member's name is."""
    return f"{bucket.prefix}{member_name(file)}"


PACKS = "packs/"
_PACK_REQUEST = re.compile(r"(?:^|/)packs/\d{4}/\d{2}/\d{2}/r(\d+)-[0-9a-f]+\.tar$")


def pack_key(bucket, first_request_id):
    """Where a pack of small files lies: named after the first request it carries, so a pack
    whose requests are still under way is known not to be an orphan."""
    return (f"{bucket.prefix}{PACKS}{timezone.now():%Y/%m/%d}/r{first_request_id}-"
            f"{secrets.token_hex(4)}.tar")


def object_metadata(file, copy_number):
    """The headers an object carries, so the catalog can be rebuilt from the bucket alone."""
    granule = file.granule
    return {"granule-id": granule.granule_id, "collection": granule.collection.key,
            "granule-version": granule.version, "file": file.name, "file-size": file.size,
            "checksum-type": file.checksum_type, "checksum": file.checksum,
            "copy": copy_number}


class Pending:
    """The keys migrations under way to a bucket write (an object, or a pack named after one
    of them, may be there before its copies are recorded): `key in pending`."""

    def __init__(self, keys, request_ids):
        self.keys, self.request_ids = keys, request_ids

    def __contains__(self, key):
        if key in self.keys:
            return True
        found = _PACK_REQUEST.search(key)
        return found is not None and int(found.group(1)) in self.request_ids


def pending_keys(bucket):
    requests = list(Req.objects.filter(kind=Req.Kind.MIGRATE, bucket=bucket,
                                       state__in=[Req.State.QUEUED, Req.State.RUNNING])
                    .select_related("file__granule__collection"))
    return Pending({object_key(bucket, r.file) for r in requests}, {r.pk for r in requests})


def delete_objects(places):
    """Remove objects [(bucket id, key, version id)] no live copy names any more; best effort:
    an object the store keeps (it is down) is found by reconciliation as an orphan and removed
    then. Returns how many were removed."""
    buckets = Bucket.objects.in_bulk({b for b, _, _ in places})
    live = set(FileCopy.objects.filter(
        bucket_id__in=list(buckets), key__in=[k for _, k, _ in places]).exclude(
        state=FileCopy.State.RELEASED).values_list("bucket_id", "key"))
    removed = 0
    for bucket_id, key, version_id in places:
        if (bucket_id, key) in live or bucket_id not in buckets:
            continue
        try:
            store_for(buckets[bucket_id]).delete(key, version_id)
            removed += 1
        except MediumError as exc:
            log.warning("object %s in %s not removed now: %s", key, buckets[bucket_id], exc)
    return removed


def delete_orphan(bucket_id, key):
    """Remove an object no live copy and no migration names (checked again first)."""
    bucket = Bucket.objects.filter(pk=bucket_id).first()
    if bucket is None:
        return "the bucket is gone"
    if key in pending_keys(bucket) or FileCopy.objects.filter(bucket=bucket, key=key).exclude(
            state=FileCopy.State.RELEASED).exists():
        return "a copy names it now; nothing done"
    try:
        store_for(bucket).delete(key)
    except MediumError as exc:
        return f"not removed: {exc}"
    return f"removed {key} from {bucket.name}"


def recheck(copy):
    """Whether an object copy's bytes hash to its checksum now (a repair checks again)."""
    try:
        return store_for(copy.bucket).verify(copy.key, copy.length, copy.checksum_type,
                                             copy.checksum, copy.version_id, copy.data_offset)
    except CopyMissing:
        return False


def remove_on_commit(places):
    """Remove objects [(bucket id, key, version id)] once the transaction that released their
    copies commits (delete_objects checks again that no live copy names them)."""
    if places:
        transaction.on_commit(lambda: delete_objects(places))
