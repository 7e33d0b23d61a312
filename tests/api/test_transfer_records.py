"""Moves recorded together (an ingest chunk's granules, a recall commit's files) are one
transfer record per collection that counts them: bytes and counts add up to the moves', the
span runs from the first start to the last end (worked out here by brute force)."""
import random
from datetime import UTC, datetime, timedelta

from backend.metrics.services import per_collection


def test_moves_become_one_record_per_collection_that_adds_them_up():
    rng = random.Random(4)
    t0 = datetime(2026, 3, 1, tzinfo=UTC)
    moves = []
    for _ in range(300):
        start = t0 + timedelta(seconds=rng.uniform(0, 600))
        moves.append((rng.choice([3, 5, None]), rng.randrange(1, 10**6), start,
                      start + timedelta(seconds=rng.uniform(0, 60))))
    records = per_collection("ingest", moves)
    assert len(records) == len({c for c, _, _, _ in moves})
    for r in records:
        mine = [m for m in moves if m[0] == r.collection_id]
        assert r.direction == "ingest"
        assert (r.transfers, r.bytes) == (len(mine), sum(m[1] for m in mine))
        assert r.started_at == min(m[2] for m in mine)
        assert r.ended_at == max(m[3] for m in mine)
