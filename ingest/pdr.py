"""Product Delivery Records: read a PDR, answer with a PDRD or a PAN. Pure Python, no Django.

The PVL itself is read by `pvl_text`, which keeps every value as the provider wrote it.
"""
import difflib
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from . import names
from .pvl_text import Node as Node  # the tree parse_pvl gives, for ingest.pdr's callers
from .pvl_text import PvlError, parse_pvl

# PDRD dispositions (the PDR is refused as a whole).
INVALID_PVL = "INVALID PVL STATEMENT"
INVALID_FILE_COUNT = "INVALID FILE COUNT"
INVALID_ORIGINATING_SYSTEM = "MISSING OR INVALID ORIGINATING_SYSTEM PARAMETER"
INVALID_DATA_TYPE = "INVALID DATA TYPE"
INVALID_DATA_VERSION = "MISSING OR INVALID DATA_VERSION"
INVALID_DIRECTORY = "INVALID DIRECTORY"
INVALID_FILE_ID = "INVALID FILE ID"
INVALID_FILE_SIZE = "INVALID FILE SIZE"
INVALID_FILE_TYPE = "INVALID FILE TYPE"
INVALID_CKSUM_TYPE = "INVALID CHECKSUM TYPE"
INVALID_CKSUM_VALUE = "INVALID CHECKSUM VALUE"
DUPLICATE_FILE_NAME = "DUPLICATE FILE NAME IN GRANULE"

# PAN dispositions (one per file once the PDR's work is done).
SUCCESSFUL = "SUCCESSFUL"
FILES_NOT_FOUND = "ALL FILE GROUPS/FILES NOT FOUND"
SIZE_CHECK_FAILURE = "POST-TRANSFER FILE SIZE CHECK FAILURE"
CHECKSUM_FAILURE = "CHECKSUM VERIFICATION FAILURE"
UNKNOWN_DATA_TYPE = "UNKNOWN DATA TYPE"
METADATA_ERROR = "METADATA PREPROCESSING ERROR"
FILE_IO_ERROR = "FILE I/O ERROR"
ARCHIVE_ERROR = "DATA ARCHIVE ERROR"
INTERNAL_ERROR = "ECS INTERNAL ERROR"

# FILE_TYPE -> role of the file in the catalog.
FILE_TYPES = {"SCIENCE": "data", "DATA": "data", "METADATA": "metadata", "BROWSE": "browse",
              "QA": "qa", "LINKAGE": "metadata"}

_TOP_KEYS = {"ORIGINATING_SYSTEM", "TOTAL_FILE_COUNT", "EXPIRATION_TIME", "FILE_GROUP",
             "DESCRIPTOR"}
_GROUP_KEYS = {"DATA_TYPE", "DATA_VERSION", "NODE_NAME", "FILE_SPEC", "DESCRIPTOR",
               "BEGINNING_DATE/TIME", "ENDING_DATE/TIME"}
_SPEC_KEYS = {"DIRECTORY_ID", "FILE_ID", "FILE_TYPE", "FILE_SIZE", "FILE_CKSUM_TYPE",
              "FILE_CKSUM_VALUE", "DESCRIPTOR"}


class PdrRejected(Exception):
    """A PDR refused as a whole: answered by a short PDRD."""

    def __init__(self, disposition, detail):
        super().__init__(detail)
        self.disposition = disposition
        self.detail = detail


# ---------------------------------------------------------------------------------------------
# Reading a PDR


@dataclass
class FileSpec:
    directory_id: str
    file_id: str
    file_type: str
    file_size: int | None
    cksum_type: str
    cksum_value: str

    @property
    def path(self):
        """Where the file lies in the provider's staging area (DIRECTORY_ID taken from it)."""
        directory = self.directory_id.strip("/")
        return f"{directory}/{self.file_id}" if directory else self.file_id

    @property
    def role(self):
        return FILE_TYPES.get(self.file_type.upper(), "data")


@dataclass
class FileGroup:
    number: int
    data_type: str
    data_version: str
    node_name: str
    files: list
    extras: dict
    disposition: str = SUCCESSFUL
    detail: str = ""

    @property
    def collection_key(self):
        return f"{self.data_type}.{self.data_version}"

    def reject(self, disposition, detail):
        """Keep the first problem of a group: it is the one the provider fixes first."""
        if self.disposition == SUCCESSFUL:
            self.disposition, self.detail = disposition, f"FILE_GROUP {self.number}: {detail}"


@dataclass
class Pdr:
    originating_system: str
    total_file_count: int
    expiration_time: datetime | None
    groups: list
    extras: dict

    @property
    def rejected_groups(self):
        return [g for g in self.groups if g.disposition != SUCCESSFUL]


_ORDINAL_DATE = re.compile(r"(\d{4})-(\d{3})(?=T|\Z)")


def parse_time(text):
    """An ISO 8601 date and time as ECS and S4PA PDRs write it: a calendar date or an ordinal
    one (day of year, `2025-107T00:00:00Z`), fractional seconds, a zone or `Z` or none (UTC)."""
    value = str(text).strip().replace(" ", "T", 1)
    if value.endswith(("z", "Z")):
        value = value[:-1] + "+00:00"
    ordinal = _ORDINAL_DATE.match(value)
    if ordinal:
        value = _calendar_date(int(ordinal[1]), int(ordinal[2])) + value[ordinal.end():]
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _calendar_date(year, day):
    """YYYY-MM-DD of the day-th day of year (1-based); ValueError for a day the year lacks."""
    first = date(year, 1, 1)
    when = first + timedelta(days=day - 1)
    if day < 1 or when.year != year:
        raise ValueError(f"{year} has no day {day}")
    return when.isoformat()


def _check_keys(node, known, where):
    """Refuse misspelt keywords (close to a known one); other unknown keywords are carried."""
    seen = set()
    for key in node.keys():
        upper = key.upper()
        if upper in known:
            if upper in seen and upper not in ("FILE_GROUP", "FILE_SPEC"):
                raise PdrRejected(INVALID_PVL, f"{where}: {key} is given twice")
            seen.add(upper)
            continue
        close = difflib.get_close_matches(upper, known, n=1, cutoff=0.8)
        if close:
            raise PdrRejected(INVALID_PVL,
                              f"{where}: unknown keyword {key} (did you mean {close[0]}?)")


def _extras(node, parsed):
    """Statements carried along (DESCRIPTOR, BEGINNING_DATE/TIME, ...), as text."""
    return {k: v for k, v in node.items if isinstance(v, str) and k.upper() not in parsed}


def read_pdr(text):
    """Parse and check a PDR. PDR-wide faults raise PdrRejected (short PDRD); faults of a file
    group are marked on the group (long PDRD)."""
    if not isinstance(text, str) or not text.strip():
        raise PdrRejected(INVALID_PVL, "the PDR is empty")
    try:
        root = parse_pvl(text)
    except PvlError as exc:
        raise PdrRejected(INVALID_PVL, f"the PDR is not valid PVL: {exc}") from exc
    _check_keys(root, _TOP_KEYS, "PDR")
    origin = (root.value("ORIGINATING_SYSTEM") or "").strip()
    if not origin:
        raise PdrRejected(INVALID_ORIGINATING_SYSTEM, "ORIGINATING_SYSTEM is missing")
    count_text = root.value("TOTAL_FILE_COUNT")
    if count_text is None:
        raise PdrRejected(INVALID_FILE_COUNT, "TOTAL_FILE_COUNT is missing")
    if not count_text.strip().isdigit():
        raise PdrRejected(INVALID_FILE_COUNT,
                          f"TOTAL_FILE_COUNT {count_text!r} is not a whole number")
    expiration = root.value("EXPIRATION_TIME")
    if expiration is not None:
        try:
            expiration = parse_time(expiration)
        except ValueError as exc:
            raise PdrRejected(INVALID_PVL, f"EXPIRATION_TIME {expiration!r} is not an ISO 8601 "
                              "date and time") from exc
    group_nodes = root.children("FILE_GROUP")
    if not group_nodes:
        raise PdrRejected(INVALID_FILE_COUNT, "the PDR has no FILE_GROUP")
    groups = [_read_group(n, node) for n, node in enumerate(group_nodes, start=1)]
    listed = sum(len(g.files) for g in groups)
    if int(count_text) != listed:
        raise PdrRejected(INVALID_FILE_COUNT,
                          f"TOTAL_FILE_COUNT is {int(count_text)} but the PDR lists {listed} files")
    return Pdr(origin, listed, expiration, groups,
               _extras(root, {"ORIGINATING_SYSTEM", "TOTAL_FILE_COUNT", "EXPIRATION_TIME"}))


def _read_group(number, node):
    where = f"FILE_GROUP {number}"
    _check_keys(node, _GROUP_KEYS, where)
    specs = node.children("FILE_SPEC")
    for i, spec in enumerate(specs, start=1):
        _check_keys(spec, _SPEC_KEYS, f"{where}, FILE_SPEC {i}")
    group = FileGroup(
        number=number, data_type=(node.value("DATA_TYPE") or "").strip(),
        data_version=(node.value("DATA_VERSION") or "").strip(),
        node_name=(node.value("NODE_NAME") or "").strip(),
        files=[_read_spec(s) for s in specs],
        extras=_extras(node, {"DATA_TYPE", "DATA_VERSION", "NODE_NAME"}),
    )
    if not group.data_type or names.name_problem(group.data_type, "DATA_TYPE"):
        group.reject(INVALID_DATA_TYPE, "DATA_TYPE is missing or not a name")
    if not group.data_version or names.name_problem(group.data_version, "DATA_VERSION"):
        group.reject(INVALID_DATA_VERSION, "DATA_VERSION is missing or not a name")
    if not specs:
        group.reject(INVALID_FILE_ID, "the group has no FILE_SPEC")
    seen = set()
    for i, spec in enumerate(group.files, start=1):
        _check_spec(group, i, spec)
        if spec.file_id in seen:
            group.reject(DUPLICATE_FILE_NAME, f"{spec.file_id} is listed twice")
        seen.add(spec.file_id)
    return group


def _read_spec(node):
    size = (node.value("FILE_SIZE") or "").strip()
    return FileSpec(
        directory_id=(node.value("DIRECTORY_ID") or "").strip(),
        file_id=(node.value("FILE_ID") or "").strip(),
        file_type=(node.value("FILE_TYPE") or "").strip(),
        file_size=int(size) if size.isdigit() else None,
        cksum_type=(node.value("FILE_CKSUM_TYPE") or "").strip(),
        cksum_value=(node.value("FILE_CKSUM_VALUE") or "").strip(),
    )


def _check_spec(group, i, spec):
    where = f"FILE_SPEC {i}"
    problem = names.file_name_problem(spec.file_id, "FILE_ID")
    if problem:
        group.reject(INVALID_FILE_ID, f"{where}: {problem}")
    directory = spec.directory_id.strip("/")
    problem = directory and names.path_problem(directory, "DIRECTORY_ID")
    if not spec.directory_id:
        group.reject(INVALID_DIRECTORY, f"{where}: DIRECTORY_ID is missing")
    elif problem:
        group.reject(INVALID_DIRECTORY, f"{where}: {problem}")
    if spec.file_size is None:
        group.reject(INVALID_FILE_SIZE, f"{where}: FILE_SIZE is missing or not a whole number")
    elif spec.file_size == 0:
        group.reject(INVALID_FILE_SIZE, f"{where}: {spec.file_id} is empty (FILE_SIZE = 0)")
    elif spec.file_size > names.MAX_FILE_SIZE:
        group.reject(INVALID_FILE_SIZE, f"{where}: FILE_SIZE {spec.file_size} is more than "
                     f"{names.MAX_FILE_SIZE} bytes")
    if spec.file_type.upper() not in FILE_TYPES:
        group.reject(INVALID_FILE_TYPE, f"{where}: FILE_TYPE {spec.file_type!r} is not one of "
                     + ", ".join(FILE_TYPES))
    if spec.cksum_value and not spec.cksum_type:
        group.reject(INVALID_CKSUM_TYPE, f"{where}: FILE_CKSUM_VALUE without FILE_CKSUM_TYPE")
    if spec.cksum_type and not re.fullmatch(r"[0-9A-Fa-f]+", spec.cksum_value):
        group.reject(INVALID_CKSUM_VALUE, f"{where}: FILE_CKSUM_VALUE "
                     f"{spec.cksum_value!r} is not a checksum")


# ---------------------------------------------------------------------------------------------
# Answers


def _stamp(when):
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def short_pdrd(disposition):
    return f'MESSAGE_TYPE = SHORTPDRD;\nDISPOSITION = "{disposition}";\n'


def long_pdrd(groups):
    """One disposition per file group, SUCCESSFUL for the groups that were fine."""
    lines = ["MESSAGE_TYPE = LONGPDRD;", f"NO_FILE_GRPS = {len(groups)};"]
    for g in groups:
        lines.append(f"DATA_TYPE = {g.data_type or 'UNKNOWN'};")
        lines.append(f'FILE_GRP_DISPOSITION = "{g.disposition}";')
    return "\n".join(lines) + "\n"


def pan(files, when):
    """The answer to an accepted PDR: files are (directory, name, disposition). Short when all
    are SUCCESSFUL, long (a disposition per file) otherwise."""
    stamp = _stamp(when)
    if all(d == SUCCESSFUL for _, _, d in files):
        return f'MESSAGE_TYPE = SHORTPAN;\nDISPOSITION = "{SUCCESSFUL}";\nTIME_STAMP = {stamp};\n'
    lines = ["MESSAGE_TYPE = LONGPAN;", f"NO_OF_FILES = {len(files)};"]
    for directory, name, disposition in files:
        lines += [f"FILE_DIRECTORY = {directory};", f"FILE_NAME = {name};",
                  f'DISPOSITION = "{disposition}";', f"TIME_STAMP = {stamp};"]
    return "\n".join(lines) + "\n"
