"""Pure helpers (no Django): subscription attribute conditions, HTTP byte ranges.

attributes_match is the meaning of a subscription's conditions: match_table compiles them to
test a collection's subscriptions at once, and falls back to it for what it cannot compile.
"""
import re

OPS = ("eq", "ne", "lt", "lte", "gt", "gte", "in")


class ConditionError(ValueError):
    """An attribute condition that cannot be used, with a message for the user."""


def check_conditions(conditions):
    """Validate [{name, op, value}] and return it normalised (op defaults to eq)."""
    if conditions in (None, ""):
        return []
    if not isinstance(conditions, list):
        raise ConditionError("conditions must be a list of {name, op, value}")
    out = []
    for i, cond in enumerate(conditions):
        if not isinstance(cond, dict) or "name" not in cond or "value" not in cond:
            raise ConditionError(f"condition {i} needs a name and a value")
        name, op, value = str(cond["name"]), cond.get("op", "eq"), cond["value"]
        if not name.replace("_", "").isalnum():
            raise ConditionError(f"condition {i}: {name!r} is not an attribute name")
        if op not in OPS:
            raise ConditionError(f"condition {i}: op must be one of {', '.join(OPS)}")
        if op in ("lt", "lte", "gt", "gte") and not _is_number(value):
            raise ConditionError(f"condition {i}: {op} needs a number, not {value!r}")
        if op == "in" and not isinstance(value, list):
            raise ConditionError(f"condition {i}: in needs a list of values")
        out.append({"name": name, "op": op, "value": value})
    return out


def _is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


def attributes_match(conditions, attributes):
    """True when every condition holds; a missing attribute fails all but `ne`."""
    for cond in conditions:
        op, want = cond["op"], cond["value"]
        if cond["name"] not in attributes:
            if op == "ne":
                continue
            return False
        have = attributes[cond["name"]]
        if op == "eq" and have != want or op == "ne" and have == want:
            return False
        if op == "in" and have not in want:
            return False
        if op in ("lt", "lte", "gt", "gte"):
            if not _is_number(have):
                return False
            ok = {"lt": have < want, "lte": have <= want, "gt": have > want,
                  "gte": have >= want}[op]
            if not ok:
                return False
    return True


class RangeNotSatisfiable(Exception):
    pass


_DIGITS = re.compile(r"[0-9]+")
_HUGE = 10**19  # past any file; longer digit strings are read as this (int() refuses 4,300+)


def _number(digits):
    return int(digits) if len(digits) < 19 else _HUGE


def parse_range(header, size):
    """(start, end) inclusive for a single `bytes=` range, None to send the whole file.

    RFC 9110 section 14: a header that is malformed, names another unit, or asks for several
    ranges is ignored (the whole file is sent with 200; a server may do that, and answering
    multipart/byteranges would only serve clients that resume with one range anyway). A single
    range that selects no byte of the file (starting at or past its end, a zero suffix, any
    range of an empty file) raises RangeNotSatisfiable: the answer is 416.
    """
    if not header:
        return None
    unit, sep, spec = header.partition("=")
    if not sep or unit.strip().lower() != "bytes" or "," in spec:
        return None
    first, sep, last = (part.strip() for part in spec.strip().partition("-"))
    if not sep or not (first or last) or any(p and not _DIGITS.fullmatch(p)
                                             for p in (first, last)):
        return None
    if first == "":
        suffix = _number(last)
        if suffix == 0 or size == 0:
            raise RangeNotSatisfiable(header)
        return max(0, size - suffix), size - 1
    start = _number(first)
    end = _number(last) if last else size - 1
    if last and end < start:
        return None
    if start >= size:
        raise RangeNotSatisfiable(header)
    return start, min(end, size - 1)


def range_validator_matches(if_range, etag):
    """Whether a Range may be served under this If-Range (RFC 9110 section 13.1.5): always
    without one; with one, only when it is the file's strong entity tag, exactly. A weak tag
    or a date (no Last-Modified is sent, so none can match) means the client's partial copy
    may be of other bytes: the Range is ignored and the whole file sent, never spliced."""
    if if_range is None:
        return True
    value = if_range.strip()
    return not value.startswith("W/") and value == etag
