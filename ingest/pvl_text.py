"""PVL/ODL text read into a tree whose values keep the provider's own text. Pure Python, no Django.

Real PDRs (S4PA, SIPS) are not strict PVL: values with blanks go unquoted (`DESCRIPTOR = NOT
USED;`), and a typed parser turns `DATA_VERSION = 061` into 61. So the text is cut into
statements first, every value is set aside as its original text, and `pvl` parses the structure
(names, nesting, matching END_OBJECTs) of a copy whose values are placeholders. Versions, ids and
sizes therefore stay exactly as the provider wrote them.

The same reader serves ECS `.met` files (ODL: newline-terminated statements, GROUP/OBJECT).
"""
import re
import warnings
from dataclasses import dataclass, field

with warnings.catch_warnings():  # pvl 1.3 warns about its own deprecated Units on import
    warnings.simplefilter("ignore", PendingDeprecationWarning)
    import pvl

_BLOCK_OPEN = {"OBJECT", "GROUP", "BEGIN_OBJECT", "BEGIN_GROUP"}
_BLOCK_CLOSE = {"END_OBJECT", "END_GROUP"}


class PvlError(ValueError):
    """Text that is not PVL/ODL, with the line it went wrong on."""


@dataclass
class Node:
    """A PVL object or group: its statements in order, values as the original text."""

    name: str
    items: list = field(default_factory=list)

    def keys(self):
        return [k for k, _ in self.items]

    def values(self, key):
        key = key.upper()
        return [v for k, v in self.items if k.upper() == key and isinstance(v, str)]

    def value(self, key):
        found = self.values(key)
        return found[0] if found else None

    def children(self, name):
        name = name.upper()
        return [v for k, v in self.items if k.upper() == name and isinstance(v, Node)]

    def walk(self):
        """Every node below this one, depth first."""
        for _, v in self.items:
            if isinstance(v, Node):
                yield v
                yield from v.walk()


_ORDINARY = re.compile(r"[^\"'()/;\n]+")
_QUOTED = re.compile(r'"[^"]*"|\'[^\']*\'', re.S)


def _statements(text):
    """(line, statement) pairs: `;`-terminated when the text uses `;`, else one per line."""
    statements, terminators = _cut(text, ";")
    if terminators:
        return statements, True
    return _cut(text, "\n")[0], False


def _cut(text, terminator):
    """Cut at `terminator` outside comments, parentheses and quoted values (a quote opens a
    value only right after '=', '(' or ',': an apostrophe inside a bare value is a letter):
    ([(line, statement)], how many terminators cut)."""
    if not _SPECIAL.search(text):
        return _cut_plain(text, terminator)
    return _cut_scanning(text, terminator)


def _cut_scanning(text, terminator):
    """_cut of any text, a stretch or a character at a time."""
    out, buf, line, start, quote, depth, prev, cuts, i = [], [], 1, None, None, 0, "", 0, 0

    def flush():
        statement = "".join(buf).strip()
        if statement:
            out.append((start, statement))

    while i < len(text):
        if quote is None and (run := _ORDINARY.match(text, i)):
            # a stretch with nothing to decide in it: taken whole, not a character at a time
            bare = run.group().rstrip()
            if bare:
                start = line if start is None else start
                prev = bare[-1]
            buf.append(run.group())
            i = run.end()
            continue
        if quote is not None:
            end = text.find(quote, i)
            if end < 0:
                break
            buf.append(text[i:end + 1])
            line += text.count("\n", i, end)
            i, quote, prev = end + 1, None, quote
            continue
        ch = text[i]
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise PvlError(f"line {line}: a comment is never closed")
            line += text.count("\n", i, end)
            i = end + 2
            continue
        i += 1
        if ch in "\"'" and prev in "=(,":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and ch == terminator:
            flush()
            buf, start, prev, cuts = [], None, "", cuts + 1
            line += ch == "\n"
            continue
        if start is None and not ch.isspace():
            start = line
        line += ch == "\n"
        buf.append(ch)
        if not ch.isspace():
            prev = ch
    if quote:
        raise PvlError(f"line {start}: a quoted value is never closed")
    flush()
    return out, cuts


_SPECIAL = re.compile(r"[\"'()]|/\*")


def _cut_plain(text, terminator):
    """_cut of a text without quotes, comments or parentheses, as most PDRs are: every
    terminator cuts, so a split does it (a PDR of 1,000 granules was cut a character at a time
    around its blanks and newlines, a third of its reading)."""
    pieces = text.split(terminator)
    out, line = [], 1
    for piece in pieces:
        statement = piece.strip()
        if statement:
            out.append((line + piece.count("\n", 0, len(piece) - len(piece.lstrip())),
                        statement))
        line += piece.count("\n") + (terminator == "\n")
    return out, len(pieces) - 1


def _unquote(value):
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def parse_pvl(text):
    """Parse PVL/ODL text into a Node tree whose values are the original text."""
    if not isinstance(text, str):
        raise PvlError("the text is not a string")
    statements, by_semicolon = _statements(text)
    lines, values, origin, open_blocks, events = [], [], [], [], []
    for line, statement in statements:
        key, eq, value = statement.partition("=")
        key, value = key.strip(), value.strip()
        word = key.upper()
        if not eq:
            if word == "END":
                break
            if word in _BLOCK_CLOSE:
                _close(open_blocks, line, word)
                lines.append(word)
                events.append((word, ""))
                origin.append(line)
                continue
            raise PvlError(f"line {line}: expected KEYWORD = VALUE, found {statement[:60]!r}")
        if word in _BLOCK_OPEN:
            open_blocks.append((line, _unquote(value)))
            lines.append(f"OBJECT = {_unquote(value)}" if "OBJECT" in word
                         else f"GROUP = {_unquote(value)}")
            events.append(("OBJECT" if "OBJECT" in word else "GROUP", _unquote(value)))
        elif word in _BLOCK_CLOSE:
            _close(open_blocks, line, word)
            lines.append(f"{word} = {_unquote(value)}" if value else word)
            events.append((word, _unquote(value)))
        else:
            if by_semicolon and "\n" in value and "=" in _QUOTED.sub("", value):
                raise PvlError(f"line {line}: statement {key} is missing its ';'")
            lines.append(f'{key} = "{len(values)}"')
            values.append(_unquote(value))
            events.append((None, key))
        origin.append(line)
    if open_blocks:
        line, name = open_blocks[-1]
        raise PvlError(f"line {line}: {name} is opened but never closed with an END")
    tree = _plain_tree(events, values)
    if tree is not None:
        return tree
    try:
        module = pvl.loads(";\n".join(lines) + (";\n" if lines else "") + "END;\n")
    except Exception as exc:
        lineno = getattr(exc, "lineno", None)
        where = f"line {origin[lineno - 1]}: " if lineno and lineno <= len(origin) else ""
        reason = getattr(exc, "msg", exc)
        raise PvlError(f"{where}{str(reason).split(' near ')[0].strip()}") from exc
    return _to_node("ROOT", module, values)


_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*(/[A-Za-z0-9_]+)*\Z")


def _plain_tree(events, values):
    """The Node tree of well-formed statements (plain names, blocks closed by their own kind
    and name) built directly: pvl gives the same tree for these, only far slower (a PDR of
    1,000 granules took seconds). None for anything else, which pvl then judges."""
    root = Node("ROOT")
    stack, count = [(None, "", root)], 0
    for kind, name in events:
        if kind is None:
            if not _PLAIN_NAME.match(name) or name.upper() == "END":
                return None
            stack[-1][2].items.append((name, values[count]))
            count += 1
        elif kind in ("OBJECT", "GROUP"):
            if not _PLAIN_NAME.match(name):
                return None
            node = Node(name)
            stack[-1][2].items.append((name, node))
            stack.append((kind, name, node))
        else:
            opened, opened_name, _ = stack.pop()
            if f"END_{opened}" != kind or (name and name != opened_name):
                return None
    return root


def _close(open_blocks, line, word):
    if not open_blocks:
        raise PvlError(f"line {line}: {word} closes nothing")
    open_blocks.pop()


def _to_node(name, block, values):
    node = Node(name)
    for key, value in block.items():
        if isinstance(value, str):
            node.items.append((key, values[int(value)]))
        elif hasattr(value, "items"):
            node.items.append((key, _to_node(key, value, values)))
        else:
            raise PvlError(f"unexpected value for {key}")
    return node
