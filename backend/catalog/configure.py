"""Operators' changes to a collection's own fields (its archive policy is the archive's:
archive.services.configure puts the two together in one transaction with the audit record).

Checked here, once, whatever the caller: file patterns are regular expressions that compile and
name the granule, the declared box is a box, the key stays unique, and a collection that holds
granules keeps its key (the tape volumes' headers carry it: a rename would make every volume
disagree with the catalog).
"""
import re
from datetime import datetime

from django.contrib.auth import get_user_model

from backend.errors import Conflict, DomainError

from . import cadence
from .models import Collection, File

FIELDS = (
    "short_name", "version", "title", "description", "processing_level", "platform",
    "instrument", "doi", "citation", "variables", "extent_west", "extent_south", "extent_east",
    "extent_north", "extent_start", "extent_end", "access", "file_patterns", "duplicate_policy",
    "cadence_seconds", "latency_target_seconds",
)
MAX_PATTERNS = 20
MAX_PATTERN_LENGTH = 500
MAX_APPROVED_USERS = 1000
BOX = ("extent_west", "extent_south", "extent_east", "extent_north")


def check_file_patterns(entries):
    """Each entry a regex string, or {regex, role?, required?}; the regex compiles and has a
    group named `granule` (the id the files share; ingest.services.staging groups by it)."""
    if len(entries) > MAX_PATTERNS:
        raise DomainError(f"at most {MAX_PATTERNS} file patterns", "file_patterns")
    for number, entry in enumerate(entries, start=1):
        spec = entry if isinstance(entry, dict) else {"regex": entry}
        where = f"pattern {number}"
        if not isinstance(spec.get("regex"), str) or set(spec) - {"regex", "role", "required"}:
            raise DomainError(f"{where}: a regular expression, or an object with regex and "
                              "optionally role and required", "file_patterns")
        if len(spec["regex"]) > MAX_PATTERN_LENGTH:
            raise DomainError(f"{where} is longer than {MAX_PATTERN_LENGTH} characters",
                              "file_patterns")
        try:
            compiled = re.compile(spec["regex"])
        except re.error as exc:
            raise DomainError(f"{where} is not a regular expression: {exc}",
                              "file_patterns") from None
        if "granule" not in compiled.groupindex:
            raise DomainError(f"{where} needs a group (?P<granule>...) naming the granule id",
                              "file_patterns")
        if spec.get("role") not in (None, *File.Role.values):
            raise DomainError(f"{where}: role must be one of {', '.join(File.Role.values)}",
                              "file_patterns")
        if not isinstance(spec.get("required", True), bool):
            raise DomainError(f"{where}: required must be true or false", "file_patterns")


def _check_extent(values):
    box = [values.get(k) for k in BOX]
    if any(v is not None for v in box) and None in box:
        raise DomainError("give all four sides of the box, or none", "extent_west")
    if None not in box and box[1] > box[3]:
        raise DomainError("south is north of north", "extent_south")
    start, end = values.get("extent_start"), values.get("extent_end")
    if start is not None and end is not None and end < start:
        raise DomainError("the extent ends before it starts", "extent_end")


def _check_numbers(values):
    every = values.get("cadence_seconds")
    if every is not None and not cadence.MIN_CADENCE_S <= every <= cadence.MAX_CADENCE_S:
        raise DomainError(f"between {cadence.MIN_CADENCE_S} and {cadence.MAX_CADENCE_S} "
                          "seconds", "cadence_seconds")
    latency = values.get("latency_target_seconds")
    if latency is not None and not 0 <= latency <= cadence.MAX_LATENCY_S:
        raise DomainError(f"between 0 and {cadence.MAX_LATENCY_S} seconds",
                          "latency_target_seconds")


def _check_key(collection, values):
    key = (values["short_name"], values["version"])
    taken = Collection.objects.filter(short_name=key[0], version=key[1])
    if collection.pk is not None:
        if key == (collection.short_name, collection.version):
            return
        if collection.granules.exists():
            raise Conflict(f"{collection.key} holds granules, and its volumes' headers name it: "
                           "it keeps its short name and version", "short_name")
        taken = taken.exclude(pk=collection.pk)
    if taken.exists():
        raise DomainError(f"there is already a collection {key[0]}.{key[1]}", "short_name")


def approved(usernames):
    """The users named, every one of them known."""
    names = list(dict.fromkeys(usernames))
    if len(names) > MAX_APPROVED_USERS:
        raise DomainError(f"at most {MAX_APPROVED_USERS} approved users", "approved_users")
    found = list(get_user_model().objects.filter(username__in=names))
    unknown = sorted(set(names) - {u.username for u in found})
    if unknown:
        raise DomainError(f"no such user: {', '.join(unknown)}", "approved_users")
    return found


def snapshot(collection):
    """The configurable fields as JSON values, for the audit record's before and after."""
    out = {}
    for name in FIELDS:
        value = getattr(collection, name)
        out[name] = value.isoformat() if isinstance(value, datetime) else value
    out["approved_users"] = (sorted(u.username for u in collection.approved_users.all())
                             if collection.pk else [])
    return out


def save_collection(collection, values, approved_usernames=None):
    """Apply `values` (already typed by the caller's serializer) to `collection` (a new one
    when it has no pk), after checking them as a whole; run inside the caller's transaction."""
    merged = {name: values.get(name, getattr(collection, name)) for name in FIELDS}
    check_file_patterns(merged["file_patterns"] or [])
    _check_extent(merged)
    _check_numbers(merged)
    _check_key(collection, merged)
    for name, value in merged.items():
        setattr(collection, name, value)
    collection.full_clean(validate_unique=False)
    collection.save()
    if approved_usernames is not None:
        collection.approved_users.set(approved(approved_usernames))
    return collection
