"""The provider's side: granules made of seeded random bytes whose MD5 is taken as they are
made (the independent record every later check compares with), delivered the way providers
deliver: small files put into the staging area (as sftp would), large ones uploaded through the
API, each batch then submitted as a bulk ingest request with an Idempotency-Key."""
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

KB, MB = 1 << 10, 1 << 20


@dataclass
class Original:
    granule_id: str
    name: str
    size: int
    md5: str
    large: bool


def plan(rng, granules, large, large_mb=(20, 50)):
    """(granule_id, size, large) for every granule, large ones spread among the small."""
    rows = [(f"CHAOS-{i:06d}", rng.randint(2 * KB, 48 * KB), False) for i in range(granules)]
    early = max(2, (large + 1) // 2)  # archived before the cache is squeezed for an order
    for j in range(large):
        size = rng.randint(large_mb[0] * MB, large_mb[1] * MB)
        end = len(rows) // 2 if j < early else len(rows)
        rows.insert(rng.randint(0, end), (f"CHAOS-L{j:04d}", size, True))
    return rows


def batches(rows, count):
    size = max(1, -(-len(rows) // max(1, count)))
    return [rows[i:i + size] for i in range(0, len(rows), size)]


class Provider:
    """Makes and delivers the granules of a batch; remembers every original MD5."""

    def __init__(self, api, area, collection_key, seed):
        self.api, self.area, self.collection_key, self.seed = api, area, collection_key, seed
        self.originals = {}
        self.t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def _bytes(self, granule_id, size):
        """Random bytes fixed by the seed and the granule (a rerun makes the same files)."""
        import random

        return random.Random(f"{self.seed}:{granule_id}").randbytes(size)

    def _spec(self, index, original):
        start = self.t0 + timedelta(minutes=5 * index)
        return {"collection": self.collection_key, "granule_id": original.granule_id,
                "temporal": {"start": start.isoformat(),
                             "end": (start + timedelta(minutes=5)).isoformat()},
                "bbox": [-10, -10, 10, 10],
                "files": [{"name": original.name, "path": f"chaos/{original.name}",
                           "size": original.size, "checksum_type": "MD5",
                           "checksum": original.md5}]}

    def _deliver(self, granule_id, size, large):
        data = self._bytes(granule_id, size)
        original = Original(granule_id, f"{granule_id}.dat", size, hashlib.md5(data).hexdigest(),
                            large)
        if large:
            self.api.call("PUT", f"/api/v1/ingest/uploads/chaos/{original.name}", data,
                          content_type="application/octet-stream",
                          headers={"X-Checksum-Type": "MD5", "X-Checksum": original.md5})
        else:
            folder = self.area / "chaos"
            folder.mkdir(parents=True, exist_ok=True)
            partial = folder / f".{original.name}.part"
            partial.write_bytes(data)
            partial.rename(folder / original.name)
        self.originals[granule_id] = original
        return original

    def submit(self, number, rows):
        """Deliver a batch's files, then submit it; returns the ingest request id."""
        specs = []
        for granule_id, size, large in rows:
            original = self._deliver(granule_id, size, large)
            specs.append(self._spec(len(self.originals), original))
        status, answer = self.api.call(
            "POST", "/api/v1/ingest/requests/", {"granules": specs},
            headers={"Idempotency-Key": f"chaos-{self.seed}-{number}"})
        if status not in (200, 202):
            raise RuntimeError(f"ingest request {number} refused ({status}): {answer}")
        return answer["id"]
