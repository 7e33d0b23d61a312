"""Answers the catalog's questions about where a granule's bytes are (backend.catalog.storage)."""
from django.db.models import Exists, OuterRef, Prefetch, Q

from backend.catalog.models import File
from backend.catalog.storage import Storage

from .models import CacheEntry, FileCopy


def in_cache_q():
    """Granules whose every file is in the RAID cache (an entry that is not still staging).

    Written as "no file is missing from the cache" so it stays one correlated subquery
    the database can answer from the file and cache-entry indexes.
    """
    missing = File.objects.filter(granule=OuterRef("pk")).filter(
        Q(cache_entry__isnull=True) | Q(cache_entry__state=CacheEntry.State.STAGING)
    )
    return ~Exists(missing)


def file_in_cache(file):
    entry = getattr(file, "cache_entry", None)
    return entry is not None and entry.state != CacheEntry.State.STAGING


def copies(file):
    """A file's live copies on every medium, in copy order (from the page's prefetch)."""
    return sorted((c for c in file.copies.all() if c.state != FileCopy.State.RELEASED),
                  key=lambda c: (c.copy_number, c.segment))


def file_direct(file):
    """Downloadable now, without an order: in the cache, or with a verified object copy (an
    object store answers at once; see services.serving). From the page's prefetch."""
    return file_in_cache(file) or any(
        c.bucket_id is not None and c.state == FileCopy.State.VERIFIED for c in copies(file))


def detail_prefetch():
    """A granule page's files with their cache entries, then their copies with each one's
    volume, silo and bucket: two statements where by names it took six (and the files by the
    granule's own order, a join to the granule, where their (granule, name) order is the same
    within one)."""
    copies_ = FileCopy.objects.select_related("volume__silo", "bucket")
    files = (File.objects.order_by("granule_id", "name").select_related("cache_entry")
             .prefetch_related(Prefetch("copies", queryset=copies_)))
    return (Prefetch("files", queryset=files),)


STORAGE = Storage(in_cache_q=in_cache_q, file_in_cache=file_in_cache, copies=copies,
                  file_direct=file_direct, detail_prefetch=detail_prefetch)
