"""A local directory (the command line): its granules staged and stored as one request."""
import os
import shutil
import uuid
from pathlib import Path

from ..models import IngestRequest
from .accept import IngestRejected, submit
from .staging import group_files, staging_area


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
        raise IngestRejected(f"Provider {provider.name} may not deliver {collection.key}.",
                             status=403)
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
