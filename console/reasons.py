"""Failure reasons reduced to their pattern, so that one cause failing fifty granules is one line
for an operator, not fifty: ids, file names, paths, numbers, times and checksums become
placeholders, and a reason naming several faulty files of the same kind reads as one.

Pure: no Django, so it is tested directly against the sentences the services write.
"""
import hashlib
import re

# Words with digits that name a kind of thing, not an instance of it: kept as they are.
KEEP = frozenset({"MD5", "SHA1", "SHA256", "SHA512", "SHA-256", "SHA-1", "CRC32", "HDF5",
                  "HDF4", "NetCDF-4", "UTF-8", "IPv4", "IPv6"})

_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{2}:\d{2}:\d{2}(?:\.\d+)?\b")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                   r"[0-9a-fA-F]{12}\b")
# a run of characters that is one word of a sentence: stops at spaces, brackets, quotes,
# commas, semicolons and the placeholders already put in
_TOKEN = re.compile(r"[^\s,;()'\"\[\]{}<>=]+")
_HEX = re.compile(r"[0-9a-fA-F]{8,}")
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?%?", re.IGNORECASE)
_LIST = re.compile(r"(<\w+>)(?:(?:,\s*|\s+and\s+)\1)+")
_SPACES = re.compile(r"\s+")
MAX_PATTERN = 300


def _placeholder(word):
    """What one word of a reason becomes: itself, or the kind of value it is."""
    if word in KEEP or not any(c.isdigit() or c in "/.\\" for c in word):
        return word
    if "/" in word or "\\" in word:
        return "<path>"
    if _NUMBER.fullmatch(word):
        return "<n>"
    if _HEX.fullmatch(word) and any(c.isdigit() for c in word):
        return "<hex>"
    # a file name, a granule, volume or drive id, a collection key: all name one thing, and
    # one cause names things of several shapes (G1 and MOD021KM.A2024001.0005.061.hdf alike)
    return "<name>"


def _token(match):
    word = match.group(0)
    core = word.rstrip(".:!?")
    if not core:
        return word
    return _placeholder(core) + word[len(core):]


def _segment(text):
    text = _UUID.sub("<id>", text)
    text = _TIME.sub("<time>", text)
    text = _TOKEN.sub(_token, text)
    text = _LIST.sub(r"\1", text)
    return _SPACES.sub(" ", text).strip()


def normalise(reason):
    """The pattern of a failure reason: the same for every instance of one cause.

    Several faults joined by '; ' (a granule with two bad files) read as their distinct
    patterns, in the order first met, so one bad file or three of one kind are one group.
    """
    seen = []
    for part in (reason or "").split(";"):
        pattern = _segment(part)
        if pattern and pattern not in seen:
            seen.append(pattern)
    if not seen:
        return "(no reason recorded)"
    pattern = "; ".join(seen)
    return pattern if len(pattern) <= MAX_PATTERN else pattern[:MAX_PATTERN - 1] + "…"


def group_key(where, kind, pattern):
    """A short stable name for a group: the same wherever and whenever it is computed."""
    return hashlib.sha256(f"{where}\0{kind}\0{pattern}".encode()).hexdigest()[:20]


KEY_PATTERN = re.compile(r"[0-9a-f]{20}")
