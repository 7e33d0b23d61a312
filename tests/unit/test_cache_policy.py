"""Cache purge choice: LRU between watermarks, never a file lacking a verified copy."""
from backend.archive.cache_policy import CachedFile, Watermarks, bytes_to_free, choose_victims

MARKS = Watermarks(high=0.8, low=0.4)


def test_nothing_to_free_below_high_watermark():
    assert bytes_to_free(used=70, capacity=100, incoming=10, marks=MARKS) == 0


def test_frees_down_to_low_watermark_when_high_is_passed():
    assert bytes_to_free(used=75, capacity=100, incoming=10, marks=MARKS) == 45


def test_least_recently_used_go_first_and_only_as_many_as_needed():
    entries = [CachedFile(i, size=10, last_access=t) for i, t in [(1, 30), (2, 10), (3, 20)]]
    assert [v.file_id for v in choose_victims(entries, need=15, now=100)] == [2, 3]


def test_dirty_pinned_unverified_and_resident_files_are_never_chosen():
    entries = [
        CachedFile(1, 10, last_access=1, dirty=True),
        CachedFile(2, 10, last_access=2, pinned=True),
        CachedFile(3, 10, last_access=3, copies_verified=False),
        CachedFile(4, 10, last_access=4, keep_until=200),
        CachedFile(5, 10, last_access=5, keep_until=50),
    ]
    assert [v.file_id for v in choose_victims(entries, need=1000, now=100)] == [5]
