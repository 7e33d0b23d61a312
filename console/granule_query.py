"""The operator's granule filter, across providers: one function that the console's granule
list and its bulk jobs share, so a job acts on exactly the granules the list showed.

Every parameter is text (a query string, or a bulk job's saved filter); a bad one is a 400
naming each field at fault, and a name the filter does not know is refused rather than
ignored: a misspelt filter must never widen what a bulk action takes."""
from collections.abc import Mapping

from django.core.exceptions import ValidationError
from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from backend.accounts.models import Provider
from backend.archive.models import ArchiveRequest
from backend.catalog import counts as kept_counts
from backend.catalog.filters import parse_instant
from backend.catalog.models import Collection, Granule
from backend.catalog.services import granule_id_q, temporal_q
from backend.errors import DomainError
from ingest.models import IngestGranule

# name -> what it selects (the API documents these; the bulk job form offers them)
FILTER_FIELDS = {
    "collection": "Collection key(s) SHORT.VERSION, comma-separated",
    "provider": "Provider name(s) that ingested the granule, comma-separated",
    "state": "Granule state(s), comma-separated: " + ", ".join(Granule.State.values)
             + "; failed also takes granules whose archive work failed for good (not "
               "registered or archiving then), and its count the granules that failed in "
               "ingest before the catalog had them (listed by ingest-failures/)",
    "granule_id": "Granule id, case-insensitive; * and ? are wildcards",
    "created_from": "Ingested (registered) at or after (ISO 8601; a date: its start)",
    "created_to": "Ingested (registered) at or before (ISO 8601; a date: its end)",
    "archived_from": "Archived at or after (ISO 8601)",
    "archived_to": "Archived at or before (ISO 8601)",
    "start": "Temporal range overlaps from (ISO 8601)",
    "end": "Temporal range overlaps until (ISO 8601)",
}
FAILED = Granule.State.FAILED
UNFINISHED = (Granule.State.REGISTERED, Granule.State.ARCHIVING)
# Parameters of a list that page or sort it without selecting granules: ignored here.
PAGING_PARAMS = ("cursor", "limit", "ordering")
MAX_TEXT = 1000
MAX_KEYS = 100
# (from, to, field): ranges on a moment of the granule's life
RANGES = (("created_from", "created_to", "created_at"),
          ("archived_from", "archived_to", "archived_at"))


def granules_matching(params: Mapping[str, str], *, ignore=()) -> QuerySet[Granule]:
    """The granules (every state, every collection, every provider) that `params` select;
    `ignore` names filters left out (the list's state counts leave out the state)."""
    errors = {}
    values = _texts(params, errors)
    q = Q()
    for name, build in _BUILDERS:
        raw = values.get(name)
        if name in ignore or not raw:
            continue
        try:
            q &= build(raw)
        except ValidationError as exc:
            errors[name] = exc.messages
    for low, high, field in RANGES:
        q &= _moment_range(values, low, high, field, errors)
    q &= _temporal(values, errors)
    if errors:
        raise _refusal(errors)
    return Granule.objects.filter(q).select_related("collection")


def state_counts(params: Mapping[str, str]) -> dict[str, int]:
    """How many granules the filter selects in each state, whatever state it asks for (so
    each state's chip says what choosing it would show); every state is present. A filter of
    collections only (or none) reads the kept counts (catalog.counts), not the granules.
    Failed counts what choosing it lists: the granules whose archive work failed for good
    (moved from registered or archiving) and those that failed in ingest, uncatalogued."""
    granules = granules_matching(params, ignore=("state",))
    selecting = [k for k, v in params.items()
                 if k not in PAGING_PARAMS and k != "state" and str(v).strip()]
    if set(selecting) <= {"collection"}:
        ids = _collection_ids(params["collection"]) if selecting else None
        counts = kept_counts.by_state(ids)
    else:
        rows = granules.order_by().values("state").annotate(n=Count("pk"))
        counts = dict.fromkeys(Granule.State.values, 0)
        counts.update({row["state"]: row["n"] for row in rows})
    stuck = granules.filter(archive_failed_q()).order_by().values("state").annotate(n=Count("pk"))
    for row in stuck:
        counts[row["state"]] -= row["n"]
        counts[FAILED] += row["n"]
    counts[FAILED] += ingest_failures_matching(params).count()
    return counts


def archive_failed_q():
    """Granules still registered or archiving whose archive work failed for good (a
    migration used up its attempts): failed in all but name, as the Failures page lists them."""
    failed = ArchiveRequest.objects.filter(kind=ArchiveRequest.Kind.MIGRATE,
                                           state=ArchiveRequest.State.FAILED)
    return Q(state__in=UNFINISHED, pk__in=failed.values("file__granule_id"))


def ingest_failures_matching(params: Mapping[str, str]) -> QuerySet[IngestGranule]:
    """The granules that failed in ingest before the catalog had them (the Failures page's
    ingest groups), as the filter selects them: collection, provider, id and ingest dates
    apply; an archived range selects none (they never were); the data time is not known."""
    errors = {}
    values = _texts(params, errors)
    rows = IngestGranule.objects.filter(state=IngestGranule.State.FAILED,
                                        catalog_granule__isnull=True)
    for name, build in (("collection", _ingest_collection_q), ("provider", _ingest_provider_q),
                        ("granule_id", _granule_id_q)):
        if values.get(name):
            try:
                rows = rows.filter(build(values[name]))
            except ValidationError as exc:
                errors[name] = exc.messages
    start, end = _instants(values, "created_from", "created_to", errors)
    rows = rows.filter(**{k: v for k, v in (("created_at__gte", start), ("created_at__lte", end))
                          if v is not None})
    if values.get("archived_from") or values.get("archived_to"):
        rows = rows.none()
    if values.get("state") and FAILED not in _keys(values["state"], "states"):
        rows = rows.none()
    if errors:
        raise _refusal(errors)
    return rows.select_related("request__provider").order_by("-updated_at", "-pk")


def _ingest_collection_q(raw):
    _collection_ids(raw)  # refuses an unknown key
    return Q(collection_key__in=_keys(raw, "collections"))


def _ingest_provider_q(raw):
    names = _keys(raw, "providers")
    known = set(Provider.objects.filter(name__in=names).values_list("name", flat=True))
    missing = [n for n in names if n not in known]
    if missing:
        raise ValidationError(f"unknown provider {', '.join(missing)}")
    return Q(request__provider__name__in=names)


def _texts(params, errors):
    unknown = sorted(str(k) for k in params if k not in FILTER_FIELDS and k not in PAGING_PARAMS)
    if unknown:
        errors["filters"] = [f"unknown filter {', '.join(unknown)}: use "
                             + ", ".join(FILTER_FIELDS)]
    values = {}
    for name in FILTER_FIELDS:
        raw = params.get(name)
        if raw is None:
            continue
        if not isinstance(raw, str):
            errors[name] = ["must be text"]
        elif len(raw) > MAX_TEXT or "\x00" in raw:
            errors[name] = [f"must be at most {MAX_TEXT} characters of text"]
        else:
            values[name] = raw.strip()
    return values


def _keys(raw, what):
    keys = [k.strip() for k in raw.split(",") if k.strip()]
    if len(keys) > MAX_KEYS:
        raise ValidationError(f"at most {MAX_KEYS} {what}")
    return keys


def _collection_ids(raw):
    found = []
    for key in _keys(raw, "collections"):
        try:
            found.append(Collection.objects.get_by_key(key).pk)
        except Collection.DoesNotExist as exc:
            raise ValidationError(str(exc)) from exc
    return found


def _collection_q(raw):
    return Q(collection__in=_collection_ids(raw))


def _provider_q(raw):
    names = _keys(raw, "providers")
    known = dict(Provider.objects.filter(name__in=names).values_list("name", "pk"))
    missing = [n for n in names if n not in known]
    if missing:
        raise ValidationError(f"unknown provider {', '.join(missing)}")
    ingested = IngestGranule.objects.filter(catalog_granule=OuterRef("pk"),
                                            request__provider__in=list(known.values()))
    return Q(Exists(ingested))


def _state_q(raw):
    states = _keys(raw, "states")
    wrong = [s for s in states if s not in Granule.State.values]
    if wrong:
        raise ValidationError(f"unknown state {', '.join(wrong)}; one of "
                              + ", ".join(Granule.State.values))
    q = Q(state__in=[s for s in states if s not in UNFINISHED])
    stuck = archive_failed_q()
    if FAILED in states:
        q |= stuck
    unfinished = [s for s in states if s in UNFINISHED]
    if unfinished:
        q |= Q(state__in=unfinished) & ~stuck
    return q


def _granule_id_q(raw):
    if len(raw) > 255:
        raise ValidationError("a granule id has at most 255 characters")
    return granule_id_q(raw)


_BUILDERS = (("collection", _collection_q), ("provider", _provider_q), ("state", _state_q),
             ("granule_id", _granule_id_q))


def _instants(values, low, high, errors):
    """(from, to) parsed, None where absent or wrong (its error recorded)."""
    out = []
    for name, end in ((low, False), (high, True)):
        raw = values.get(name)
        if not raw:
            out.append(None)
            continue
        try:
            out.append(parse_instant(raw, end=end))
        except ValidationError as exc:
            errors[name] = exc.messages
            out.append(None)
    if out[0] and out[1] and out[0] > out[1]:
        errors[high] = [f"{values[high]} is before {low} {values[low]}"]
    return out


def _moment_range(values, low, high, field, errors):
    start, end = _instants(values, low, high, errors)
    q = Q()
    if start is not None:
        q &= Q(**{f"{field}__gte": start})
    if end is not None:
        q &= Q(**{f"{field}__lte": end})
    return q


def _temporal(values, errors):
    start, end = _instants(values, "start", "end", errors)
    return temporal_q(start, end)


def _refusal(errors):
    """One 400 that names every field at fault (`errors`: [{field, detail}])."""
    detail = "; ".join(f"{name}: {' '.join(msgs)}" for name, msgs in errors.items())
    listed = [{"field": name, "detail": " ".join(msgs)} for name, msgs in errors.items()]
    if len(listed) == 1:
        return DomainError(listed[0]["detail"], listed[0]["field"])
    return DomainError(detail, errors=listed)
