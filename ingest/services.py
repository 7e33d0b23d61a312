"""The ingest pipeline: requests in; granules through stage -> validate -> metadata -> register ->
archive; PDRDs and PANs out.

- submit(provider, granules, ...) checks a request as a whole (shape, names, rights) and stores
  it with one row per granule; nothing is written when any granule is malformed.
- process_chunk(request_id, start, stop) carries up to GRANARY_INGEST_CHUNK granules through the
  pipeline under a lease, with bulk state updates. A granule that fails gets a reason (and an
  ECS disposition) and never holds up the others; retry() sends failed granules round again.
- The archive tier says when granules are ARCHIVED (signal granules_archived); then the request's
  counters move, and a finished PDR request gets its PAN.
- sweep() (beat) re-kicks work whose worker died, admits granules that waited for cache room and
  finishes what is finished; clean_staging() drops staged copies after the retention.
"""
import fcntl
import functools
import hashlib
import json
import logging
import os
import shutil
import stat
import uuid
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, F, OuterRef, Q, Subquery, Sum
from django.utils import timezone

from backend.accounts.models import Provider
from backend.archive import services as archive
from backend.catalog import bulk, checksums
from backend.catalog.geo import BBoxError, make_bbox
from backend.catalog.models import Collection, File, Granule
from backend.catalog.services import register_granule, register_granules
from backend.metrics.models import TransferRecord
from backend.metrics.services import record_transfers

from . import metadata, names, pdr
from .models import IngestGranule, IngestRequest, Pdr

log = logging.getLogger(__name__)

G = IngestGranule.State
R = IngestRequest.State
PRE_ARCHIVE = (G.RECEIVED, G.STAGED, G.VALIDATED)
FINAL = (G.ARCHIVED, G.FAILED)
ROLES = set(File.Role.values)
MAX_ERRORS = 20


class IngestRejected(ValueError):
    """A request refused as a whole, with every problem found (up to MAX_ERRORS)."""

    def __init__(self, detail, errors=()):
        super().__init__(detail)
        self.detail = detail
        self.errors = list(errors)


class IngestForbidden(IngestRejected):
    """The provider may not deliver a collection it asked for."""


class IngestConflict(IngestRejected):
    """An Idempotency-Key used again for a different body."""


# ---------------------------------------------------------------------------------------------
# Staging areas


def staging_area(provider):
    return Path(settings.STAGING_ROOT) / provider.name


@functools.lru_cache(maxsize=256)
def _real_area(area):
    return os.path.realpath(area)


def staged_path(area, relative, folders=None):
    """The file `relative` names inside `area`, or None when it (or a link in it) leads out.

    `folders` ({folder: its real path}) lets a caller that resolves many files of a few folders
    resolve each folder once: then only the file itself is looked at (one lstat), and followed
    when it is a link.
    """
    path = Path(area) / relative
    root = _real_area(str(area))
    if folders is None:
        real = os.path.realpath(path)
    else:
        folder, name = os.path.split(os.path.normpath(path))
        if folder not in folders:
            folders[folder] = os.path.realpath(folder)
        try:
            linked = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            linked = False
        real = (os.path.realpath(path) if linked or name in ("", ".", "..")
                else os.path.join(folders[folder], name))
    if real != root and not real.startswith(root + os.sep):
        return None
    return path


def canonical_hash(value):
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Accepting a request


def _collections_by_key(keys):
    shorts = {str(k).partition(".")[0] for k in keys}
    return {c.key: c for c in Collection.objects.filter(short_name__in=shorts)}


def _time_or_error(value, what, errors):
    try:
        return pdr.parse_time(value).isoformat()
    except (TypeError, ValueError):
        errors.append(f"{what}: {value!r} is not an ISO 8601 date and time")
        return None


def _check_file(f, where, errors, require_checksum):
    if not isinstance(f, dict):
        errors.append(f"{where}: must be an object with name, path, size, checksum_type, checksum")
        return None
    path = f.get("path", f.get("name"))
    name = f.get("name") or (path.rsplit("/", 1)[-1] if isinstance(path, str) else None)
    problem = names.name_problem(name) or names.path_problem(path)
    if problem:
        errors.append(f"{where}: {problem}")
        return None
    size = f.get("size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        errors.append(f"{where}: size must be a whole number of bytes, not {size!r}")
        return None
    if size == 0:
        errors.append(f"{where}: {name} is empty (size 0); empty files are not archived")
        return None
    role = f.get("role") or File.Role.DATA
    if role not in ROLES:
        errors.append(f"{where}: role {role!r} is not one of {', '.join(sorted(ROLES))}")
        return None
    checksum = str(f.get("checksum") or "").strip()
    kind = f.get("checksum_type")
    if kind or require_checksum:
        try:
            kind = checksums.normalise(kind)
        except checksums.UnsupportedChecksum as exc:
            errors.append(f"{where}: {exc}")
            return None
        if not checksum and require_checksum:
            errors.append(f"{where}: checksum is missing")
            return None
    return {"name": name, "path": names.normal_path(path), "size": size, "role": role,
            "checksum_type": kind or "", "checksum": checksum,
            **({"directory": f["directory"]} if f.get("directory") else {})}


def _check_granule(g, where, errors, require_checksum):
    if not isinstance(g, dict):
        errors.append(f"{where}: must be an object")
        return None
    before = len(errors)
    key = g.get("collection")
    if not isinstance(key, str) or "." not in key:
        errors.append(f"{where}.collection: give the collection as SHORT.VERSION, not {key!r}")
    granule_id = g.get("granule_id")
    problem = names.name_problem(granule_id, "granule_id")
    if problem:
        errors.append(f"{where}.granule_id: {problem}")
    temporal = g.get("temporal")
    if temporal is not None:
        if not isinstance(temporal, dict) or not temporal.get("start"):
            errors.append(f"{where}.temporal: give {{\"start\": ISO, \"end\": ISO}}")
            temporal = None
        else:
            start = _time_or_error(temporal["start"], f"{where}.temporal.start", errors)
            end = _time_or_error(temporal.get("end") or temporal["start"],
                                 f"{where}.temporal.end", errors)
            if start and end and pdr.parse_time(end) < pdr.parse_time(start):
                errors.append(f"{where}.temporal: end {end} is before start {start}")
            temporal = {"start": start, "end": end}
    bbox = g.get("bbox")
    if bbox is not None:
        try:
            if not isinstance(bbox, list) or len(bbox) != 4:
                raise BBoxError("give [west, south, east, north]")
            bbox = make_bbox(*bbox).as_list()
        except BBoxError as exc:
            errors.append(f"{where}.bbox: {exc}")
    attributes = g.get("attributes") or {}
    if not isinstance(attributes, dict):
        errors.append(f"{where}.attributes: must be an object")
    files = g.get("files")
    if not isinstance(files, list) or not files:
        errors.append(f"{where}.files: a granule needs at least one file")
        files = []
    checked, seen = [], set()
    for i, f in enumerate(files):
        spec = _check_file(f, f"{where}.files[{i}]", errors, require_checksum)
        if spec is None:
            continue
        if spec["name"] in seen:
            errors.append(f"{where}.files[{i}]: duplicate file name {spec['name']} in the granule")
        seen.add(spec["name"])
        checked.append(spec)
    if len(errors) > before:
        return None
    return {"collection": key, "granule_id": granule_id, "temporal": temporal, "bbox": bbox,
            "attributes": attributes, "files": checked}


def check_granules(provider, granules, *, require_checksum=True):
    """Normalised specs of a request's granules, or IngestRejected / IngestForbidden."""
    if not isinstance(granules, list):
        raise IngestRejected("granules: give a list of granules")
    if not granules:
        raise IngestRejected("The request has no granules; send at least one.")
    limit = settings.GRANARY_INGEST_MAX_GRANULES
    if len(granules) > limit:
        raise IngestRejected(f"The request has {len(granules)} granules; split it into requests "
                             f"of at most {limit}.")
    errors, specs, seen = [], [], {}
    for i, g in enumerate(granules):
        spec = _check_granule(g, f"granules[{i}]", errors, require_checksum)
        if spec is None:
            continue
        ident = (spec["collection"], spec["granule_id"])
        if ident in seen:
            errors.append(f"granules[{i}]: duplicate granule {spec['collection']}:"
                          f"{spec['granule_id']} (also granules[{seen[ident]}])")
        seen.setdefault(ident, i)
        specs.append(spec)
    collections = _collections_by_key({s["collection"] for s in specs})
    unknown = sorted({s["collection"] for s in specs} - set(collections))
    for key in unknown:
        errors.append(f"unknown collection {key}")
    if errors:
        raise IngestRejected(_summary(errors), errors[:MAX_ERRORS])
    allowed = set(provider.collections.values_list("pk", flat=True))
    refused = sorted({k for k, c in collections.items() if c.pk not in allowed
                      and k in {s["collection"] for s in specs}})
    if refused:
        raise IngestForbidden(f"Provider {provider.name} may not deliver "
                              f"{', '.join(refused)}; ask an operator for the right.")
    return specs


def _summary(errors):
    more = f" (and {len(errors) - MAX_ERRORS} more)" if len(errors) > MAX_ERRORS else ""
    head = "; ".join(errors[:MAX_ERRORS])
    return f"The request was not accepted: {head}{more}."


def submit(provider, granules, *, way=IngestRequest.Way.BULK, user=None, idempotency_key=None,
           label="", dedupe_body=True, require_checksum=True, enqueue=True):
    """Store a request and queue its work; (request, created). The same Idempotency-Key, or
    for bulk requests the same body, answers with the request already made."""
    body_hash = canonical_hash(granules) if dedupe_body else None
    existing = _existing_request(provider, idempotency_key, body_hash)
    if existing:
        return existing, False
    specs = check_granules(provider, granules, require_checksum=require_checksum)
    try:
        with transaction.atomic():
            request = IngestRequest.objects.create(
                provider=provider, submitted_by=user if user and user.is_authenticated else None,
                way=way, label=label[:255], idempotency_key=idempotency_key or None,
                body_hash=body_hash, granule_count=len(specs),
                bytes_total=sum(f["size"] for s in specs for f in s["files"]),
            )
            bulk.insert([
                IngestGranule(request=request, position=i, collection_key=s["collection"],
                              granule_id=s["granule_id"], spec=s,
                              bytes_total=sum(f["size"] for f in s["files"]))
                for i, s in enumerate(specs)
            ])
            if enqueue:
                _enqueue_request(request.pk)
    except IntegrityError:
        existing = _existing_request(provider, idempotency_key, body_hash)
        if existing is None:
            raise
        return existing, False
    return request, True


def _existing_request(provider, idempotency_key, body_hash):
    if idempotency_key:
        found = IngestRequest.objects.filter(provider=provider,
                                             idempotency_key=idempotency_key).first()
        if found:
            if body_hash and found.body_hash and found.body_hash != body_hash:
                raise IngestConflict(f"Idempotency-Key {idempotency_key!r} was already used for "
                                     f"ingest request {found.pk} with a different body.")
            return found
    if body_hash:
        return IngestRequest.objects.filter(provider=provider, body_hash=body_hash).first()
    return None


def _enqueue_request(request_id):
    from .tasks import process_request

    process_request.apply_async_on_commit(args=[request_id])


# ---------------------------------------------------------------------------------------------
# Moving work along


def _claimable(now):
    return IngestGranule.objects.filter(state__in=PRE_ARCHIVE).filter(
        Q(lease_until__isnull=True) | Q(lease_until__lt=now))


def chunk_ranges(positions, size):
    """[start, stop) position ranges holding at most `size` of the given sorted positions."""
    positions = list(positions)
    return [(positions[i], positions[min(i + size, len(positions)) - 1] + 1)
            for i in range(0, len(positions), size)]


def kick(request_id):
    """Queue one chunk task per GRANARY_INGEST_CHUNK granules that wait for a worker."""
    from .tasks import process_chunk

    now = timezone.now()
    waiting = _claimable(now).filter(request_id=request_id)
    ranges = chunk_ranges(waiting.order_by("position").values_list("position", flat=True),
                          settings.GRANARY_INGEST_CHUNK)
    # the sweeper leaves them alone for a while; rows written just now (a new request) need no
    # touch, and rewriting thousands of rows (every index of each) is the costly part of a kick
    stale = now - timedelta(seconds=settings.GRANARY_INGEST_STALE_S / 2)
    waiting.filter(updated_at__lt=stale).update(updated_at=now)
    for start, stop in ranges:
        process_chunk.apply_async_on_commit(args=[request_id, start, stop])
    return len(ranges)


def run_request(request_id, chunk=None, on_chunk=None):
    """Process every waiting granule of a request in this process (CLI, tests); on_chunk(stop)
    is called after each chunk with the position it reached."""
    now = timezone.now()
    positions = (_claimable(now).filter(request_id=request_id).order_by("position")
                 .values_list("position", flat=True))
    taken = 0
    for start, stop in chunk_ranges(positions, chunk or settings.GRANARY_INGEST_CHUNK):
        taken += process_chunk(request_id, start, stop)
        if on_chunk:
            on_chunk(stop)
    return taken


def process_chunk(request_id, start, stop):
    """Carry the waiting granules at positions [start, stop) through the pipeline; returns how
    many this call took (0 when another worker holds them: a duplicate message is harmless)."""
    token = uuid.uuid4().hex
    now = timezone.now()
    lease = now + timedelta(seconds=settings.GRANARY_INGEST_LEASE_S)
    taken = (_claimable(now).filter(request_id=request_id, position__gte=start,
                                    position__lt=stop)
             .update(lease_owner=token, lease_until=lease, attempts=F("attempts") + 1,
                     updated_at=now))
    if not taken:
        return 0
    IngestRequest.objects.filter(pk=request_id, state=R.RECEIVED).update(
        state=R.RUNNING, updated_at=now)
    request = IngestRequest.objects.select_related("provider").get(pk=request_id)
    rows = list(IngestGranule.objects.filter(lease_owner=token).order_by("position"))
    try:
        _Chunk(request, rows, token).run()
    finally:
        IngestGranule.objects.filter(lease_owner=token).update(lease_owner="", lease_until=None)
    return taken


class _Chunk:
    """One batch of granules of one request, moved a step at a time with bulk updates."""

    def __init__(self, request, rows, token):
        self.request, self.rows, self.token = request, rows, token
        self.area = staging_area(request.provider)
        self.collections = _collections_by_key({r.collection_key for r in rows})
        self.started = {}
        self.transfers = []
        self.paths, self.folders = {}, {}

    def path(self, relative):
        """staged_path, resolved once per chunk (staging, checking and admitting each need it)."""
        if relative not in self.paths:
            self.paths[relative] = staged_path(self.area, relative, self.folders)
        return self.paths[relative]

    def run(self):
        limit = settings.GRANARY_INGEST_MAX_ATTEMPTS
        for row in self.rows:
            if row.attempts > limit:
                fail(row, pdr.INTERNAL_ERROR, f"gave up after {limit} attempts: the worker "
                     "stopped each time while handling this granule")
        self._check_collections()
        quick = sum(r.bytes_total for r in self.rows) < settings.GRANARY_INGEST_QUICK_BYTES
        self._step(G.RECEIVED, G.STAGED, self._stage, write=not quick)
        self._step(G.STAGED, G.VALIDATED, self._verify, bytes_done=F("bytes_total"))
        changed = [r for r in self.rows if getattr(r, "_spec_changed", False)]
        if changed:
            IngestGranule.objects.bulk_update(changed, ["spec"], batch_size=500)
        self._register_and_archive([r for r in self.rows if r.state == G.VALIDATED])
        if self.transfers:
            record_transfers(self.transfers)

    def _guard(self, row, action):
        """Run one granule's step; an unexpected error fails that granule, not the chunk."""
        try:
            return action(row)
        except Exception as exc:
            log.exception("ingest granule %s failed unexpectedly", row.pk)
            fail(row, pdr.INTERNAL_ERROR, f"unexpected error: {exc}")
            return None

    def _step(self, source, target, check, write=True, **extra):
        """check(row) -> None when the row may move from source to target, else (disp, reason).
        Without `write` the move is kept in memory for the next step's write to record."""
        moved = []
        for row in self.rows:
            if row.state != source:
                continue
            self.started.setdefault(row.pk, timezone.now())
            problem = self._guard(row, check)
            if row.state == G.FAILED:
                continue
            if problem:
                fail(row, *problem)
            else:
                moved.append(row)
        if moved and not write:
            for row in moved:
                row.state = target
        elif moved:
            IngestGranule.objects.filter(pk__in=[r.pk for r in moved], state__in=PRE_ARCHIVE,
                                         lease_owner=self.token).update(
                state=target, updated_at=timezone.now(), **extra)
            for row in moved:
                row.state = target
                row.bytes_done = row.bytes_total if extra else row.bytes_done

    def _check_collections(self):
        problems = {}
        for key in {r.collection_key for r in self.rows}:
            collection = self.collections.get(key)
            if collection is None:
                problems[key] = (pdr.UNKNOWN_DATA_TYPE, f"unknown collection {key}")
                continue
            try:
                archive.policy_copies(collection)
            except archive.ArchiveError as exc:
                problems[key] = (pdr.ARCHIVE_ERROR, f"{exc}; an operator must give it one")
        for row in self.rows:
            if row.collection_key in problems and row.state not in FINAL:
                fail(row, *problems[row.collection_key])

    def _stage(self, row):
        missing = []
        for f in row.spec["files"]:
            path = self.path(f["path"])
            if path is None:
                return (pdr.FILES_NOT_FOUND,
                        f"{f['path']} leads out of the staging area through a link")
            if not path.is_file():
                missing.append(f["path"])
        if missing:
            return (pdr.FILES_NOT_FOUND, "not found in the staging area of "
                    f"{self.request.provider.name}: {', '.join(missing)}")
        return None

    def _verify(self, row):
        for f in row.spec["files"]:
            path = self.path(f["path"])
            try:
                size = path.stat().st_size
                if size != f["size"]:
                    return (pdr.SIZE_CHECK_FAILURE, f"{f['name']}: declared {f['size']} bytes, "
                            f"found {size} in staging")
                kind = f["checksum_type"] or settings.GRANARY_INGEST_DEFAULT_CHECKSUM
                digest, read = checksums.of_file(kind, path)
            except OSError as exc:
                return (pdr.FILE_IO_ERROR, f"{f['name']} cannot be read: {exc.strerror}")
            if read != f["size"]:
                return (pdr.SIZE_CHECK_FAILURE, f"{f['name']} changed while it was read")
            if not f["checksum"]:
                f["checksum_type"], f["checksum"] = kind, digest
                row._spec_changed = True
            elif not checksums.same(kind, digest, f["checksum"]):
                return (pdr.CHECKSUM_FAILURE, f"{f['name']}: {kind} checksum is {digest}, "
                        f"the provider declared {f['checksum']}")
        return None

    def _register_and_archive(self, rows):
        """The validated granules into the catalog and the archive, in bulk where it can be."""
        prepared = [(row, p) for row in rows
                    if (p := self._guard(row, lambda r: _prepare(r, self.path)))
                    is not None]
        try:
            registered = register_many(prepared, self.collections, self.token)
        except Exception:
            log.exception("bulk registration failed; registering granule by granule")
            registered = []
            for row, p in prepared:
                if row.state == G.VALIDATED:
                    granule = self._guard(row, lambda r, p=p: register(
                        r, self.collections[r.collection_key], p))
                    if granule is not None:
                        registered.append((row, granule))
        try:
            admit_many(registered, self.area, self.started, self.transfers, self.path)
        except Exception:
            log.exception("bulk admission failed; admitting granule by granule")
            for row, granule in registered:
                self._guard(row, lambda r, g=granule: admit(r, g, self.area,
                                                            self.started.get(r.pk),
                                                            self.transfers))


# ---------------------------------------------------------------------------------------------
# Metadata and registration


def _metadata(row, resolve):
    """Times, box and attributes: the request's own, completed from the delivered files
    (`resolve`: relative path in the staging area -> staged path)."""
    spec = row.spec
    found = metadata.Extracted()
    if spec.get("temporal"):
        found.start = pdr.parse_time(spec["temporal"]["start"])
        found.end = pdr.parse_time(spec["temporal"]["end"])
    found.bbox = spec.get("bbox")
    found.attributes = dict(spec.get("attributes") or {})
    if found.start is None or found.bbox is None:
        files = [(f["name"], f["role"], resolve(f["path"])) for f in spec["files"]]
        found.absorb(metadata.extract(files), "files")
    return found


def _same_files(granule, files):
    have = {(f.name, f.size, f.checksum_type, f.checksum.lower())
            for f in granule.files.all()}
    want = {(f["name"], f["size"], f["checksum_type"], str(f["checksum"]).lower())
            for f in files}
    return have == want


def _prepare(row, resolve):
    """(metadata, box, file dicts) to register the row's granule with, or None when it failed."""
    try:
        meta = _metadata(row, resolve)
    except metadata.MetadataError as exc:
        fail(row, pdr.METADATA_ERROR, str(exc))
        return None
    if meta.start is None:
        fail(row, pdr.METADATA_ERROR, "no temporal coverage: give temporal in the request or "
             "deliver a sidecar JSON, .met, HDF5 or NetCDF file that has it")
        return None
    if meta.end < meta.start:
        fail(row, pdr.METADATA_ERROR, f"temporal end {meta.end} is before start {meta.start}")
        return None
    try:
        box = make_bbox(*meta.bbox) if meta.bbox is not None else None
    except BBoxError as exc:
        fail(row, pdr.METADATA_ERROR, f"bounding box: {exc}")
        return None
    files = [{k: f[k] for k in ("name", "role", "size", "checksum_type", "checksum")}
             for f in row.spec["files"]]
    return meta, box, files


def register(row, collection, prepared):
    """Register the granule in the catalog per the collection's duplicate policy, and link it.
    `prepared` is what _prepare gave for the row. Returns the granule to hand to the archive,
    or None when there is nothing to archive."""
    for _ in range(3):
        try:
            return _register_once(row, collection, *prepared)
        except IntegrityError:
            continue  # another request registered the same granule meanwhile: decide again
    fail(row, pdr.INTERNAL_ERROR, "the granule could not be registered; retry it")
    return None


def register_many(prepared, collections, token):
    """register() for a chunk's validated rows [(row, _prepare(row))]: granules the catalog has
    never seen go in with one bulk insert; the others (duplicates, races) take the one-by-one
    path that applies the duplicate policy. Returns [(row, granule to archive)]."""
    wanted = {}
    for row, _ in prepared:
        wanted.setdefault(row.collection_key, set()).add(row.granule_id)
    one_by_one, fresh = [], []
    try:
        with transaction.atomic():
            known = Q(pk__in=[])
            for key, ids in wanted.items():
                known |= Q(collection=collections[key], granule_id__in=ids)
            seen = set(Granule.objects.select_for_update().filter(known).order_by("pk")
                       .values_list("collection_id", "granule_id"))
            # by pk, not the model's order by request: that joins the request row and FOR
            # UPDATE would lock it too, so two chunks of one request would wait on each other
            held = set(IngestGranule.objects.select_for_update().filter(
                pk__in=[r.pk for r, _ in prepared], state=G.VALIDATED, lease_owner=token)
                .order_by("pk").values_list("pk", flat=True))
            for row, p in prepared:
                new = (collections[row.collection_key].pk, row.granule_id) not in seen
                (fresh if new and row.pk in held else one_by_one).append((row, p))
            granules = register_granules([
                {"collection": collections[row.collection_key], "granule_id": row.granule_id,
                 "start": meta.start, "end": meta.end, "bbox": box,
                 "attributes": meta.attributes, "files": files}
                for row, (meta, box, files) in fresh])
            now = timezone.now()
            by_collection = {}
            for row, _ in fresh:
                by_collection.setdefault(collections[row.collection_key].pk, []).append(row.pk)
            for collection_id, pks in by_collection.items():
                IngestGranule.objects.filter(pk__in=pks).update(
                    state=G.ARCHIVING, admitted=False, updated_at=now,
                    catalog_granule=Subquery(Granule.objects.filter(
                        collection_id=collection_id, granule_id=OuterRef("granule_id"),
                        version=1).values("pk")[:1]))
            for (row, _), granule in zip(fresh, granules, strict=True):
                row.catalog_granule, row.state = granule, G.ARCHIVING
    except Exception as exc:
        for row, _ in fresh:
            row.state, row.catalog_granule = G.VALIDATED, None
        if not isinstance(exc, IntegrityError):
            raise
        # another request registered one of them meanwhile: decide one by one
        one_by_one, fresh, granules = prepared, [], []
    out = [(row, granule) for (row, _), granule in zip(fresh, granules, strict=True)]
    for row, p in one_by_one:
        granule = register(row, collections[row.collection_key], p)
        if granule is not None:
            out.append((row, granule))
    return out


@transaction.atomic
def _register_once(row, collection, meta, box, files):
    """Register one granule, deciding on the versions the catalog already has."""
    versions = list(Granule.objects.select_for_update()
                    .filter(collection=collection, granule_id=row.granule_id)
                    .order_by("-version"))
    gone = (Granule.State.DELETED, Granule.State.FAILED)
    latest = next((g for g in versions if g.state not in gone), None)
    version, replaces = (versions[0].version + 1 if versions else 1), None
    if latest is not None:
        policy = collection.duplicate_policy
        identical = _same_files(latest, files)
        if identical or policy == Collection.DuplicatePolicy.SKIP:
            why = ("identical to the granule already archived: nothing new to archive"
                   if identical else "the collection keeps the granule already archived "
                   "(duplicate policy 'skip')")
            _link(row, latest, why)
            return None
        if policy == Collection.DuplicatePolicy.ERROR:
            fail(row, pdr.ARCHIVE_ERROR, f"granule {row.granule_id} already exists in "
                 f"{collection.key} (version {latest.version}) and the collection refuses "
                 "duplicates (duplicate policy 'error')")
            return None
        if latest.state != Granule.State.ARCHIVED:
            fail(row, pdr.ARCHIVE_ERROR, f"granule {row.granule_id} version {latest.version} "
                 f"is still {latest.state}; retry once it is archived")
            return None
        replaces = latest
    granule = register_granule(
        collection, row.granule_id, start=meta.start, end=meta.end, bbox=box,
        attributes=meta.attributes, files=files, version=version, replaces=replaces)
    updated = IngestGranule.objects.filter(pk=row.pk, state=G.VALIDATED).update(
        catalog_granule=granule, state=G.ARCHIVING, admitted=False, updated_at=timezone.now())
    if not updated:
        transaction.set_rollback(True)
        return None
    row.state, row.catalog_granule = G.ARCHIVING, granule
    return granule


def _link(row, granule, why):
    """Point a granule row at one the catalog already has, sharing its fate."""
    if granule.state == Granule.State.ARCHIVED:
        IngestGranule.objects.filter(pk=row.pk, state=G.VALIDATED).update(
            catalog_granule=granule, state=G.ARCHIVING, admitted=True, reason=why)
        row.state = G.ARCHIVING
        _mark_archived(row.request_id, [row.pk])
        row.state = G.ARCHIVED
        return
    IngestGranule.objects.filter(pk=row.pk, state=G.VALIDATED).update(
        catalog_granule=granule, state=G.ARCHIVING,
        admitted=granule.state != Granule.State.REGISTERED,
        reason=why, updated_at=timezone.now())
    row.state = G.ARCHIVING


def admit(row, granule, area, started, transfers):
    """Hand the granule's staged files to the archive tier: True when it took them, False when
    the cache is full (no failure: the granule waits), None when the granule failed."""
    return admit_many([(row, granule)], area, {row.pk: started}, transfers)[0]


def admit_many(pairs, area, started, transfers, resolve=None):
    """admit() for [(row, granule)] with one call to the archive tier; `area` is a staging
    area or {provider id: area}, `started` {row pk: when its pipeline started}; `resolve`
    (relative path -> staged path) when the caller has resolved the paths already."""
    if not pairs:
        return []
    files = {}
    for f in File.objects.filter(granule_id__in=[g.pk for _, g in pairs]):
        files.setdefault(f.granule_id, []).append(f)
    items = []
    for row, granule in pairs:
        where = area.get(row.request.provider_id) if isinstance(area, dict) else area
        paths = {f["name"]: resolve(f["path"]) if resolve else staged_path(where, f["path"])
                 for f in row.spec["files"]}
        items.append((granule, {f.pk: paths[f.name] for f in files.get(granule.pk, [])}))
    admissions = archive.archive_granules(items)
    now, taken, out = timezone.now(), [], []
    for (row, granule), admission in zip(pairs, admissions, strict=True):
        if admission.error:
            fail(row, pdr.ARCHIVE_ERROR, f"the archive did not take the granule: "
                 f"{admission.error}")
            _discard_registration(granule)
            out.append(None)
            continue
        out.append(admission.admitted)
        if not admission.admitted:
            continue
        taken.append(row.pk)
        when = started.get(row.pk) or now
        transfers.append(TransferRecord(
            direction=TransferRecord.Direction.INGEST, bytes=row.bytes_total,
            started_at=min(when, now), ended_at=now, collection_id=granule.collection_id))
    # taken: the archive holds them now, so a chunk's lease on them ends here too
    IngestGranule.objects.filter(pk__in=taken, admitted=False).update(
        admitted=True, lease_owner="", lease_until=None)
    return out


def _discard_registration(granule):
    """A registration the archive refused leaves no trace in the catalog."""
    Granule.objects.filter(pk=granule.pk, state=Granule.State.REGISTERED).delete()


# ---------------------------------------------------------------------------------------------
# Final states and counters (request row locked first, always)


def fail(row, disposition, reason):
    """Mark a granule failed with why; it no longer holds up its request."""
    now = timezone.now()
    with transaction.atomic():
        request = IngestRequest.objects.select_for_update().get(pk=row.request_id)
        updated = IngestGranule.objects.filter(pk=row.pk).exclude(state__in=FINAL).update(
            state=G.FAILED, disposition=disposition, reason=reason[:2000], lease_owner="",
            lease_until=None, admitted=False, updated_at=now)
        if updated:
            request.failed_count += 1
            request.bytes_done += row.bytes_total
            _finish_if_done(request, now)
    row.state, row.disposition, row.reason = G.FAILED, disposition, reason


def _mark_archived(request_id, pks):
    now = timezone.now()
    with transaction.atomic():
        request = IngestRequest.objects.select_for_update().get(pk=request_id)
        rows = IngestGranule.objects.filter(pk__in=pks, state=G.ARCHIVING)
        nbytes = rows.aggregate(total=Sum("bytes_total"))["total"] or 0
        updated = rows.update(state=G.ARCHIVED, archived_at=now, bytes_done=F("bytes_total"),
                              admitted=True, updated_at=now)
        if updated:
            request.archived_count += updated
            request.bytes_done += nbytes
            _finish_if_done(request, now)
    return updated


def _finish_if_done(request, now):
    """Save the locked request's counters and close it once every granule is final."""
    if request.archived_count + request.failed_count >= request.granule_count:
        if not request.finished:
            request.state = R.COMPLETED if not request.failed_count else R.FAILED
            request.finished_at = now
            if request.way == IngestRequest.Way.PDR:
                request_id = request.pk
                transaction.on_commit(lambda: answer_pdr_of(request_id))
    elif request.state != R.RUNNING:
        request.state, request.finished_at = R.RUNNING, None
    request.save(update_fields=["state", "failed_count", "archived_count", "bytes_done",
                                "finished_at", "updated_at"])


def on_granules_archived(sender, granules, **kwargs):
    """Receiver of archive.signals.granules_archived: one update per request for the whole
    batch. It never raises into the storage manager: what it misses, sweep() finds."""
    try:
        rows = IngestGranule.objects.filter(catalog_granule__in=[g.pk for g in granules],
                                            state=G.ARCHIVING)
        by_request = {}
        for pk, request_id in rows.values_list("pk", "request_id"):
            by_request.setdefault(request_id, []).append(pk)
        for request_id, pks in by_request.items():
            _mark_archived(request_id, pks)
        _retire_replaced([g for g in granules if g.replaces_id])
    except Exception:
        log.exception("marking %d archived granules failed; the sweeper will", len(granules))


def _retire_replaced(granules):
    """Once new versions are archived, the ones they replace are superseded (or deleted, for a
    collection whose policy replaces)."""
    for granule in granules:
        policy = Granule.objects.filter(pk=granule.pk).values_list(
            "collection__duplicate_policy", flat=True).first()
        state = (Granule.State.DELETED if policy == Collection.DuplicatePolicy.REPLACE
                 else Granule.State.SUPERSEDED)
        Granule.objects.filter(pk=granule.replaces_id, state=Granule.State.ARCHIVED).update(
            state=state, updated_at=timezone.now())


def retry(request, positions=None):
    """Send failed granules (all, or those at `positions`) round again; returns how many."""
    now = timezone.now()
    with transaction.atomic():
        request = IngestRequest.objects.select_for_update().get(pk=request.pk)
        rows = IngestGranule.objects.filter(request=request, state=G.FAILED)
        if positions is not None:
            rows = rows.filter(position__in=positions)
        nbytes = rows.aggregate(total=Sum("bytes_total"))["total"] or 0
        count = rows.update(state=G.RECEIVED, disposition="", reason="", bytes_done=0,
                            catalog_granule=None, admitted=False, lease_owner="", lease_until=None,
                            attempts=0, updated_at=now)
        if count:
            request.failed_count -= count
            request.bytes_done -= nbytes
            _finish_if_done(request, now)
            _enqueue_request(request.pk)
    return count


# ---------------------------------------------------------------------------------------------
# Reporting


def state_counts(request):
    counts = {s: 0 for s in G.values}
    for row in (IngestGranule.objects.filter(request=request).values("state")
                .annotate(n=Count("pk"))):
        counts[row["state"]] = row["n"]
    return counts


def requests_visible_to(user):
    from backend.accounts import roles
    from backend.accounts.services import providers_of

    qs = IngestRequest.objects.select_related("provider")
    if roles.is_operator(user):
        return qs
    return qs.filter(provider__in=providers_of(user))


def pdrs_visible_to(user):
    from backend.accounts import roles
    from backend.accounts.services import providers_of

    qs = Pdr.objects.select_related("provider", "request")
    if roles.is_operator(user):
        return qs
    return qs.filter(provider__in=providers_of(user))


# ---------------------------------------------------------------------------------------------
# PDRs


def _answer_path(provider, pdr_row, suffix):
    folder = staging_area(provider) / Path(pdr_row.path).parent if pdr_row.path else \
        staging_area(provider)
    stem = pdr_row.name[:-4] if pdr_row.name.upper().endswith(".PDR") else pdr_row.name
    return folder / f"{stem}.{suffix}"


def _write_answer(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
    tmp.write_text(text, encoding="ascii")
    os.replace(tmp, path)


def _granule_id(group, collection):
    """The granule a file group delivers: the collection's file patterns name it; else the
    name of its first science file."""
    for pattern, _, _ in _file_patterns(collection):
        for spec in group.files:
            match = pattern.fullmatch(spec.file_id)
            if match and match.groupdict().get("granule"):
                return match.group("granule")
    science = [s for s in group.files if s.role == File.Role.DATA] or group.files
    return science[0].file_id


def submit_pdr(provider, name, text, *, user=None, path=""):
    """Accept a PDR (its granules start moving; a PAN follows) or refuse it with a PDRD.
    Returns (Pdr, created); the same PDR text under the same name is answered once."""
    problem = names.name_problem(name, "PDR name")
    if problem:
        raise IngestRejected(f"The PDR was not accepted: {problem}.")
    text_hash = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()
    existing = Pdr.objects.filter(provider=provider, name=name, text_hash=text_hash).first()
    if existing:
        return existing, False
    fields = {"provider": provider, "name": name, "text": text, "text_hash": text_hash,
              "path": path}
    try:
        doc = pdr.read_pdr(text)
    except pdr.PdrRejected as exc:
        return _refuse_pdr(fields, exc.disposition, exc.detail, pdr.short_pdrd(exc.disposition))
    specs = _pdr_specs(provider, doc)
    if doc.rejected_groups:
        detail = "; ".join(g.detail for g in doc.rejected_groups)
        return _refuse_pdr(fields, doc.rejected_groups[0].disposition, detail,
                           pdr.long_pdrd(doc.groups))
    try:
        with transaction.atomic():
            request, _ = submit(provider, specs, way=IngestRequest.Way.PDR, user=user,
                                label=name, dedupe_body=False, require_checksum=False)
            row = Pdr.objects.create(state=Pdr.State.ACCEPTED, request=request, **fields)
    except IngestRejected as exc:
        return _refuse_pdr(fields, pdr.INVALID_PVL, exc.detail, pdr.short_pdrd(pdr.INVALID_PVL))
    except IntegrityError:
        return Pdr.objects.get(provider=provider, name=name, text_hash=text_hash), False
    return row, True


def _pdr_specs(provider, doc):
    """Granule specs of a PDR's file groups; catalog problems are marked on the groups."""
    collections = _collections_by_key({g.collection_key for g in doc.groups})
    allowed = set(provider.collections.values_list("pk", flat=True))
    specs, seen = [], {}
    for group in doc.groups:
        if group.disposition != pdr.SUCCESSFUL:
            continue
        collection = collections.get(group.collection_key)
        if collection is None:
            group.reject(pdr.INVALID_DATA_TYPE, f"unknown DATA_TYPE {group.data_type} "
                         f"DATA_VERSION {group.data_version}")
            continue
        if collection.pk not in allowed:
            group.reject(pdr.INVALID_DATA_TYPE, f"provider {provider.name} may not deliver "
                         f"{collection.key}")
            continue
        for spec in group.files:
            if spec.cksum_type:
                try:
                    checksums.normalise(spec.cksum_type)
                except checksums.UnsupportedChecksum as exc:
                    group.reject(pdr.INVALID_CKSUM_TYPE, f"{spec.file_id}: {exc}")
        temporal = None
        begin = group.extras.get("BEGINNING_DATE/TIME")
        if begin:
            try:
                end = group.extras.get("ENDING_DATE/TIME") or begin
                temporal = {"start": pdr.parse_time(begin).isoformat(),
                            "end": pdr.parse_time(end).isoformat()}
            except ValueError:
                group.reject(pdr.INVALID_PVL, "BEGINNING_DATE/TIME or ENDING_DATE/TIME is not "
                             "an ISO 8601 date and time")
        granule_id = _granule_id(group, collection)
        ident = (collection.key, granule_id)
        if ident in seen:
            group.reject(pdr.INVALID_FILE_ID, f"delivers granule {granule_id} again (also "
                         f"FILE_GROUP {seen[ident]})")
        seen.setdefault(ident, group.number)
        if group.disposition != pdr.SUCCESSFUL:
            continue
        specs.append({
            "collection": collection.key, "granule_id": granule_id, "temporal": temporal,
            "files": [{"name": s.file_id, "path": s.path, "size": s.file_size,
                       "role": s.role, "checksum_type": s.cksum_type,
                       "checksum": s.cksum_value, "directory": s.directory_id}
                      for s in group.files],
        })
    return specs


def _refuse_pdr(fields, disposition, detail, pdrd_text):
    try:
        row = Pdr.objects.create(state=Pdr.State.REJECTED, disposition=disposition,
                                 detail=detail, pdrd=pdrd_text, **fields)
    except IntegrityError:
        return Pdr.objects.get(provider=fields["provider"], name=fields["name"],
                               text_hash=fields["text_hash"]), False
    _write_answer(_answer_path(fields["provider"], row, "PDRD"), pdrd_text)
    return row, True


def answer_pdr_of(request_id):
    """Write the PAN of a finished PDR request (again, after a retry finished it anew)."""
    row = Pdr.objects.select_related("provider", "request").filter(request_id=request_id).first()
    if row is None or not row.request.finished:
        return None
    files = []
    for state, why, spec in (IngestGranule.objects.filter(request_id=request_id)
                             .order_by("position").values_list("state", "disposition", "spec")):
        disposition = pdr.SUCCESSFUL if state == G.ARCHIVED else (why or pdr.INTERNAL_ERROR)
        for f in spec["files"]:
            files.append((f.get("directory", ""), f["name"], disposition))
    text = pdr.pan(files, timezone.now())
    failures = [d for _, _, d in files if d != pdr.SUCCESSFUL]
    Pdr.objects.filter(pk=row.pk).update(
        state=Pdr.State.ANSWERED, pan=text, disposition=failures[0] if failures
        else pdr.SUCCESSFUL, updated_at=timezone.now())
    _write_answer(_answer_path(row.provider, row, "PAN"), text)
    return text


# ---------------------------------------------------------------------------------------------
# Periodic work


def admit_waiting(limit=500):
    """Offer the archive again the granules that waited for cache room (or whose worker died
    between registration and admission)."""
    now = timezone.now()
    token = uuid.uuid4().hex
    pks = list(IngestGranule.objects.filter(
        state=G.ARCHIVING, admitted=False, catalog_granule__isnull=False,
        catalog_granule__state=Granule.State.REGISTERED,
    ).filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .order_by("updated_at").values_list("pk", flat=True)[:limit])
    if not pks:
        return 0
    IngestGranule.objects.filter(pk__in=pks).filter(
        Q(lease_until__isnull=True) | Q(lease_until__lt=now)).update(
        lease_owner=token, lease_until=now + timedelta(seconds=settings.GRANARY_INGEST_LEASE_S))
    transfers = []
    try:
        rows = list(IngestGranule.objects.filter(lease_owner=token)
                    .select_related("catalog_granule__collection", "request__provider")
                    .order_by("updated_at"))
        areas = {r.request.provider_id: staging_area(r.request.provider) for r in rows}
        taken = admit_many([(r, r.catalog_granule) for r in rows], areas, {}, transfers)
    finally:
        IngestGranule.objects.filter(lease_owner=token).update(lease_owner="", lease_until=None)
        record_transfers(transfers)
    return sum(1 for t in taken if t)


def sweep():
    """Beat: nothing stays stuck. Re-kick granules whose worker died, admit waiting ones,
    finish granules whose archive signal was missed and requests whose last granule ended."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.GRANARY_INGEST_STALE_S)
    request_ids = set(_claimable(now).filter(updated_at__lt=stale)
                      .values_list("request_id", flat=True).distinct()[:1000])
    for request_id in request_ids:
        kick(request_id)
    admitted = admit_waiting()
    missed = IngestGranule.objects.filter(state=G.ARCHIVING,
                                          catalog_granule__state=Granule.State.ARCHIVED)
    by_request = {}
    for pk, request_id in missed.values_list("pk", "request_id")[:5000]:
        by_request.setdefault(request_id, []).append(pk)
    for request_id, pks in by_request.items():
        _mark_archived(request_id, pks)
    for row in Pdr.objects.filter(state=Pdr.State.ACCEPTED,
                                  request__state__in=[R.COMPLETED, R.FAILED]):
        answer_pdr_of(row.request_id)
    return {"kicked": len(request_ids), "admitted": admitted,
            "archived": sum(len(p) for p in by_request.values())}


def clean_staging(limit=2000):
    """Drop staged copies of granules archived longer ago than the retention, unless the
    provider has changed the file since."""
    cutoff = timezone.now() - timedelta(seconds=settings.GRANARY_STAGING_RETENTION_S)
    rows = list(IngestGranule.objects.filter(
        state=G.ARCHIVED, staging_removed=False, archived_at__lte=cutoff,
    ).select_related("request__provider")[:limit])
    removed = 0
    for row in rows:
        area = staging_area(row.request.provider)
        for f in row.spec["files"]:
            path = staged_path(area, f["path"])
            try:
                st = path.stat() if path is not None else None
            except FileNotFoundError:
                continue
            if st and st.st_size == f["size"] and st.st_mtime <= row.archived_at.timestamp():
                path.unlink(missing_ok=True)
                removed += 1
    IngestGranule.objects.filter(pk__in=[r.pk for r in rows]).update(staging_removed=True)
    return removed


# ---------------------------------------------------------------------------------------------
# Uploads into the staging area


class UploadError(Exception):
    """An upload refused, with the HTTP status that says why."""

    def __init__(self, message, status=400):
        super().__init__(message)
        self.status = status


def receive_upload(provider, relative, stream, length, *, checksum_type=None, checksum=None):
    """Stream `length` bytes into the provider's staging area at `relative`, block by block,
    checking size (and checksum when given) before the file appears under its name."""
    problem = names.path_problem(relative)
    if problem:
        raise UploadError(f"The upload path is not accepted: {problem}.")
    if length is None or not str(length).strip().isdigit():
        raise UploadError("Send the size of the file in Content-Length.", 411)
    length = int(length)
    limit = settings.GRANARY_UPLOAD_MAX_BYTES
    if length > limit:
        raise UploadError(f"The file is {length} bytes; uploads may be at most {limit} bytes.",
                          413)
    if length == 0:
        raise UploadError("The file is empty; empty files are not archived.")
    if checksum and not checksum_type:
        raise UploadError("X-Checksum needs X-Checksum-Type (MD5, SHA256, CKSUM or ADLER32).")
    try:
        kind = checksums.normalise(checksum_type or settings.GRANARY_INGEST_DEFAULT_CHECKSUM)
    except checksums.UnsupportedChecksum as exc:
        raise UploadError(f"X-Checksum-Type: {exc}.") from exc
    relative = names.normal_path(relative)
    area = staging_area(provider)
    area.mkdir(parents=True, exist_ok=True)
    target = staged_path(area, relative)
    if target is None:
        raise UploadError(f"{relative} leads out of the staging area through a link.")
    if target.is_dir():
        raise UploadError(f"{relative} is a folder in your staging area; give a file name.", 409)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise UploadError(f"A folder of {relative} is a file in your staging area.", 409) from exc
    tmp = target.with_name(f".{target.name}.upload-{uuid.uuid4().hex[:12]}")
    digest, received = checksums.hasher(kind), 0
    try:
        with open(tmp, "wb") as out:
            while received < length:
                block = stream.read(min(checksums.CHUNK, length - received))
                if not block:
                    break
                received += len(block)
                digest.update(block)
                out.write(block)
        if received != length:
            raise UploadError(f"Received {received} of {length} bytes; the upload was cut "
                              "short. Send it again.")
        value = digest.hexdigest()
        if checksum and not checksums.same(kind, value, checksum):
            raise UploadError(f"The {kind} checksum of what arrived is {value}, not {checksum}; "
                              "nothing was kept. Send it again.")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return {"path": relative, "size": received, "checksum_type": kind, "checksum": value}


# ---------------------------------------------------------------------------------------------
# Polling staging areas: PDRs and drop directories


def _complete(path, st, now):
    """A delivered file is complete when NAME.done lies beside it or it stopped changing."""
    return (path.with_name(path.name + ".done").exists()
            or now - st.st_mtime >= settings.GRANARY_DROP_STABLE_S)


def poll_staging():
    """Beat: look for new PDRs and complete granules in every provider's staging area."""
    root = Path(settings.STAGING_ROOT)
    found = {"pdrs": 0, "drops": 0}
    if not root.is_dir():
        return found
    for provider in Provider.objects.all():
        area = root / provider.name
        if not area.is_dir():
            continue
        with _poll_lock(area) as mine:
            if mine:  # else another poller is at this area right now
                found["pdrs"] += poll_pdrs(provider, area)
                found["drops"] += poll_drops(provider, area)
    return found


@contextmanager
def _poll_lock(area):
    """One poller per staging area at a time (beat may start a poll while one still runs)."""
    with open(area / ".poll.lock", "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def poll_pdrs(provider, area):
    """PDRs at the top of the area or in its pdr/ folder that have no answer yet."""
    import time

    now, made = time.time(), 0
    for folder in (area, area / "pdr", area / "PDR"):
        if not folder.is_dir():
            continue
        for entry in os.scandir(folder):
            if not entry.is_file() or not entry.name.upper().endswith(".PDR"):
                continue
            path, st = Path(entry.path), entry.stat()
            if not _complete(path, st, now) or _answered(path, st):
                continue
            with open(path, "rb") as f:
                text = f.read(16 << 20).decode("ascii", "replace")
            try:
                _, created = submit_pdr(provider, entry.name, text,
                                        path=path.relative_to(area).as_posix())
            except IngestRejected as exc:
                log.warning("PDR %s of %s ignored: %s", path, provider.name, exc.detail)
                continue
            made += created
    return made


def _answered(path, st):
    stem = path.name[:-4]
    for suffix in ("PAN", "PDRD"):
        answer = path.with_name(f"{stem}.{suffix}")
        try:
            if answer.stat().st_mtime >= st.st_mtime:
                return True
        except FileNotFoundError:
            continue
    return False


def _file_patterns(collection):
    """(regex, role or None, required) per entry of the collection's file_patterns."""
    import re

    out = []
    for entry in collection.file_patterns or []:
        spec = entry if isinstance(entry, dict) else {"regex": entry}
        try:
            out.append((re.compile(spec["regex"]), spec.get("role"), spec.get("required", True)))
        except (re.error, KeyError, TypeError):
            log.warning("collection %s has a bad file pattern %r", collection.key, entry)
    return out


def role_of(name):
    lower = name.lower()
    if lower.endswith((".met", ".xml", ".json", ".iso")):
        return File.Role.METADATA
    if lower.endswith((".jpg", ".jpeg", ".png", ".gif")):
        return File.Role.BROWSE
    if lower.endswith((".qa", ".log")):
        return File.Role.QA
    return File.Role.DATA


def group_files(collection, file_names):
    """Granules among file names by the collection's patterns: ({granule_id: [(name, role)]}
    for complete granules, [names no pattern claims]). Complete: every required pattern has a
    file and one of them is data. Without patterns each file is one granule."""
    patterns = _file_patterns(collection)
    if not patterns:
        return {n: [(n, role_of(n))] for n in file_names}, []
    found, stray = {}, []
    for name in file_names:
        for index, (regex, role, _) in enumerate(patterns):
            match = regex.fullmatch(name)
            if match and match.groupdict().get("granule"):
                found.setdefault(match.group("granule"), []).append(
                    (index, name, role or role_of(name)))
                break
        else:
            stray.append(name)
    required = {i for i, (_, _, needed) in enumerate(patterns) if needed}
    complete = {gid: [(n, r) for _, n, r in files] for gid, files in found.items()
                if required <= {i for i, _, _ in files}
                and any(r == File.Role.DATA for _, _, r in files)}
    return complete, stray


def poll_drops(provider, area):
    """Complete granules in drop/<SHORT.VERSION>/ become one request per folder and poll."""
    import time

    drop = area / "drop"
    if not drop.is_dir():
        return 0
    allowed = {c.key: c for c in provider.collections.all()}
    made, now = 0, time.time()
    for folder in sorted(p for p in drop.iterdir() if p.is_dir() and not p.name.startswith(".")):
        collection = allowed.get(folder.name)
        if collection is None:
            log.warning("drop folder %s: %s may not deliver %s", folder, provider.name,
                        folder.name)
            continue
        ready = {}
        for entry in os.scandir(folder):
            if (entry.is_file() and not entry.name.startswith(".")
                    and not entry.name.endswith(".done")
                    and _complete(Path(entry.path), entry.stat(), now)):
                ready[entry.name] = entry.stat().st_size
        _recover_claims(folder, now)
        granules, _ = group_files(collection, sorted(ready))
        if granules:
            made += bool(_claim_drop(provider, area, collection, folder, granules, ready))
    return made


def _recover_claims(folder, now):
    """Files a poller moved aside but never asked for (it died in between) go back."""
    claims = folder / ".claimed"
    if not claims.is_dir():
        return
    for claim in claims.iterdir():
        if now - claim.stat().st_mtime < settings.GRANARY_INGEST_STALE_S:
            continue
        if IngestRequest.objects.filter(idempotency_key=f"drop:{claim.name}").exists():
            continue
        for name in os.listdir(claim):
            os.replace(claim / name, folder / name)
        claim.rmdir()


def _claim_drop(provider, area, collection, folder, granules, sizes):
    """Move the granules' files aside (so no poll takes them twice), then ask for them."""
    token = uuid.uuid4().hex[:16]
    claimed = folder / ".claimed" / token
    claimed.mkdir(parents=True)
    specs = []
    for granule_id, files in granules.items():
        for name, _ in files:
            os.replace(folder / name, claimed / name)
            (folder / f"{name}.done").unlink(missing_ok=True)
        specs.append({"collection": collection.key, "granule_id": granule_id, "files": [
            {"name": name, "role": role, "size": sizes[name],
             "path": (claimed / name).relative_to(area).as_posix()} for name, role in files]})
    try:
        request, _ = submit(provider, specs, way=IngestRequest.Way.DROP,
                            label=folder.relative_to(area).as_posix(),
                            idempotency_key=f"drop:{token}", dedupe_body=False,
                            require_checksum=False)
    except IngestRejected as exc:
        log.warning("drop folder %s: %s", folder, exc.detail)
        for name in os.listdir(claimed):
            os.replace(claimed / name, folder / name)
        claimed.rmdir()
        return None
    return request


# ---------------------------------------------------------------------------------------------
# A local directory (the command line)


def directory_granules(collection, directory):
    """Files under `directory` grouped into granules by the collection's patterns:
    ({granule_id: [(name, role, path)]}, [names left out])."""
    paths = {}
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            if name in paths:
                raise IngestRejected(f"{name} is in {paths[name].parent} and in {root}; file "
                                     "names of a collection must be unique.")
            paths[name] = Path(root) / name
    granules, stray = group_files(collection, sorted(paths))
    grouped = {gid: [(n, role, paths[n]) for n, role in files] for gid, files in granules.items()}
    taken = {n for files in granules.values() for n, _ in files}
    return grouped, sorted(set(paths) - taken)


def stage_directory(provider, collection, directory, *, user=None):
    """Put a directory's granules into the provider's staging area (hard links where the
    filesystem allows, copies otherwise) and store a CLI request for them, not yet queued.
    Returns (request, names left out)."""
    if not provider.may_deliver(collection):
        raise IngestForbidden(f"Provider {provider.name} may not deliver {collection.key}.")
    granules, stray = directory_granules(collection, directory)
    if not granules:
        raise IngestRejected(f"No complete granule of {collection.key} in {directory}.")
    token = uuid.uuid4().hex[:16]
    base = staging_area(provider) / "cli" / token
    base.mkdir(parents=True)
    specs = []
    for granule_id, files in granules.items():
        entries = []
        for name, role, source in files:
            target = base / name
            try:
                os.link(source, target)
            except OSError:
                shutil.copyfile(source, target)
            entries.append({"name": name, "role": role, "size": target.stat().st_size,
                            "path": target.relative_to(staging_area(provider)).as_posix()})
        specs.append({"collection": collection.key, "granule_id": granule_id, "files": entries})
    try:
        request, _ = submit(provider, specs, way=IngestRequest.Way.CLI, user=user,
                            label=str(directory)[:255], idempotency_key=f"cli:{token}",
                            dedupe_body=False, require_checksum=False, enqueue=False)
    except IngestRejected:
        shutil.rmtree(base, ignore_errors=True)
        raise
    return request, stray
