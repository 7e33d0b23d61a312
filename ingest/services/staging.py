"""Staging areas: where a provider's files lie, and how file names group into granules."""
import functools
import logging
import os
import stat
from pathlib import Path

from django.conf import settings

from backend.catalog.models import File

log = logging.getLogger(__name__)


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


def file_patterns(collection):
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
    patterns = file_patterns(collection)
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
