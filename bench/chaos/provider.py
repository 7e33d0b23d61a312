"""The provider's side: granules made of seeded random bytes whose MD5 is taken as they are
made (the independent record every later check compares with), delivered the way providers
deliver: small files put into the staging area (as sftp would), large ones uploaded through the
API, the one big object (a GB or more) written into the staging area in chunks, each batch then
submitted as a bulk ingest request with an Idempotency-Key. Each granule belongs to one of the
run's collections (tape only, or copy 1 in a bucket and copy 2 on tape)."""
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

KB, MB = 1 << 10, 1 << 20
LARGE, BIG = "CHAOS-L", "CHAOS-B"   # granule id prefixes of the large granules and the big one


@dataclass
class Original:
    granule_id: str
    name: str
    size: int
    md5: str
    large: bool
    collection: str = ""
    big: bool = False


def plan(rng, granules, large, large_mb=(20, 50), collections=("CHAOS.1",), big_bytes=0,
         big_collection=None):
    """(granule_id, size, large, collection key) for every granule, large ones spread among
    the small, collections dealt in turn by `collections` (a key may repeat to weigh it); the
    big granule (big_bytes, when given) goes in the first batch, to `big_collection`."""
    def dealt(i):
        return collections[i % len(collections)]

    rows = [(f"CHAOS-{i:06d}", rng.randint(2 * KB, 48 * KB), False, dealt(i))
            for i in range(granules)]
    early = max(2, (large + 1) // 2)  # archived before the cache is squeezed for an order
    for j in range(large):
        size = rng.randint(large_mb[0] * MB, large_mb[1] * MB)
        end = len(rows) // 2 if j < early else len(rows)
        rows.insert(rng.randint(0, end), (f"{LARGE}{j:04d}", size, True, dealt(j)))
    if big_bytes:
        rows.insert(0, (f"{BIG}0000", big_bytes, True, big_collection or collections[0]))
    return rows


def batches(rows, count):
    size = max(1, -(-len(rows) // max(1, count)))
    return [rows[i:i + size] for i in range(0, len(rows), size)]


class Provider:
    """Makes and delivers the granules of a batch; remembers every original MD5."""

    def __init__(self, api, area, seed):
        self.api, self.area, self.seed = api, area, seed
        self.originals = {}
        self.t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def _bytes(self, granule_id, size):
        """Random bytes fixed by the seed and the granule (a rerun makes the same files)."""
        import random

        return random.Random(f"{self.seed}:{granule_id}").randbytes(size)

    def _spec(self, index, original):
        start = self.t0 + timedelta(minutes=5 * index)
        return {"collection": original.collection, "granule_id": original.granule_id,
                "temporal": {"start": start.isoformat(),
                             "end": (start + timedelta(minutes=5)).isoformat()},
                "bbox": [-10, -10, 10, 10],
                "files": [{"name": original.name, "path": f"chaos/{original.name}",
                           "size": original.size, "checksum_type": "MD5",
                           "checksum": original.md5}]}

    def _deliver(self, granule_id, size, large, collection):
        if granule_id.startswith(BIG):
            return self._deliver_big(granule_id, size, collection)
        data = self._bytes(granule_id, size)
        original = Original(granule_id, f"{granule_id}.dat", size, hashlib.md5(data).hexdigest(),
                            large, collection)
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

    def _deliver_big(self, granule_id, size, collection, chunk=8 * MB):
        """The big object, written into the staging area a chunk at a time (never whole in
        memory), its MD5 taken on the way."""
        import random

        rng, digest, left = random.Random(f"{self.seed}:{granule_id}"), hashlib.md5(), size
        folder = self.area / "chaos"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{granule_id}.dat"
        partial = folder / f".{name}.part"
        with open(partial, "wb") as out:
            while left:
                data = rng.randbytes(min(chunk, left))
                digest.update(data)
                out.write(data)
                left -= len(data)
        partial.rename(folder / name)
        original = Original(granule_id, name, size, digest.hexdigest(), False, collection,
                            big=True)
        self.originals[granule_id] = original
        return original

    def submit(self, number, rows):
        """Deliver a batch's files, then submit it; returns the ingest request id."""
        specs = []
        for granule_id, size, large, collection in rows:
            original = self._deliver(granule_id, size, large, collection)
            specs.append(self._spec(len(self.originals), original))
        status, answer = self.api.call(
            "POST", "/api/v1/ingest/requests/", {"granules": specs},
            headers={"Idempotency-Key": f"chaos-{self.seed}-{number}"})
        if status not in (200, 202):
            raise RuntimeError(f"ingest request {number} refused ({status}): {answer}")
        return answer["id"]
