"""Where a granule's bytes are is the archive's knowledge; the catalog asks for it through here.

Search shows each granule's residency (every file in the disk cache, or not) and a granule page
lists each file's copies and the medium each lies on (tape or object store), but the catalog
sits below the archive in the layers and may not import it. So the archive registers how to
answer when Django starts (`ArchiveConfig.ready`), and the catalog calls the registered
`Storage`.
"""
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.db.models import Q


@dataclass(frozen=True)
class Storage:
    """The questions the catalog asks the archive tier."""

    in_cache_q: Callable[[], Q]  # granules whose every file is in the disk cache
    file_in_cache: Callable[[object], bool]
    # a file's live copies, in copy order: each with copy_number, segment, state, length, medium
    # ("tape" or "object") and where it lies (volume.label and volume.silo.name, or bucket.name
    # and key)
    copies: Callable[[object], Sequence]
    # whether a file downloads now without an order (cache or object store: no recall)
    file_direct: Callable[[object], bool]
    # loads into one granule what a granule page answers the above from (its files, their
    # cache entries and copies); returns the granule
    load_detail: Callable[[object], object] = lambda granule: granule


_storage: Storage | None = None


def register(storage):
    global _storage
    _storage = storage


def storage():
    if _storage is None:
        raise RuntimeError("no archive tier has registered where files are (backend.archive)")
    return _storage
