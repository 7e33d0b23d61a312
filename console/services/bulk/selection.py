"""Which granules a bulk job takes: the operator granule filter's query, or a list of ids
(numbers, or COLLECTION.VERSION:GRANULE_ID lines from a pasted or uploaded file).

An id list is read whole before anything is done: every line that names no granule is
reported with its line number, and a job is made only from a list where every line is known,
so a typo never quietly shrinks what an operator asked for."""
import csv
import io
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Sum

from backend.catalog.models import Collection, Granule
from backend.errors import DomainError, TooLarge
from backend.ids import MAX_ID
from console.granule_query import granules_matching

MAX_LINE = 400           # characters in one line of an id list
MAX_REPORTED = 200       # unknown lines reported one by one; the rest are counted
IN_CHUNK = 500           # ids per IN (...) query (SQLite's variable limit stays far off)


def max_granules():
    return settings.GRANARY_BULK_MAX_GRANULES


@dataclass
class Selection:
    granule_ids: list = field(default_factory=list)   # catalog pks, in the order given
    unknown: list = field(default_factory=list)       # [{line, value, detail}], the first ones
    unknown_count: int = 0
    duplicates: int = 0
    lines: int = 0

    def note_unknown(self, line, value, detail):
        self.unknown_count += 1
        self.unknown.append({"line": line, "value": str(value)[:MAX_LINE], "detail": detail})

    def report_first_unknown(self):
        """Keep the first MAX_REPORTED unknown lines, in line order."""
        self.unknown = sorted(self.unknown, key=lambda u: u["line"])[:MAX_REPORTED]

    def totals(self):
        """(granules, bytes) of what is selected, counted in the database."""
        total = 0
        for at in range(0, len(self.granule_ids), IN_CHUNK):
            chunk = self.granule_ids[at:at + IN_CHUNK]
            total += Granule.objects.filter(pk__in=chunk).aggregate(
                n=Sum("total_size"))["n"] or 0
        return len(self.granule_ids), total


def by_query(params):
    """The granules the operator filter selects (refused past the job size limit)."""
    if not isinstance(params, dict):
        raise DomainError("query must be an object of filters", "query")
    matching = granules_matching(params)
    limit = max_granules()
    ids = list(matching.order_by("pk").values_list("pk", flat=True)[:limit + 1])
    if len(ids) > limit:
        raise TooLarge(f"the query selects more than {limit:,} granules, the most one job "
                       "takes; narrow it (a collection, a date range) and run several", "query")
    return Selection(granule_ids=ids)


def lines_of_upload(upload):
    """The first cell of every line of an uploaded text or CSV file (blank lines and lines
    starting with # left out), as (line number, text)."""
    limit = settings.GRANARY_BULK_MAX_UPLOAD_BYTES
    if upload.size > limit:
        raise TooLarge(f"the file is {upload.size:,} bytes; at most {limit:,}", "file")
    try:
        text = upload.read().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DomainError("the file must be UTF-8 text: one id per line", "file") from exc
    out = []
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        cell = row[0].strip() if row else ""
        if cell and not cell.startswith("#"):
            out.append((number, cell))
    return out


def by_ids(values):
    """A Selection from [(line number, value)]: numbers are catalog ids, text is
    COLLECTION.VERSION:GRANULE_ID (its latest version)."""
    limit = max_granules()
    if len(values) > limit:
        raise TooLarge(f"{len(values):,} ids given; at most {limit:,} in one job", "ids")
    chosen = Selection(lines=len(values))
    numbers, keys = {}, {}
    for line, value in values:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            chosen.note_unknown(line, value, "must be a number or COLLECTION.VERSION:GRANULE_ID")
        elif isinstance(value, int) or value.strip().isdigit():
            _number(chosen, numbers, line, value)
        else:
            _key(chosen, keys, line, value.strip())
    found = {**_numbers_found(numbers), **_keys_found(keys)}
    seen = set()
    for line, _ in values:
        where = found.get(line)
        if where is None:
            continue
        if where in seen:
            chosen.duplicates += 1
        else:
            seen.add(where)
            chosen.granule_ids.append(where)
    for line, value in sorted({**numbers, **keys}.items()):
        if line not in found:
            chosen.note_unknown(line, value, "no such granule")
    chosen.report_first_unknown()
    return chosen


def _number(chosen, numbers, line, value):
    text = str(value).strip()
    if len(text) > 19 or not 1 <= int(text) <= MAX_ID:
        chosen.note_unknown(line, value, "not a granule id")
    else:
        numbers[line] = int(text)


def _key(chosen, keys, line, value):
    collection, sep, granule_id = value.partition(":")
    if not sep or not granule_id or "." not in collection or len(value) > MAX_LINE:
        chosen.note_unknown(line, value, "must be a number or COLLECTION.VERSION:GRANULE_ID")
    else:
        keys[line] = value


def _numbers_found(numbers):
    """{line: granule pk} for the numeric lines that name a granule."""
    wanted = sorted(set(numbers.values()))
    known = set()
    for at in range(0, len(wanted), IN_CHUNK):
        known.update(Granule.objects.filter(pk__in=wanted[at:at + IN_CHUNK])
                     .values_list("pk", flat=True))
    return {line: pk for line, pk in numbers.items() if pk in known}


def _keys_found(keys):
    """{line: granule pk} for COLLECTION.VERSION:GRANULE_ID lines: the latest version."""
    by_collection = {}
    for line, value in keys.items():
        collection, _, granule_id = value.partition(":")
        by_collection.setdefault(collection, {}).setdefault(granule_id, []).append(line)
    out = {}
    for key, ids in by_collection.items():
        try:
            collection = Collection.objects.get_by_key(key)
        except Collection.DoesNotExist:
            continue
        wanted = sorted(ids)
        for at in range(0, len(wanted), IN_CHUNK):
            rows = (Granule.objects.filter(collection=collection,
                                           granule_id__in=wanted[at:at + IN_CHUNK])
                    .order_by("granule_id", "version").values_list("granule_id", "pk"))
            latest = dict(rows)  # ordered by version: the last one wins
            for granule_id, pk in latest.items():
                out.update({line: pk for line in ids[granule_id]})
    return out
