"""Accepting a request: check it as a whole (shape, names, rights), then store it with one
row per granule; nothing is written when any granule is malformed."""
import hashlib
import json

from django.conf import settings
from django.db import IntegrityError, transaction

from backend.catalog import bulk, checksums, shapes
from backend.catalog.geo import BBoxError, make_bbox
from backend.catalog.models import Collection, File
from backend.errors import DomainError, listed
from backend.nudges import send_on_commit

from .. import names, pdr
from ..models import IngestGranule, IngestRequest

ROLES = set(File.Role.values)
MAX_ERRORS = 20


class IngestRejected(DomainError):
    """A request refused as a whole, with every problem found (up to MAX_ERRORS) in `errors`.
    Its own type because the PDR, drop and command-line paths catch it to answer or undo."""


def canonical_hash(value):
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def collections_by_key(keys):
    """{SHORT.VERSION: collection} of the catalog's collections among `keys`."""
    shorts = {str(k).partition(".")[0] for k in keys}
    return {c.key: c for c in Collection.objects.filter(short_name__in=shorts)}


def _time_or_error(value, what, errors):
    try:
        return pdr.parse_time(value)
    except (TypeError, ValueError):
        errors.append(f"{what}: {value!r} is not an ISO 8601 date and time")
        return None


def _check_file(f, where, errors, require_checksum):
    if not isinstance(f, dict):
        errors.append(f"{where}: must be an object with name, path, size, checksum_type, checksum")
        return None
    path = f.get("path", f.get("name"))
    name = f.get("name") or (path.rsplit("/", 1)[-1] if isinstance(path, str) else None)
    problem = names.file_name_problem(name) or names.path_problem(path)
    if problem:
        errors.append(f"{where}: {problem}")
        return None
    size = f.get("size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        errors.append(f"{where}: size must be a whole number of bytes, not {size!r}")
        return None
    if size > names.MAX_FILE_SIZE:
        errors.append(f"{where}: size {size} is more than the {names.MAX_FILE_SIZE} bytes "
                      "a file may have")
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


def _footprint(value, where, errors):
    """A request's footprint outline, checked and split at 180° (None: none given or bad)."""
    if value is None:
        return None
    try:
        return shapes.parse_geojson(value, "footprint").geojson()
    except shapes.ShapeError as exc:
        errors.append(f"{where}.{exc}")
        return None


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
            late = start and end and end < start
            start, end = (t.isoformat() if t else None for t in (start, end))
            if late:
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
    footprint = _footprint(g.get("footprint"), where, errors)
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
    spec = {"collection": key, "granule_id": granule_id, "temporal": temporal, "bbox": bbox,
            "attributes": attributes, "files": checked}
    if footprint is not None:
        spec["footprint"] = footprint
    return spec


def check_granules(provider, granules, *, require_checksum=True):
    """Normalised specs of a request's granules, or IngestRejected (403 for a collection the
    provider may not deliver)."""
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
    collections = collections_by_key({s["collection"] for s in specs})
    unknown = sorted({s["collection"] for s in specs} - set(collections))
    for key in unknown:
        errors.append(f"unknown collection {key}")
    total = sum(f["size"] for s in specs for f in s["files"])
    if total > names.MAX_REQUEST_BYTES:
        errors.append(f"the request's files add up to {total} bytes, more than the "
                      f"{names.MAX_REQUEST_BYTES} one request may hold; split it")
    if errors:
        raise IngestRejected(_summary(errors), errors=errors[:MAX_ERRORS])
    allowed = set(provider.collections.values_list("pk", flat=True))
    refused = sorted({k for k, c in collections.items() if c.pk not in allowed
                      and k in {s["collection"] for s in specs}})
    if refused:
        raise IngestRejected(f"Provider {provider.name} may not deliver "
                             f"{', '.join(refused)}; ask an operator for the right.", status=403)
    return specs


def _summary(errors):
    return f"The request was not accepted: {listed(errors, '; ', MAX_ERRORS)}."


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
                bulk.new(IngestGranule, request_id=request.pk, position=i,
                         collection_key=s["collection"], granule_id=s["granule_id"], spec=s,
                         bytes_total=sum(f["size"] for f in s["files"]))
                for i, s in enumerate(specs)
            ])
            if enqueue:
                enqueue_request(request.pk)
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
                raise IngestRejected(f"Idempotency-Key {idempotency_key!r} was already used for "
                                     f"ingest request {found.pk} with a different body.",
                                     status=409)
            return found
    if body_hash:
        return IngestRequest.objects.filter(provider=provider, body_hash=body_hash).first()
    return None


def enqueue_request(request_id):
    """Queue the request's chunks once the transaction that stored it commits."""
    send_on_commit("ingest.process_request", request_id)
