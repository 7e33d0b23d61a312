"""Subsetting at order: the options checked against what is ordered (a clear 400 before
ordering, and an estimated output size), and the transform step of an order's pipeline.

A data file of an order with a subset, once in the cache, waits there (in_cache) while a worker
of the `transform` queue cuts it (distribution.transform, in a forked child kept between items
and limited in time and memory per item: backend.isolation.Worker) into the order's folder,
with its own checksum, a history attribute and the provenance on the item. Nothing inside the
area or times is the item's EMPTY outcome; a file that cannot be cut fails its item with the
reason; the rest of the order goes on. A worker that died mid-transform leaves a claim the
sweep takes again after GRANARY_SUBSET_STALE_S, at most GRANARY_SUBSET_MAX_ATTEMPTS times.
"""
import functools
import os
import shutil
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from backend import isolation, leases
from backend.archive import services as archive
from backend.catalog import checksums
from backend.catalog.models import File
from backend.errors import DomainError, listed
from backend.nudges import send_on_commit

from .. import subset as subsets
from .. import transform
from ..models import OUTPUT_CHECKSUM, Order, OrderItem

FORMATS_READ = (".nc", ".nc4", ".h5", ".hdf5", ".hdf", ".he5")


def parse_subset(options):
    try:
        return subsets.parse(options)
    except subsets.SubsetError as exc:
        raise DomainError(str(exc), "subset") from None


def _data_files(granules):
    return list(File.objects.filter(granule__in=granules, role=File.Role.DATA)
                .select_related("granule__collection"))


def _cuttable(file):
    return file.name.lower().endswith(FORMATS_READ)


def check_subset(granules, subset):
    """Refuse, before ordering, what cannot work: a collection whose files cannot be cut, a
    variable it does not list, an area or time range that misses every granule ordered."""
    if not subset.cuts:
        return
    collections = {g.collection_id: g.collection for g in granules}
    files = _data_files(granules)
    for collection in collections.values():
        mine = [f for f in files if f.granule.collection_id == collection.pk]
        if not mine or not all(_cuttable(f) for f in mine) or not collection.variables:
            raise DomainError(
                f"{collection.key} cannot be subset: its data files are not NetCDF-4 or HDF5 "
                "with a list of variables. Order it apart, without a subset.", "subset")
        listed_names = {v["name"] for v in collection.variables}
        unknown = [v for v in subset.variables if v not in listed_names]
        if unknown:
            raise DomainError(
                f"{collection.key} has no variable {listed(unknown)}; its variables are "
                f"{', '.join(sorted(listed_names))}. Order collections apart to choose "
                "variables for each.", "subset")
    if subset.area is not None and not any(
            g.bbox is None or subsets.area_fraction(subset, g.bbox) > 0 for g in granules):
        raise DomainError("The area lies outside every granule ordered: nothing would be left.",
                          "subset")
    if (subset.start or subset.end) and not any(
            subsets.time_fraction(subset, g.temporal_start, g.temporal_end) > 0
            for g in granules):
        raise DomainError("The time range lies outside every granule ordered: nothing would be "
                          "left.", "subset")


def standing_subset(collections, options, mode):
    """A subscription's subset as stored, checked against its collections (their granules
    are not known yet: what a file lacks fails its item then)."""
    subset = parse_subset(options)
    if not subset.cuts:
        return {}
    if mode == "notify":
        raise DomainError("A subset needs a subscription that delivers (mode order or push), "
                          "not one that notifies.", "subset")
    for collection in collections:
        names = {v["name"] for v in collection.variables}
        if not names:
            raise DomainError(f"{collection.key} cannot be subset: it lists no variables.",
                              "subset")
        unknown = [v for v in subset.variables if v not in names]
        if unknown:
            raise DomainError(f"{collection.key} has no variable {listed(unknown)}.", "subset")
    return subset.as_json()


def _kept_share(collection, subset):
    """The share of a collection's data variables kept (coordinates are always kept)."""
    names = [v["name"] for v in collection.variables]
    coordinates = {"time", "lat", "lon", "latitude", "longitude"}
    data = [n for n in names if n.lower() not in coordinates] or names
    if not subset.variables:
        return 1.0
    return len([v for v in subset.variables if v in data]) / max(len(data), 1)


def estimate(granules, subset):
    """[(granule, delivered bytes, estimated bytes)]: the files an order with `subset` would
    deliver (data files only when it cuts), and about how large."""
    if not subset.cuts:
        return [(g, g.total_size, g.total_size) for g in granules]
    sizes = {}
    for file in _data_files(granules):
        sizes[file.granule_id] = sizes.get(file.granule_id, 0) + file.size
    return [(g, sizes.get(g.pk, 0),
             subsets.estimate(sizes.get(g.pk, 0), subset, _kept_share(g.collection, subset),
                              g.bbox, g.temporal_start, g.temporal_end)) for g in granules]


def preview(granules, options):
    """The cart's view of a subset: per granule its delivered and estimated bytes, each
    collection's variables and whether it can be cut; a 400 for what cannot work."""
    if not granules:
        raise DomainError("The cart is empty; add granules or name them.", "granules")
    subset = parse_subset(options)
    check_subset(granules, subset)
    rows = estimate(granules, subset)
    files = _data_files(granules)
    collections = {g.collection_id: g.collection for g in granules}
    return {
        "cuts": subset.cuts, "bytes": sum(r[1] for r in rows),
        "estimate": sum(r[2] for r in rows),
        "items": [{"granule": g, "size": size, "estimate": guess} for g, size, guess in rows],
        "collections": [
            {"collection": c.key, "variables": [v["name"] for v in c.variables],
             "subsettable": bool(c.variables) and all(
                 _cuttable(f) for f in files if f.granule.collection_id == c.pk)}
            for c in sorted(collections.values(), key=lambda c: c.key)],
        "formats": [{"name": k, "label": v} for k, v in subsets.FORMATS.items()],
    }


def order_subset(order):
    return subsets.parse(order.subset) if order.subset else subsets.Subset()


def needs_transform(order, item):
    return bool(order.subset) and item.file.role == File.Role.DATA


PENDING = Q(state=OrderItem.State.WAITING, in_cache=True)


def queue_transforms(item_ids):
    for pk in item_ids:
        send_on_commit("transform.subset_item", pk)


def claimable(now=None):
    """Pending transforms no live worker holds: never claimed, or claimed longer ago than the
    stale time (its worker died)."""
    return OrderItem.objects.filter(PENDING).filter(leases.stale(
        "transform_started_at", settings.GRANARY_SUBSET_STALE_S, now or timezone.now()))


def order_space(order_id):
    return Path(settings.ORDERS_ROOT) / f"order-{order_id}"


def output_path(item):
    return order_space(item.order_id) / item.granule.granule_id / item.output_name


def _claim(item_id):
    """Take a pending transform (one worker at a time); None when there is nothing to do. The
    attempt is counted when taken: a worker killed mid-transform has spent one."""
    now = timezone.now()
    with transaction.atomic():
        item = (claimable(now).select_for_update().select_related(
            "order", "file__granule__collection", "granule").filter(pk=item_id).first())
        if item is None:
            return None
        if item.transform_attempts >= settings.GRANARY_SUBSET_MAX_ATTEMPTS:
            _finish(item, OrderItem.State.FAILED,
                    error=f"transform: did not finish in {item.transform_attempts} attempts "
                          "(its worker stopped each time)")
            return None
        item.transform_attempts += 1
        item.transform_started_at = now
        item.save(update_fields=["transform_attempts", "transform_started_at"])
    return item


def transform_item(item_id):
    """Cut one pending item's file to its order's subset (idempotent on the item id)."""
    item = _claim(item_id)
    if item is None:
        return None
    try:
        source = _source(item)
    except archive.ArchiveError as exc:
        from .orders import queue_refresh

        # gone from the cache, or damaged there: recalled (and checked) again, then cut
        OrderItem.objects.filter(pk=item.pk, state=OrderItem.State.WAITING).update(
            in_cache=False, recall_request_id=None, transform_started_at=None)
        queue_refresh(item.order_id)
        return f"source not usable: {exc}"
    subset = order_subset(item.order)
    name = Path(item.file.name).stem if item.file.name.lower().endswith(FORMATS_READ) \
        else item.file.name
    output_name = f"{name}.subset{subsets.SUFFIXES[subset.format]}"
    folder = order_space(item.order_id) / item.granule.granule_id
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{output_name}.partial"
    history = (f"{timezone.now():%Y-%m-%dT%H:%M:%SZ} Granary order {item.order_id}: "
               f"subset of {item.file.name} ({subsets.dumps(subset)})")
    window = (item.granule.temporal_start, item.granule.temporal_end)
    started = timezone.now()
    try:
        result = cut_file(source, partial, subset, window, history)
    except isolation.ReadError as exc:
        return _finish(item, OrderItem.State.FAILED,
                       error=f"transform: {item.file.name} {exc}")
    provenance = {"source": {"file": item.file.name, "checksum_type": item.file.checksum_type,
                             "checksum": item.file.checksum, "size": item.file.size},
                  "subset": subset.as_json(), "libraries": _versions(),
                  "seconds": round((timezone.now() - started).total_seconds(), 3),
                  "attempt": item.transform_attempts}
    if result.empty:
        return _finish(item, OrderItem.State.EMPTY, error=result.reason,
                       provenance={**provenance, "outcome": result.reason})
    size, digest = result.size, result.checksum
    os.replace(partial, folder / output_name)
    provenance.update(variables=result.variables, sizes=result.sizes, history=history)
    return _finish(item, OrderItem.State.READY, output=(output_name, size, digest),
                   provenance=provenance)


def cut_file(source, target, subset, window, history):
    """Cut `source` into `target` in this process's transform child (limited in time and memory
    per file); the transform.Result, with the output's size and checksum when there is one
    (none is left behind when it is empty or fails: isolation.ReadError says why)."""
    try:
        result = _worker().run(
            functools.partial(_cut, target=str(target), subset=subset, window=window,
                              history=history),
            str(source), settings.GRANARY_SUBSET_TIME_LIMIT_S)
    except isolation.ReadError:
        _remove(target)
        raise
    if result.empty:
        _remove(target)
    return result


_WORKERS = {}


def _worker():
    """The transform child of this process, kept between items (the fork, the first imports of
    the libraries and their backends' discovery are paid once, not per item). The libraries are
    imported here first, so the child (and the next one after a failure) has them already."""
    import h5netcdf  # noqa: F401
    import netCDF4  # noqa: F401
    import xarray
    import zarr  # noqa: F401

    xarray.backends.list_engines()
    limit = settings.GRANARY_SUBSET_MEMORY_MB << 20
    worker = _WORKERS.get(limit)
    if worker is None:
        worker = _WORKERS[limit] = isolation.Worker(
            limit, refusals=(transform.TransformError,),
            max_jobs=settings.GRANARY_SUBSET_CHILD_JOBS)
    return worker


def _cut(path, target, subset, window, history):
    """In the child: the cut, and the output's checksum: taken while writing (a Zarr zip) or
    read back at once while its pages are warm (a NetCDF-4, which its library writes out of
    order)."""
    result = transform.run(path, target, subset, window, history,
                           digest=checksums.hasher(OUTPUT_CHECKSUM))
    if not result.empty and not result.checksum:
        result.checksum, result.size = checksums.of_file(OUTPUT_CHECKSUM, target)
    return result


def _source(item):
    """The cached file to cut, its bytes the catalog's (checked when not recently)."""
    handle = archive.open_for_serving(item.file, settings.GRANARY_CACHE_SCRUB_S)
    handle.close()
    return archive.cache_path(item.file)


@functools.cache
def _versions():
    from importlib.metadata import version

    return {name: version(name) for name in ("xarray", "h5netcdf", "h5py", "zarr", "numpy")}


def _remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _finish(item, state, error="", output=None, provenance=None):
    """Record the outcome, let the source leave the cache, settle the order."""
    from .orders import release_cache, retention, settle

    now = timezone.now()
    with transaction.atomic():
        order = Order.objects.select_for_update().get(pk=item.order_id)
        changes = {"state": state, "error": error[:2000], "eta_s": None}
        if provenance is not None:
            changes["provenance"] = provenance
        if output is not None:
            changes.update(output_name=output[0], output_size=output[1],
                           output_checksum=output[2], output_checksum_type=OUTPUT_CHECKSUM,
                           ready_at=now,
                           expires_at=order.expires_at or now + retention())
        moved = OrderItem.objects.filter(pk=item.pk, state=OrderItem.State.WAITING).update(
            **changes)
        if not moved:       # cancelled or expired meanwhile: its output is not kept
            remove_outputs([item])
            return None
        item.refresh_from_db()
        release_cache([item])
        if order.state not in Order.FINAL:
            settle(order, now)
    return state


def remove_outputs(items):
    """Delete the outputs of items that will not be delivered (expired, cancelled)."""
    for item in items:
        if item.output_name:
            _remove(output_path(item))


def remove_order_space(order_id):
    shutil.rmtree(order_space(order_id), ignore_errors=True)


def open_output(item):
    """The item's output opened to be sent. One that is gone or not its recorded size (the
    order's folder was cleaned, a disk lost it) sends the item back to be cut again: an
    ArchiveError says so, and the caller answers 503."""
    path = output_path(item)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - the download body closes it
        if os.fstat(handle.fileno()).st_size == item.output_size:
            return handle
        handle.close()
    except FileNotFoundError:
        pass
    from .orders import queue_refresh

    with transaction.atomic():
        moved = OrderItem.objects.filter(pk=item.pk, state=OrderItem.State.READY).update(
            state=OrderItem.State.WAITING, in_cache=False, recall_request_id=None,
            output_size=None, output_name="", output_checksum="", transform_started_at=None)
        if moved:
            Order.objects.filter(pk=item.order_id).update(state=Order.State.STAGING)
            queue_refresh(item.order_id)
    raise archive.ArchiveError(f"the output of {item.file.name} was lost; it is being cut again")
