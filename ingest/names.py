"""Rules for the names and paths providers give us. Pure Python, no Django.

A name ends up in cache paths and tape member headers, a path is opened inside the provider's
staging area: both must be plain ASCII with no control characters, and a path may not climb out.
"""
import posixpath

MAX_NAME = 255
MAX_PATH = 1024


def _text_problem(text, what):
    if not isinstance(text, str) or not text.strip():
        return f"{what} is empty"
    if not text.isascii():
        return f"{what} {text!r} has non-ASCII characters; use ASCII names"
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
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
