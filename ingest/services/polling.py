"""Polling staging areas: PDRs and complete granules in drop directories become requests."""
import fcntl
import logging
import os
import uuid
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from backend.accounts.models import Provider

from ..models import IngestRequest
from .accept import IngestRejected, submit
from .pdr_flow import answer_again, submit_pdr
from .staging import group_files

log = logging.getLogger(__name__)


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
                row, created = submit_pdr(provider, entry.name, text,
                                          path=path.relative_to(area).as_posix())
            except IngestRejected as exc:
                log.warning("PDR %s of %s ignored: %s", path, provider.name, exc.detail)
                continue
            if not created:  # dropped again: its answer is gone or older than the drop
                answer_again(row)
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
