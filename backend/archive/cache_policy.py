"""Which cached files to purge. Pure policy (no Django), shared by the cache and the simulator.

Purging starts when usage passes the high watermark and frees down to the low one (Enstore:
0.8 / 0.4), least recently used first. A file may go only when it is clean, unpinned, past
its data-pool residency, and every copy its policy requires is verified: purging the disk
copy before the tape copy was confirmed is how dCache lost data (issue 6019).
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class CachedFile:
    file_id: int
    size: int
    last_access: float
    dirty: bool = False
    pinned: bool = False
    keep_until: float | None = None
    copies_verified: bool = True


@dataclass(frozen=True)
class Watermarks:
    high: float = 0.8
    low: float = 0.4


def purgeable(entry: CachedFile, now: float) -> bool:
    return (
        not entry.dirty
        and not entry.pinned
        and entry.copies_verified
        and (entry.keep_until is None or entry.keep_until <= now)
    )


def bytes_to_free(used: int, capacity: int, incoming: int, marks: Watermarks) -> int:
    """How much to purge so `incoming` fits: nothing below the high mark, else down to the low."""
    after = used + incoming
    if after <= marks.high * capacity and after <= capacity:
        return 0
    return max(0, int(after - marks.low * capacity))


def choose_victims(entries, need: int, now: float):
    """Least recently used purgeable files until `need` bytes are covered (or none are left)."""
    victims, freed = [], 0
    for entry in sorted((e for e in entries if purgeable(e, now)), key=lambda e: e.last_access):
        if freed >= need:
            break
        victims.append(entry)
        freed += entry.size
    return victims
