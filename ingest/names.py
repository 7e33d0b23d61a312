"""Rules for the names and paths providers give us. Pure Python, no Django.

A name ends up in cache paths and tape member headers, a path is opened inside the provider's
staging area: both must be plain ASCII with no control characters, and a path may not climb out.
"""
import posixpath
import re

MAX_NAME = 255
MAX_PATH = 1024
# A file system names at most 255 bytes, and the archive's cache names a file's copy
# "<file id>-<name>" (an id of up to 19 digits) written first as "<that>.incoming"
# (backend.archive.services.paths.cache_path, services.cache): a longer file name is accepted
# nowhere, rather than accepted at submit and refused by the cache later.
MAX_FILE_NAME = 255 - len("9223372036854775807-") - len(".incoming")
# The largest file size taken: the database holds sizes and their sums in 64-bit integers, and
# the web app reads them as JavaScript numbers, exact up to 2**53.
MAX_FILE_SIZE = 2**53
# What one request's files may add up to (its bytes_total, a 64-bit integer).
MAX_REQUEST_BYTES = 2**63 - 1


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _text_problem(text, what):
    if not isinstance(text, str) or not text.strip():
        return f"{what} is empty"
    if not text.isascii():
        return f"{what} {text!r} has non-ASCII characters; use ASCII names"
    if _CONTROL.search(text):
        return f"{what} {text!r} has control characters"
    if "\\" in text:
        return f"{what} {text!r} has a backslash; separate folders with '/'"
    if text != text.strip():
        return f"{what} {text!r} starts or ends with blanks"
    return None


def name_problem(name, what="file name"):
    """Why `name` cannot name a file or granule, or None when it can."""
    problem = _text_problem(name, what)
    if problem:
        return problem
    if len(name) > MAX_NAME:
        return f"{what} is longer than {MAX_NAME} characters"
    if "/" in name:
        return f"{what} {name!r} has a '/'; give a name, not a path"
    if name in (".", ".."):
        return f"{what} {name!r} is not a name"
    return None


def file_name_problem(name, what="file name"):
    """name_problem() for the name of a file the archive will hold, whose cache copy's name
    must fit the file system."""
    problem = name_problem(name, what)
    if problem is None and len(name) > MAX_FILE_NAME:
        return (f"{what} is {len(name)} characters long; the archive takes names of at most "
                f"{MAX_FILE_NAME}")
    return problem


def upload_path_problem(path):
    """path_problem() for a file uploaded into a staging area, whose hidden names belong to
    Granary (the staging poller's lock, uploads in flight, answers being written)."""
    problem = path_problem(path, "upload path")
    if problem:
        return problem
    for part in path.split("/"):
        if part.startswith("."):
            return (f"upload path {path!r}: names starting with '.' are reserved for Granary's "
                    "own files in the staging area")
        if len(part) > MAX_FILE_NAME:
            return f"upload path {path!r}: {part[:40]}... is longer than {MAX_FILE_NAME} characters"
    return None


def path_problem(path, what="path"):
    """Why `path` cannot be opened inside a staging area, or None when it can."""
    problem = _text_problem(path, what)
    if problem:
        return problem
    if len(path) > MAX_PATH:
        return f"{what} is longer than {MAX_PATH} characters"
    if path.startswith("/"):
        return f"{what} {path!r} is absolute; give it relative to your staging area"
    if ".." in path.split("/"):
        return f"{what} {path!r} climbs out with '..'"
    return None


def normal_path(path):
    """The canonical spelling of a relative path that passed path_problem()."""
    return posixpath.normpath(path)
