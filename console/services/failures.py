"""Failures grouped by their reason's pattern, across ingest, the archive and distribution, and
one retry for a whole group: an operator sees "checksum mismatch: 50 granules" once, fixes the
cause, and sends those fifty round again, nothing else."""
from django.db import transaction
from django.db.models import Count, Max, Min

from backend.accounts.audit import record
from backend.actions import REDELIVER, RETRY, can, cannot
from backend.errors import DomainError, NotFound

from ..reasons import KEY_PATTERN, group_key, normalise
from .sources import SOURCES, chosen

ACTION = "failures.retry_group"
# a group's reasons are kept for at most this many distinct ones, and its actions judged on
# at most ACTIONS_SAMPLE of its items: judging one takes a look at its staged files, and the
# list is polled (200 per group made it 1.1 s at 10 M granules; an action says "n of m")
SAMPLE = 200
ACTIONS_SAMPLE = 25


def _grouped(source, since=None, collection=None):
    """{pattern: group} for one source's failed rows. The database counts the rows of each
    distinct (reason, collection) first: a cause that failed thousands of rows alike is
    normalised once, not once per row."""
    groups = {}
    rows = (source.rows(since, collection).values("_reason", "_collection")
            .annotate(n=Count("pk"), first=Min("_at"), last=Max("_at")).order_by())
    for row in rows.iterator(chunk_size=2000):
        reason, key = row["_reason"] or "", row["_collection"]
        pattern = normalise(reason)
        group = groups.get(pattern)
        if group is None:
            group = groups[pattern] = {
                "key": group_key(source.where, source.kind, pattern), "where": source.where,
                "kind": source.kind, "pattern": pattern, "example": reason, "count": 0,
                "collections": {}, "first_seen": row["first"], "last_seen": row["last"],
                "reasons": set()}
        group["count"] += row["n"]
        if len(group["reasons"]) < SAMPLE:
            group["reasons"].add(reason)
        if key:
            group["collections"][key] = group["collections"].get(key, 0) + row["n"]
        if _before(row["first"], group["first_seen"]):
            group["first_seen"] = row["first"]
        if _before(group["last_seen"], row["last"]):
            group["last_seen"], group["example"] = row["last"], reason
    return groups


def _before(a, b):
    return a is not None and (b is None or a < b)


def _members(source, key):
    """(pattern, ids) of the group `key` of one source, or None."""
    pattern, ids = None, []
    for pk, reason in source.rows().values_list("pk", "_reason").iterator(chunk_size=2000):
        candidate = normalise(reason)
        if group_key(source.where, source.kind, candidate) == key:
            pattern = candidate
            ids.append(pk)
    return (pattern, ids) if ids else None


def failure_groups(since=None, where=None, kind=None, collection=None):
    """Every group of failed work, the largest first (then the latest): where, kind, pattern,
    an example reason (the latest), count, collections with counts, first and last seen."""
    out = []
    for source in chosen(where, kind):
        groups = _grouped(source, since, collection)
        actions = _actions_of(source, groups)
        for pattern, group in groups.items():
            group["collections"] = [
                {"key": k, "count": n}
                for k, n in sorted(group["collections"].items(), key=lambda kv: (-kv[1], kv[0]))]
            group.pop("reasons")
            group["actions"] = actions[pattern]
            out.append(group)
    out.sort(key=lambda g: (-g["count"], -(g["last_seen"].timestamp() if g["last_seen"] else 0),
                            g["key"]))
    return out


def _actions_of(source, groups):
    """{pattern: what can be done about its group}, each judged on up to ACTIONS_SAMPLE of its
    items, all of a source's judged at once (one judgement per group made a listing of 14
    groups take 48 queries)."""
    if source.actions is None:
        return {pattern: [can(RETRY, "send every item round again")] for pattern in groups}
    sample = {pattern: list(source.rows().filter(_reason__in=list(group["reasons"]))
                            .values_list("pk", flat=True)[:ACTIONS_SAMPLE])
              for pattern, group in groups.items()}
    judged = source.actions([pk for ids in sample.values() for pk in ids])
    return {pattern: _verdict([judged[pk] for pk in ids if pk in judged])
            for pattern, ids in sample.items()}


def _verdict(judged):
    """Each action possible when it is for some of the judged items (saying for how many),
    else why not (the first item's why)."""
    out = []
    for name in (RETRY, REDELIVER):
        offered = [a for actions in judged for a in actions if a["action"] == name]
        yes = [a for a in offered if a["possible"]]
        if yes:
            some = "" if len(yes) == len(judged) else f" ({len(yes)} of {len(judged)})"
            out.append(can(name, yes[0]["reason"] + some))
        elif offered:
            out.append(cannot(name, offered[0]["reason"]))
    return out


def find_group(key):
    """(source, pattern, ids) of the group named `key` as it stands now; NotFound when none
    has it."""
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise DomainError("key must be a group key as the groups list gives it", field="key")
    for source in SOURCES:
        if any(g["key"] == key for g in _grouped(source).values()):
            found = _members(source, key)
            if found:
                return source, *found
    raise NotFound("No failed work has this group key now (it may have been retried already).")


def _hopeless(source, ids):
    """[(id, why)] of the items a retry cannot help, as the app that owns them judges."""
    out = []
    for pk, actions in (source.actions(ids) if source.actions else {}).items():
        retry = next((a for a in actions if a["action"] == RETRY), None)
        if retry is not None and not retry["possible"]:
            out.append((pk, retry["reason"]))
    return out


def retry_group(actor, key, reason=""):
    """Send every item of one group round again through its app's retry service; returns what
    was retried and what could not be, with why. Audited in the same transaction."""
    source, pattern, ids = find_group(key)
    hopeless = _hopeless(source, ids)
    ids = [pk for pk in ids if pk not in dict(hopeless)]
    with transaction.atomic():
        retried, skipped = source.retry(ids) if ids else (0, [])
        skipped = hopeless + list(skipped)
        result = {
            "key": key, "where": source.where, "kind": source.kind, "pattern": pattern,
            "matched": len(ids) + len(hopeless), "retried": retried,
            "not_retried": [{"id": pk, "reason": why} for pk, why in skipped],
        }
        # what neither went again nor was refused had changed meanwhile (retried, cancelled)
        gone = len(ids) - retried - (len(skipped) - len(hopeless))
        if gone > 0:
            result["not_retried"].append(
                {"id": None, "reason": f"{gone} no longer failed when the retry ran"})
        record(actor, ACTION, "failure_group", key, label=f"{source.name}: {pattern}",
               reason=reason, detail={"where": source.where, "kind": source.kind,
                                      "matched": len(ids) + len(hopeless), "retried": retried,
                                      "not_retried": len(skipped)})
    return result
