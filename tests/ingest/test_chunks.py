"""chunk_ranges: how a request's waiting granules are cut into chunks (one task each)."""
from hypothesis import given
from hypothesis import strategies as st

from ingest.services.pipeline import chunk_ranges

rows_of = st.lists(st.integers(min_value=0, max_value=500), max_size=60).flatmap(
    lambda sizes: st.lists(st.integers(min_value=1, max_value=3), min_size=len(sizes),
                           max_size=len(sizes)).map(
        lambda gaps: [(sum(gaps[:i + 1]), n) for i, n in enumerate(sizes)]))


@given(rows_of, st.integers(min_value=1, max_value=10), st.integers(min_value=0, max_value=800))
def test_chunks_cover_every_granule_once_within_both_bounds(rows, size, max_bytes):
    ranges = chunk_ranges(rows, size, max_bytes)
    chunks = [[(p, n) for p, n in rows if start <= p < stop] for start, stop in ranges]
    assert [row for chunk in chunks for row in chunk] == rows   # each once, in order
    ends, starts = [stop for _, stop in ranges], [start for start, _ in ranges]
    assert all(end <= start for end, start in zip(ends, starts[1:], strict=False))
    for chunk in chunks:
        assert 1 <= len(chunk) <= size
        if max_bytes:   # only its last granule may take a chunk to the bound or past it
            assert sum(n for _, n in chunk[:-1]) < max_bytes
    for chunk in chunks[:-1]:
        # a chunk ends early only when it is full or has reached the bound
        assert len(chunk) == size or (max_bytes and sum(n for _, n in chunk) >= max_bytes)


def test_without_a_byte_bound_chunks_hold_size_granules():
    rows = [(p, 10**12) for p in range(7)]
    assert chunk_ranges(rows, 3) == [(0, 3), (3, 6), (6, 7)]
    assert chunk_ranges([], 3) == []
