"""Granule id patterns as people type them: `*` any run of characters, `?` one character,
case-insensitive, everything else literal (a `%` or `_` in an id is matched as itself).

Pure text (no Django): the pattern becomes a SQL LIKE pattern with `\\` as its escape, which
the `ilike` lookup (lookups.py) compares against the upper-cased column."""

WILDCARDS = "*?"
ESCAPE = "\\"


def has_wildcards(text):
    return any(c in WILDCARDS for c in text)


def like_pattern(text):
    """`text` as a LIKE pattern: LIKE's own metacharacters (and the escape) escaped, the
    wildcards translated; runs of `*` are one `%`."""
    out = []
    for char in text:
        if char == "*":
            if not out or out[-1] != "%":
                out.append("%")
        elif char == "?":
            out.append("_")
        elif char in "%_" + ESCAPE:
            out.append(ESCAPE + char)
        else:
            out.append(char)
    return "".join(out)

