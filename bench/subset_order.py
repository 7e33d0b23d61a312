"""One order of many subset items, every step run in this process (Celery eager), driven until
nothing changes: how many items ended ready, empty or failed, and how many are stuck. The
granules are small NetCDF-4 files made here, ingested through the real pipeline (metadata read
from the files) and archived."""
import io
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command

from backend.accounts.models import Provider
from backend.archive import services as archive
from backend.catalog import checksums
from backend.catalog.models import Collection, Granule
from distribution.models import OrderItem
from distribution.services import create_order, refresh_order
from ingest import services as ingest
from ingest.models import IngestRequest
from ingest.services import pipeline

from .subset import VARIABLES

FINAL = {OrderItem.State.READY, OrderItem.State.EMPTY, OrderItem.State.FAILED}


def order_many(count):
    from backend.celery import app

    app.conf.task_always_eager = True
    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    settings.GRANARY_ORDER_MAX_OPEN = 10
    collection, _ = Collection.objects.get_or_create(
        short_name="BENCH_SUBSET", version="1", defaults={
            "title": "bench subset granules",
            "file_patterns": [r"^(?P<granule>bench-\d+)\.nc$"],
            "variables": [{"name": n, "units": "1", "long_name": n} for n in VARIABLES]})
    call_command("seed_demo", "--granules", "0", stdout=io.StringIO())   # hardware, users
    provider = Provider.objects.get(name="PODAAC_SIPS")
    provider.collections.add(collection)
    request = _deliver(provider, collection, count)
    pipeline.run_request(request.pk)
    archive.run_until_idle()
    assert not IngestRequest.objects.exclude(state="completed").exists()
    ids = list(collection.granules.filter(state=Granule.State.ARCHIVED)
               .values_list("pk", flat=True))
    user = get_user_model().objects.get(username="scientist")
    started = time.perf_counter()
    order = create_order(user, ids, subset={"variables": VARIABLES[:3],
                                            "bbox": [-80, 20, 0, 60]})
    for _ in range(20):
        before = _states(order)
        refresh_order(order.pk)
        archive.run_until_idle()
        if _states(order) == before and not order.items.filter(state="waiting").exists():
            break
    seconds = time.perf_counter() - started
    states = _states(order)
    return {"items": sum(states.values()), "states": states, "seconds": seconds,
            "stuck": sum(n for s, n in states.items() if s not in FINAL)}


def _states(order):
    counts = {}
    for state in order.items.values_list("state", flat=True):
        counts[state] = counts.get(state, 0) + 1
    return counts


def _deliver(provider, collection, count):
    from .subset import make_granule

    area = ingest.staging_area(provider)
    folder = area / "bench-subset"
    folder.mkdir(parents=True, exist_ok=True)
    granules = []
    for index in range(count):
        path = folder / f"bench-{index}.nc"
        make_granule(path, 36, 72, ntime=2)
        digest, size = checksums.of_file("MD5", path)
        granules.append({"collection": collection.key, "granule_id": path.stem, "files": [
            {"name": path.name, "path": str(path.relative_to(area)), "role": "data",
             "size": size, "checksum_type": "MD5", "checksum": digest}]})
    request, _ = ingest.submit(provider, granules, label="bench subset")
    return request
