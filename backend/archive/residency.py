"""Answers the catalog's questions about where a granule's bytes are (backend.catalog.storage)."""
from django.db.models import Exists, OuterRef, Q

from backend.catalog.bulk import loaded
from backend.catalog.models import File
from backend.catalog.storage import Storage
from backend.fixed_reads import FixedRead

from .models import Bucket, CacheEntry, FileCopy, Silo, Volume


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


def _fields(model, path=""):
    """(the names a values read takes, through `path`; the attribute names they fill)."""
    fields = model._meta.concrete_fields
    return [path + f.name for f in fields], [f.attname for f in fields]


# A granule page's storage as two reads of values, compiled once per connection (backend.
# fixed_reads): the files with their cache entries, then the copies with their volumes, silos
# and buckets. The ORM's prefetch of the same cost a granule page half its CPU to build.
_FILE, _ENTRY = _fields(File), _fields(CacheEntry, "cache_entry__")
_COPY, _VOLUME = _fields(FileCopy), _fields(Volume, "volume__")
_SILO, _BUCKET = _fields(Silo, "volume__silo__"), _fields(Bucket, "bucket__")
_FILES = FixedRead(lambda granule_id: File.objects.filter(granule_id=granule_id).order_by(
    "name").values_list(*_FILE[0], *_ENTRY[0]), [int])
_COPIES = FixedRead(lambda granule_id: FileCopy.objects.filter(
    file__granule_id=granule_id).order_by("pk").values_list(
    *_COPY[0], *_VOLUME[0], *_SILO[0], *_BUCKET[0]), [int])


def _split(row, *parts):
    """The row's values for each (names, attnames) part in turn; None for a part whose id is
    null (no such related row: a left join's)."""
    at, out = 0, []
    for _, attnames in parts:
        values = row[at:at + len(attnames)]
        at += len(attnames)
        out.append(None if values[attnames.index("id")] is None else values)
    return out


def _cached(model, rows):
    """A queryset of `model` whose rows are `rows` (as a prefetch leaves a related manager's)."""
    queryset = model.objects.all()
    queryset._result_cache, queryset._prefetch_done = rows, True
    return queryset


def load_detail(granule):
    """`granule` with what a prefetch would give it, from two fixed reads: its files in name
    order with their cache entries, and each file's copies with volume, silo and bucket (the
    objects file_in_cache, copies and file_direct read)."""
    files = []
    for row in _FILES.rows(granule.pk):
        values, entry = _split(row, _FILE, _ENTRY)
        file = loaded(File, _FILE[1], values)
        file._state.fields_cache["granule"] = granule
        file._state.fields_cache["cache_entry"] = (
            None if entry is None else loaded(CacheEntry, _ENTRY[1], entry))
        file._prefetched_objects_cache = {}
        files.append(file)
    copies_of = {file.pk: [] for file in files}
    for row in _COPIES.rows(granule.pk):
        values, volume, silo, bucket = _split(row, _COPY, _VOLUME, _SILO, _BUCKET)
        copy = loaded(FileCopy, _COPY[1], values)
        if volume is not None:
            volume = loaded(Volume, _VOLUME[1], volume)
            volume._state.fields_cache["silo"] = (
                None if silo is None else loaded(Silo, _SILO[1], silo))
        copy._state.fields_cache["volume"] = volume
        copy._state.fields_cache["bucket"] = (
            None if bucket is None else loaded(Bucket, _BUCKET[1], bucket))
        copies_of[copy.file_id].append(copy)
    for file in files:
        file._prefetched_objects_cache["copies"] = _cached(FileCopy, copies_of[file.pk])
    granule._prefetched_objects_cache = {"files": _cached(File, files)}
    return granule


STORAGE = Storage(in_cache_q=in_cache_q, file_in_cache=file_in_cache, copies=copies,
                  file_direct=file_direct, load_detail=load_detail)
