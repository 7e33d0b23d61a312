"""Moving work along: chunks of a request's granules carried through stage -> validate ->
register -> archive under a lease, with bulk state updates."""
import logging
import uuid
from datetime import timedelta

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from backend import leases
from backend.archive import services as archive
from backend.catalog import bulk, checksums
from backend.nudges import send_on_commit

from .. import pdr
from ..models import IngestGranule, IngestRequest
from .accept import collections_by_key
from .outcome import fail
from .registration import (
    admit,
    admit_many,
    prepare,
    record_admitted,
    record_moves,
    register,
    register_many,
    write_validated,
)
from .staging import staged_path, staging_area
from .states import FINAL, PRE_ARCHIVE, G, R

log = logging.getLogger(__name__)


def claimable(now):
    """Granules before the archive that no live lease holds: work a worker may take."""
    return IngestGranule.objects.filter(state__in=PRE_ARCHIVE).filter(leases.free(now))


def lease_keeper(token):
    """The keeper of the lease on the granules `token` holds, renewed while its worker works
    (a large granule's checksum included), so a killed worker's granules are free again within
    GRANARY_INGEST_LEASE_S. Rows a transaction holds are skipped this round, never waited on."""

    def renew(_):
        held = list(IngestGranule.objects.select_for_update(skip_locked=True)
                    .filter(lease_owner=token).order_by("pk").values_list("pk", flat=True))
        IngestGranule.objects.filter(pk__in=held, lease_owner=token).update(
            lease_until=leases.until(settings.GRANARY_INGEST_LEASE_S))

    return leases.Keeper(settings.GRANARY_INGEST_LEASE_S, renew, f"ingest-lease-{token[:8]}",
                         held=[token])


def chunk_ranges(rows, size, max_bytes=0):
    """[start, stop) position ranges over sorted (position, bytes) rows, each holding at most
    `size` granules and ending at the granule that brings it to `max_bytes` (0: no bound). Large
    granules so get chunks of their own: the ingest workers read them side by side, and the
    first reach the archive while the others are still being checked."""
    ranges, start, count, held = [], None, 0, 0
    for position, nbytes in rows:
        if start is None:
            start, count, held = position, 0, 0
        count, held = count + 1, held + (nbytes or 0)
        if count >= size or (max_bytes and held >= max_bytes):
            ranges.append((start, position + 1))
            start = None
    if start is not None:
        ranges.append((start, position + 1))
    return ranges


def kick(request_id):
    """Queue one chunk task per GRANARY_INGEST_CHUNK granules (or GRANARY_INGEST_CHUNK_BYTES)
    that wait for a worker."""
    now = timezone.now()
    waiting = claimable(now).filter(request_id=request_id)
    ranges = chunk_ranges(waiting.order_by("position").values_list("position", "bytes_total"),
                          settings.GRANARY_INGEST_CHUNK, settings.GRANARY_INGEST_CHUNK_BYTES)
    # the sweeper leaves them alone for a while; rows written just now (a new request) need no
    # touch, and rewriting thousands of rows (every index of each) is the costly part of a kick
    stale = now - timedelta(seconds=settings.GRANARY_INGEST_STALE_S / 2)
    waiting.filter(updated_at__lt=stale).update(updated_at=now)
    for start, stop in ranges:
        send_on_commit("ingest.process_chunk", request_id, start, stop)
    return len(ranges)


def run_request(request_id, chunk=None, on_chunk=None):
    """Process every waiting granule of a request in this process (CLI, tests); on_chunk(stop)
    is called after each chunk with the position it reached."""
    now = timezone.now()
    rows = (claimable(now).filter(request_id=request_id).order_by("position")
            .values_list("position", "bytes_total"))
    taken = 0
    for start, stop in chunk_ranges(rows, chunk or settings.GRANARY_INGEST_CHUNK,
                                    settings.GRANARY_INGEST_CHUNK_BYTES):
        taken += process_chunk(request_id, start, stop)
        if on_chunk:
            on_chunk(stop)
    return taken


# What a chunk reads of its rows (the rest loads on first use): rows built from plain values,
# not by Model.__init__ with its signals and every timestamp parsed, cost a third as much.
_CHUNK_FIELDS = ("id", "request_id", "position", "collection_key", "granule_id", "state",
                 "disposition", "reason", "spec", "bytes_total", "bytes_done", "attempts",
                 "admitted", "catalog_granule_id")


def process_chunk(request_id, start, stop):
    """Carry the waiting granules at positions [start, stop) through the pipeline; returns how
    many this call took (0 when another worker holds them: a duplicate message is harmless)."""
    token = uuid.uuid4().hex
    taken = claim_chunk(request_id, start, stop, token)
    if not taken:
        return 0
    request = IngestRequest.objects.select_related("provider").get(pk=request_id)
    rows = [bulk.loaded(IngestGranule, _CHUNK_FIELDS, values) for values in
            IngestGranule.objects.filter(lease_owner=token).order_by("position")
            .values_list(*_CHUNK_FIELDS)]
    try:
        with lease_keeper(token):
            _Chunk(request, rows, token).run()
    finally:
        IngestGranule.objects.filter(lease_owner=token).update(lease_owner="", lease_until=None)
    return taken


def claim_chunk(request_id, start, stop, token):
    """Take the waiting granules at positions [start, stop) under a lease for `token`; how many
    were taken."""
    now = timezone.now()
    taken = (claimable(now).filter(request_id=request_id, position__gte=start,
                                    position__lt=stop)
             .update(lease_owner=token,
                     lease_until=leases.until(settings.GRANARY_INGEST_LEASE_S, now),
                     attempts=F("attempts") + 1, updated_at=now))
    if taken:
        IngestRequest.objects.filter(pk=request_id, state=R.RECEIVED).update(
            state=R.RUNNING, updated_at=now)
    return taken


class _Chunk:
    """One batch of granules of one request, moved a step at a time with bulk updates."""

    def __init__(self, request, rows, token):
        self.request, self.rows, self.token = request, rows, token
        self.area = staging_area(request.provider)
        self.collections = collections_by_key({r.collection_key for r in rows})
        self.started = {}
        self.moves = []
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
        # a quick chunk keeps staging and validation in memory: registration records them with
        # its own write (a crash before it only repeats the quick checks)
        self.quick = sum(r.bytes_total for r in self.rows) < settings.GRANARY_INGEST_QUICK_BYTES
        self._step(G.RECEIVED, G.STAGED, self._stage, write=not self.quick)
        self._step(G.STAGED, G.VALIDATED, self._verify, write=not self.quick,
                   bytes_done=F("bytes_total"))
        changed = [r for r in self.rows if getattr(r, "_spec_changed", False)]
        if changed:
            IngestGranule.objects.bulk_update(changed, ["spec"], batch_size=500)
        self._register_and_archive([r for r in self.rows if r.state == G.VALIDATED])
        record_moves(self.moves, insert=bulk.insert)

    def _guard(self, row, action):
        """Run one granule's step; an unexpected error fails that granule, not the chunk."""
        try:
            return action(row)
        except Exception as exc:
            log.exception("ingest granule %s failed unexpectedly", row.pk)
            fail(row, pdr.INTERNAL_ERROR, f"unexpected error: {exc}")
            return None

    def _step(self, source, target, check, write=True, **extra):
        """check(row) -> None when the row may move from source to target, else (disposition,
        reason[, {file name: disposition}]).
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
                        f"{f['path']} leads out of the staging area through a link",
                        {f["name"]: pdr.FILES_NOT_FOUND})
            if not path.is_file():
                missing.append(f)
        if missing:
            return (pdr.FILES_NOT_FOUND, "not found in the staging area of "
                    f"{self.request.provider.name}: {', '.join(f['path'] for f in missing)}",
                    {f["name"]: pdr.FILES_NOT_FOUND for f in missing})
        return None

    def _verify(self, row):
        """Every file's size and checksum: all faults are named at once, each on its file (a
        PAN tells the provider what happened to each file, not only to its granule)."""
        faults = [(f, fault) for f in row.spec["files"] if (fault := self._verify_file(row, f))]
        if not faults:
            return None
        return (faults[0][1][0], "; ".join(reason for _, (_, reason) in faults),
                {f["name"]: disposition for f, (disposition, _) in faults})

    def _verify_file(self, row, f):
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

    def _sources(self, row):
        """{file name: staged path} of a row's files."""
        return {f["name"]: self.path(f["path"]) for f in row.spec["files"]}

    def _register_and_archive(self, rows):
        """The validated granules into the catalog and the archive, in bulk where it can be."""
        prepared = [(row, p) for row in rows
                    if (p := self._guard(row, lambda r: prepare(r, self.path)))
                    is not None]
        try:
            registered = register_many(prepared, self.collections, self.token,
                                       self._sources if self.quick else None)
        except Exception:
            log.exception("bulk registration failed; registering granule by granule")
            write_validated([row for row, _ in prepared], self.token)
            registered = []
            for row, p in prepared:
                if row.state == G.VALIDATED:
                    granule = self._guard(row, lambda r, p=p: register(
                        r, self.collections[r.collection_key], p))
                    if granule is not None:
                        registered.append((row, granule))
        record_admitted([(r, g) for r, g in registered if r.admitted], self.started,
                        self.moves)
        registered = [(r, g) for r, g in registered if not r.admitted]
        try:
            admit_many(registered, self.area, self.started, self.moves, self.path)
        except Exception:
            log.exception("bulk admission failed; admitting granule by granule")
            for row, granule in registered:
                self._guard(row, lambda r, g=granule: admit(r, g, self.area,
                                                            self.started.get(r.pk),
                                                            self.moves))
