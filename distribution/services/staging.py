"""Bulk stage requests (the WLCG Tape REST API): accepted whole or refused whole, at once.

A client names files by path, `/<collection short name>.<version>/<granule id>/<file name>`
(the path of the file's URL, as gfal2 sends it; a granule id may itself hold slashes, the
first segment is the collection and the last the file). The path resolves to that granule's
archived version. Every path must resolve, appear once and fit the limits, or nothing is
created: a 400 names what is wrong. The files are then asked of the archive by a worker
(`staging_progress.refresh_stage`), so a 100,000-file request is answered with its id at once.
"""
import re
from collections import Counter
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django.utils.dateparse import parse_duration

from backend.accounts.ownership import get_owned, owned
from backend.catalog.models import File, Granule
from backend.catalog.services import visible_collections
from backend.errors import DomainError, NotFound, TooLarge, listed
from backend.nudges import send_on_commit

from ..models import OrderItem, StageFile, StageRequest
from .notify import recall_done

UUID = re.compile(r"^[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}$")


def split_path(path):
    """(collection key, granule id, file name) of a path, or None when it has too few parts."""
    parts = [p for p in path.split("/") if p]
    if len(parts) < 3:
        return None
    return parts[0], "/".join(parts[1:-1]), parts[-1]


def normal_path(path):
    """The path as the answers name it: one leading slash, no doubled ones (gfal2 collapses
    slashes before it compares)."""
    return "/" + "/".join(p for p in path.split("/") if p)


def resolve_paths(user, paths):
    """{path: File id} for the paths that name an archived granule's file in a collection
    `user` may order from (a restricted one answers as if the file were not there)."""
    wanted = {}
    for path in paths:
        parts = split_path(path)
        if parts:
            wanted.setdefault(parts[0], {})[(parts[1], parts[2])] = path
    found = {}
    for key, by_name in wanted.items():
        short_name, _, version = key.partition(".")
        collection = visible_collections(user).filter(short_name=short_name,
                                                      version=version).first()
        if collection is None:
            continue
        gids = sorted({gid for gid, _ in by_name})
        for start in range(0, len(gids), 5000):
            rows = (File.objects.filter(granule__collection=collection,
                                        granule__granule_id__in=gids[start:start + 5000],
                                        granule__state=Granule.State.ARCHIVED)
                    .order_by("granule__version")
                    .values_list("pk", "granule__granule_id", "name"))
            for pk, gid, name in rows:
                if (gid, name) in by_name:
                    found[by_name[(gid, name)]] = pk
    return found


def disk_lifetime_s(value, where):
    """Seconds from a diskLifetime: an ISO 8601 duration (P1D, PT3600S) or whole seconds."""
    if value is None:
        return settings.GRANARY_STAGE_DISK_LIFETIME_S
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise DomainError(f"{where}: diskLifetime must be an ISO 8601 duration such as P1D.")
    seconds = value if isinstance(value, int) else None
    if isinstance(value, str):
        parsed = parse_duration(value) if value.startswith("P") else None
        seconds = int(parsed.total_seconds()) if parsed is not None else None
    if seconds is None or seconds < 0:
        raise DomainError(f"{where}: diskLifetime {str(value)[:40]!r} is not an ISO 8601 "
                          "duration such as P1D.")
    if seconds > settings.GRANARY_STAGE_MAX_DISK_LIFETIME_S:
        raise DomainError(f"{where}: diskLifetime is longer than the longest this site keeps "
                          f"a file ({settings.GRANARY_STAGE_MAX_DISK_LIFETIME_S} s).")
    return seconds


def _entries(document):
    """[(path, lifetime s)] of a stage body, checked whole."""
    if not isinstance(document, dict) or not isinstance(document.get("files"), list):
        raise DomainError('The body must be a JSON object with a "files" list.')
    files = document["files"]
    limit = settings.GRANARY_STAGE_MAX_FILES
    if not files:
        raise DomainError('"files" is empty: name at least one file.')
    if len(files) > limit:
        raise TooLarge(f"{len(files):,} files in one request; the limit is {limit:,} "
                       "(GRANARY_STAGE_MAX_FILES). Split the request.")
    entries = []
    for n, entry in enumerate(files):
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path, str) or not path.strip("/") or len(path) > 1024 or "\0" in path:
            raise DomainError(f"files[{n}]: each file must be an object with a \"path\" "
                              "string of at most 1024 characters.")
        entries.append((normal_path(path), disk_lifetime_s(entry.get("diskLifetime"),
                                                           f"files[{n}]")))
    return entries


def create_stage(user, document):
    """A stage request for every file `document` names (the spec's POST /stage body)."""
    entries = _entries(document)
    counts = Counter(path for path, _ in entries)
    twice = sorted(path for path, n in counts.items() if n > 1)
    if twice:
        raise DomainError(f"These paths appear more than once: {listed(twice)}.", "files")
    found = resolve_paths(user, [p for p, _ in entries])
    unknown = [p for p, _ in entries if p not in found]
    if unknown:
        raise DomainError(f"No archived file at {listed(unknown)}. Paths read "
                          "/<collection short name>.<version>/<granule id>/<file name>.",
                          "files")
    with transaction.atomic():
        stage = StageRequest.objects.create(user=user, file_count=len(entries),
                                            priority=default_priority())
        _insert_files(stage, entries, found)
        queue_stage_refresh(stage.pk)
    return stage


def _insert_files(stage, entries, found):
    """The request's files written without a model object and a field-by-field preparation
    each (a bulk create of 10,000 took most of the time to accept them): the values the rows
    share are prepared once, the rest (a path, a file id, seconds) go as they are."""
    fields = [f for f in StageFile._meta.concrete_fields if not f.primary_key]
    varying = {"path", "file_id", "disk_lifetime_s"}
    shared = {f.attname: f.get_db_prep_save(f.get_default(), connection) for f in fields
              if f.attname not in varying}
    shared["request_id"] = StageFile._meta.get_field("request").get_db_prep_save(
        stage.pk, connection)
    quote = connection.ops.quote_name
    table = quote(StageFile._meta.db_table)
    columns = ", ".join(quote(f.column) for f in fields)
    names = [f.attname for f in fields]
    template = [shared.get(name) for name in names]
    at_path, at_file, at_life = (names.index(n) for n in ("path", "file_id", "disk_lifetime_s"))
    rows = []
    for path, life in entries:
        row = template.copy()
        row[at_path], row[at_file], row[at_life] = path, found[path], life
        rows.append(row)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":     # COPY: the rows stream in one statement
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES "
                               f"({', '.join(['%s'] * len(fields))})", rows)


def default_priority():
    """The priority class GRANARY_STAGE_PRIORITY gives stage requests beside orders."""
    names = {p.name.lower(): p for p in StageRequest.Priority}
    name = str(settings.GRANARY_STAGE_PRIORITY).lower()
    if name not in names:
        raise DomainError(f"GRANARY_STAGE_PRIORITY is {name!r}; it must be one of "
                          f"{', '.join(names)}.", status=503)
    return names[name]


def queue_stage_refresh(stage_id):
    send_on_commit("distribution.refresh_stage", str(stage_id))


def get_stage(user, stage_id):
    """The caller's stage request `stage_id` (an operator reaches all), or a 404."""
    if not isinstance(stage_id, str) or not UUID.match(stage_id):
        raise NotFound(f"There is no stage request {str(stage_id)[:80]} of yours.")
    return get_owned(StageRequest.objects, user, stage_id, "stage request")


def stage_requests(user):
    return owned(StageRequest.objects, user)


def paths_of(document):
    """The "paths" list of a cancel, release or archiveinfo body, checked whole."""
    if not isinstance(document, dict) or not isinstance(document.get("paths"), list):
        raise DomainError('The body must be a JSON object with a "paths" list.')
    paths = document["paths"]
    if not paths:
        raise DomainError('"paths" is empty: name at least one file.')
    if len(paths) > settings.GRANARY_STAGE_MAX_FILES:
        raise TooLarge(f"{len(paths):,} paths in one request; the limit is "
                       f"{settings.GRANARY_STAGE_MAX_FILES:,}.")
    if not all(isinstance(p, str) and 0 < len(p) <= 1024 and "\0" not in p for p in paths):
        raise DomainError('"paths" must hold strings of at most 1024 characters.')
    return list(dict.fromkeys(normal_path(p) for p in paths))


def _files_named(stage, document):
    paths = paths_of(document)
    files = list(stage.files.filter(path__in=paths)) if len(paths) <= 5000 else [
        f for f in stage.files.all() if f.path in set(paths)]
    missing = set(paths) - {f.path for f in files}
    if missing:
        raise DomainError(f"Stage request {stage.pk} holds no file at "
                          f"{listed(sorted(missing))}.", "paths")
    return files


def cancel_files(user, stage_id, document):
    """Cancel the named files that are not done yet (the spec's POST /stage/{id}/cancel); a
    path the request does not hold refuses the whole call. A file's queued recall is cancelled
    too, unless another order or stage request still waits for the file."""
    from .staging_progress import drop_recalls

    with transaction.atomic():
        stage = get_stage(user, stage_id)
        files = _files_named(stage, document)
        live = [f for f in files if f.state in StageFile.LIVE]
        StageFile.objects.filter(pk__in=[f.pk for f in live], state__in=StageFile.LIVE).update(
            state=StageFile.State.CANCELLED, finished_at=timezone.now())
        drop_recalls(live, f"stage request {stage.pk}: cancelled by the client")
        settle_stage(stage.pk)
    return stage


def release_files(user, stage_id, document):
    """Let the cache purge the named files again (the spec's POST /release/{id})."""
    with transaction.atomic():
        stage = get_stage(user, stage_id)
        files = _files_named(stage, document)
        StageFile.objects.filter(pk__in=[f.pk for f in files]).update(released=True)
        from .staging_progress import end_keeps

        end_keeps(files)
    return stage


def delete_stage(user, stage_id):
    """Cancel what is left (and its recalls nobody else needs), release what was staged,
    forget the request (DELETE /stage/{id})."""
    from .staging_progress import drop_recalls, end_keeps

    with transaction.atomic():
        stage = get_stage(user, stage_id)
        files = list(stage.files.all())
        stage.delete()
        end_keeps(files)
        drop_recalls([f for f in files if f.state in StageFile.LIVE],
                     f"stage request {stage_id}: deleted by the client")


def set_priority(user, stage_id, priority):
    """An operator raises or lowers a stage request's priority: its queued recalls move."""
    from backend.archive.models import ArchiveRequest

    if priority not in StageRequest.Priority.values:
        raise DomainError(f"priority must be one of {StageRequest.Priority.values}.", "priority")
    with transaction.atomic():
        stage = get_stage(user, stage_id)
        stage.priority = priority
        stage.save(update_fields=["priority"])
        recalls = stage.files.filter(state__in=StageFile.LIVE,
                                     recall_request_id__isnull=False)
        queued = ArchiveRequest.objects.filter(pk__in=recalls.values("recall_request_id"),
                                               state=ArchiveRequest.State.QUEUED)
        if priority > StageRequest.Priority.NORMAL:
            # a recall an order also waits for keeps the order's priority
            queued = queued.exclude(file_id__in=OrderItem.objects.filter(
                state=OrderItem.State.WAITING).values("file_id"))
        queued.update(priority=priority)
    return stage


def settle_stage(stage_id):
    """Mark the request completed once no file is left to stage (idempotent)."""
    now = timezone.now()
    live = StageFile.objects.filter(request_id=stage_id, state__in=StageFile.LIVE)
    if live.exists():
        return
    with transaction.atomic():  # the event is written with the change (an outbox)
        if StageRequest.objects.filter(pk=stage_id, completed_at__isnull=True).update(
                completed_at=now):
            recall_done(stage_id)


def keep_for(lifetime_s, now):
    return now + timedelta(seconds=lifetime_s)
