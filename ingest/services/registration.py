"""Metadata and registration: a validated granule into the catalog (per the collection's
duplicate policy) and its staged files handed to the archive tier."""
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from backend.archive import services as archive
from backend.catalog import bulk, shapes
from backend.catalog.geo import BBoxError, make_bbox
from backend.catalog.models import Collection, File, Granule
from backend.catalog.services import register_granule, register_granules
from backend.metrics.models import TransferRecord
from backend.metrics.services import per_collection, record_transfers

from .. import metadata, pdr
from ..models import IngestGranule
from .outcome import fail, mark_archived
from .staging import staged_path
from .states import PRE_ARCHIVE, G


def _metadata(row, resolve):
    """Times, box and attributes: the request's own, completed from the delivered files
    (`resolve`: relative path in the staging area -> staged path)."""
    spec = row.spec
    found = metadata.Extracted()
    if spec.get("temporal"):
        found.start = pdr.parse_time(spec["temporal"]["start"])
        found.end = pdr.parse_time(spec["temporal"]["end"])
    found.bbox = spec.get("bbox")
    found.footprint = spec.get("footprint")
    found.attributes = dict(spec.get("attributes") or {})
    if found.start is None or found.bbox is None:
        files = [(f["name"], f["role"], resolve(f["path"])) for f in spec["files"]]
        found.absorb(metadata.extract(files), "files")
    return found


def _differences(granule, meta, box, files):
    """What a delivery changes in a granule the catalog has, by name (files, temporal start,
    bbox, attribute cloud_cover, ...): empty when it is the same granule again."""
    have = {(f.name, f.size, f.checksum_type, f.checksum.lower())
            for f in granule.files.all()}
    want = {(f["name"], f["size"], f["checksum_type"], str(f["checksum"]).lower())
            for f in files}
    out = ["files"] if have != want else []
    if meta.start != granule.temporal_start:
        out.append("temporal start")
    if meta.end != granule.temporal_end:
        out.append("temporal end")
    if (box.as_list() if box is not None else None) != granule.bbox:
        out.append("bbox")
    elif meta.shape is not None and granule.footprint and not meta.shape.geometry.equals(
            shapes.from_stored(granule.footprint)):
        out.append("footprint")
    old, new = granule.attributes or {}, meta.attributes or {}
    out += [f"attribute {key}" for key in sorted(set(old) | set(new), key=str)
            if old.get(key, _ABSENT) != new.get(key, _ABSENT)]
    return out


_ABSENT = object()


def prepare(row, resolve):
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
    try:
        meta.shape = _outline(meta.footprint, meta.footprint_edges)
    except shapes.ShapeError as exc:
        fail(row, pdr.METADATA_ERROR, str(exc))
        return None
    if meta.shape is not None:
        box = meta.shape.bbox()     # the box must bound the outline: it is the prefilter
    files = [{k: f[k] for k in ("name", "role", "size", "checksum_type", "checksum")}
             for f in row.spec["files"]]
    return meta, box, files


def _outline(footprint, edges):
    """The checked Shape of a footprint from the request or the files (None: use the box)."""
    if footprint is None:
        return None
    if isinstance(footprint, str):
        return shapes.from_wkt(footprint)
    return shapes.parse_geojson(footprint, "footprint", edges=edges)


def register(row, collection, prepared):
    """Register the granule in the catalog per the collection's duplicate policy, and link it.
    `prepared` is what prepare gave for the row. Returns the granule to hand to the archive,
    or None when there is nothing to archive."""
    for _ in range(3):
        try:
            return _register_once(row, collection, *prepared)
        except IntegrityError:
            continue  # another request registered the same granule meanwhile: decide again
    fail(row, pdr.INTERNAL_ERROR, "the granule could not be registered; retry it")
    return None


def register_many(prepared, collections, token, sources=None):
    """register() for a chunk's validated rows [(row, prepare(row))]: granules the catalog has
    never seen go in with one bulk insert; the others (duplicates, races) take the one-by-one
    path that applies the duplicate policy. Returns [(row, granule to archive)].

    With `sources` (row -> {file name: staged path}) the new granules are handed to the
    archive in the same transaction: inserted ARCHIVING with their cache entries and
    migrations, and their rows marked admitted, each row written once (`row.admitted` says
    so). When the archive cannot take them all, they are registered alone, to be admitted
    after. Rows still RECEIVED in the database (a quick chunk's validation is kept in memory)
    are taken too: the lease says they are this chunk's."""
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
                pk__in=[r.pk for r, _ in prepared], state__in=PRE_ARCHIVE, lease_owner=token)
                .order_by("pk").values_list("pk", flat=True))
            for row, p in prepared:
                new = (collections[row.collection_key].pk, row.granule_id) not in seen
                (fresh if new and row.pk in held else one_by_one).append((row, p))
            granules, admitted = _register_fresh(fresh, collections, sources)
            # a lease ends with admission: the archive holds the granules now
            ended = {"lease_owner": "", "lease_until": None} if admitted else {}
            bulk.update_each(
                IngestGranule, "catalog_granule",
                {row.pk: granule.pk for (row, _), granule in zip(fresh, granules, strict=True)},
                state=G.ARCHIVING, admitted=admitted, updated_at=timezone.now(),
                bytes_done=F("bytes_total"), **ended)
            for (row, _), granule in zip(fresh, granules, strict=True):
                row.catalog_granule, row.state, row.admitted = granule, G.ARCHIVING, admitted
    except Exception as exc:
        for row, _ in fresh:
            row.state, row.catalog_granule, row.admitted = G.VALIDATED, None, False
        if not isinstance(exc, IntegrityError):
            raise
        # another request registered one of them meanwhile: decide one by one
        one_by_one, fresh, granules = prepared, [], []
    out = [(row, granule) for (row, _), granule in zip(fresh, granules, strict=True)]
    write_validated([row for row, _ in one_by_one], token)
    for row, p in one_by_one:
        granule = register(row, collections[row.collection_key], p)
        if granule is not None:
            out.append((row, granule))
    return out


def _register_fresh(fresh, collections, sources):
    """Insert the new granules of register_many; (granules, admitted): admitted when
    `sources` was given and the archive took them all in this transaction."""
    specs = [{"collection": collections[row.collection_key], "granule_id": row.granule_id,
              "start": meta.start, "end": meta.end, "bbox": box, "footprint": meta.shape,
              "attributes": meta.attributes, "files": files}
             for row, (meta, box, files) in fresh]
    if sources and fresh:
        try:
            with transaction.atomic():
                granules = register_granules(specs, state=Granule.State.ARCHIVING)
                names = {}
                # order_by(): the model's order by granule joins and sorts the granules
                for pk, granule_id, name in File.objects.filter(
                        granule_id__in=[g.pk for g in granules]).order_by().values_list(
                        "pk", "granule_id", "name"):
                    names.setdefault(granule_id, []).append((pk, name))
                items = []
                for (row, _), granule in zip(fresh, granules, strict=True):
                    paths = sources(row)
                    items.append((granule, {pk: paths[name]
                                            for pk, name in names.get(granule.pk, [])}))
                archive.archive_granules(items, inserted=True)
            return granules, True
        except archive.ArchiveError:
            pass  # the cache is full, or a file could not be placed: registered alone
    return register_granules(specs), False


def write_validated(rows, token):
    """Record VALIDATED for rows whose validation a quick chunk kept in memory, before they
    take the one-by-one path (which moves only VALIDATED rows on)."""
    pks = [row.pk for row in rows if row.state == G.VALIDATED]
    if pks:
        IngestGranule.objects.filter(pk__in=pks, state__in=PRE_ARCHIVE,
                                     lease_owner=token).update(
            state=G.VALIDATED, bytes_done=F("bytes_total"), updated_at=timezone.now())


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
        changed = ", ".join(_differences(latest, meta, box, files))
        if not changed or policy == Collection.DuplicatePolicy.SKIP:
            why = ("identical to the granule already archived: nothing new to archive"
                   if not changed else "the collection keeps the granule already archived "
                   f"(duplicate policy 'skip'): this delivery's {changed} were not taken")
            _link(row, latest, why)
            return None
        if policy == Collection.DuplicatePolicy.ERROR:
            fail(row, pdr.ARCHIVE_ERROR, f"granule {row.granule_id} already exists in "
                 f"{collection.key} (version {latest.version}) and the collection refuses "
                 f"duplicates (duplicate policy 'error'); this delivery differs in {changed}")
            return None
        if latest.state != Granule.State.ARCHIVED:
            fail(row, pdr.ARCHIVE_ERROR, f"granule {row.granule_id} version {latest.version} "
                 f"is still {latest.state}; retry once it is archived")
            return None
        replaces = latest
        row.reason = f"version {version}: differs from version {latest.version} in {changed}"
    granule = register_granule(
        collection, row.granule_id, start=meta.start, end=meta.end, bbox=box,
        footprint=meta.shape, attributes=meta.attributes, files=files, version=version,
        replaces=replaces)
    updated = IngestGranule.objects.filter(pk=row.pk, state=G.VALIDATED).update(
        catalog_granule=granule, state=G.ARCHIVING, admitted=False, reason=row.reason,
        updated_at=timezone.now())
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
        mark_archived(row.request_id, [row.pk])
        row.state = G.ARCHIVED
        return
    IngestGranule.objects.filter(pk=row.pk, state=G.VALIDATED).update(
        catalog_granule=granule, state=G.ARCHIVING,
        admitted=granule.state != Granule.State.REGISTERED,
        reason=why, updated_at=timezone.now())
    row.state = G.ARCHIVING


def admit(row, granule, area, started, moves):
    """Hand the granule's staged files to the archive tier: True when it took them, False when
    the cache is full (no failure: the granule waits), None when the granule failed."""
    return admit_many([(row, granule)], area, {row.pk: started}, moves)[0]


def admit_many(pairs, area, started, moves, resolve=None):
    """admit() for [(row, granule)] with one call to the archive tier; `area` is a staging
    area or {provider id: area}, `started` {row pk: when its pipeline started}; `resolve`
    (relative path -> staged path) when the caller has resolved the paths already."""
    if not pairs:
        return []
    files = {}
    for pk, granule_id, name in File.objects.filter(
            granule_id__in=[g.pk for _, g in pairs]).order_by().values_list(
            "pk", "granule_id", "name"):
        files.setdefault(granule_id, []).append((pk, name))
    items = []
    for row, granule in pairs:
        where = area.get(row.request.provider_id) if isinstance(area, dict) else area
        paths = {f["name"]: resolve(f["path"]) if resolve else staged_path(where, f["path"])
                 for f in row.spec["files"]}
        items.append((granule, {pk: paths[name] for pk, name in files.get(granule.pk, [])}))
    admissions = archive.archive_granules(items)
    taken, out = [], []
    for (row, granule), admission in zip(pairs, admissions, strict=True):
        if admission.error:
            fail(row, pdr.ARCHIVE_ERROR, f"the archive did not take the granule: "
                 f"{admission.error}")
            _discard_registration(granule)
            out.append(None)
            continue
        out.append(admission.admitted)
        if admission.admitted:
            taken.append((row, granule))
    record_admitted(taken, started, moves)
    # taken: the archive holds them now, so a chunk's lease on them ends here too
    IngestGranule.objects.filter(pk__in=[row.pk for row, _ in taken], admitted=False).update(
        admitted=True, lease_owner="", lease_until=None)
    return out


def record_admitted(pairs, started, moves):
    """The admitted (row, granule) pairs as ingest moves added to `moves`: (collection id,
    bytes, started, ended), recorded per collection by metrics.per_collection."""
    now = timezone.now()
    moves.extend((granule.collection_id, row.bytes_total, min(started.get(row.pk) or now, now),
                  now) for row, granule in pairs)


def record_moves(moves, insert=None):
    """The ingest moves record_admitted gathered, as transfer records and their roll-ups."""
    if moves:
        record_transfers(per_collection(TransferRecord.Direction.INGEST, moves), insert=insert)


def _discard_registration(granule):
    """A registration the archive refused leaves no trace in the catalog."""
    Granule.objects.filter(pk=granule.pk, state=Granule.State.REGISTERED).delete()
