"""PDRs: accept one (its granules start moving) or refuse it with a PDRD; a PAN answers
it once its request is finished. Answers are written beside the PDR in the staging area."""
import hashlib
import os
import uuid
from pathlib import Path

from django.db import IntegrityError, transaction
from django.utils import timezone

from backend.catalog import checksums
from backend.catalog.models import File
from backend.events import services as events

from .. import names, pdr
from ..models import IngestGranule, IngestRequest, Pdr
from .accept import IngestRejected, collections_by_key, submit
from .staging import file_patterns, staging_area
from .states import G


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
    for pattern, _, _ in file_patterns(collection):
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
    collections = collections_by_key({g.collection_key for g in doc.groups})
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


def answer_again(row):
    """A PDR dropped again whose answer the provider removed: write its PDRD, or its PAN as
    its granules stand now; one still in progress is answered when its request finishes."""
    if row.state == Pdr.State.REJECTED:
        _write_answer(_answer_path(row.provider, row, "PDRD"), row.pdrd)
        return row.pdrd
    if row.request_id:
        return answer_pdr_of(row.request_id)
    if row.pan:  # its request was deleted since: the PAN it was sent stands
        _write_answer(_answer_path(row.provider, row, "PAN"), row.pan)
    return row.pan or None


def _file_dispositions(state, why, spec):
    """(directory, name, disposition) of each file of a granule: a file at fault gets its own
    failure; a sound file of a failed granule gets the granule's, as ECS and Cumulus answer
    (a PAN has only their dispositions; which file was at fault is in the request's reason)."""
    at_fault = spec.get("failed_files") or {}
    out = []
    for f in spec["files"]:
        if state == G.ARCHIVED:
            disposition = pdr.SUCCESSFUL
        elif at_fault:
            disposition = at_fault.get(f["name"], why or pdr.INTERNAL_ERROR)
        else:
            disposition = why or pdr.INTERNAL_ERROR
        out.append((f.get("directory", ""), f["name"], disposition))
    return out


def answer_pdr_of(request_id):
    """Write the PAN of a finished PDR request (again, after a retry finished it anew)."""
    row = Pdr.objects.select_related("provider", "request").filter(request_id=request_id).first()
    if row is None or not row.request.finished:
        return None
    files = []
    for state, why, spec in (IngestGranule.objects.filter(request_id=request_id)
                             .order_by("position").values_list("state", "disposition", "spec")):
        files += _file_dispositions(state, why, spec)
    text = pdr.pan(files, timezone.now())
    failures = [d for _, _, d in files if d != pdr.SUCCESSFUL]
    disposition = failures[0] if failures else pdr.SUCCESSFUL
    with transaction.atomic():
        Pdr.objects.filter(pk=row.pk).update(
            state=Pdr.State.ANSWERED, pan=text, disposition=disposition,
            updated_at=timezone.now())
        events.emit("ingest.pdr.answered", f"ingest/pdrs/{row.pk}", {
            "pdr": row.pk, "name": row.name, "request": request_id,
            "disposition": disposition, "pan": text,
            "links": {"pdr": events.link(f"ingest/pdrs/{row.pk}/"),
                      "request": events.link(f"ingest/requests/{request_id}/")}},
            provider=row.provider)
    _write_answer(_answer_path(row.provider, row, "PAN"), text)
    return text
