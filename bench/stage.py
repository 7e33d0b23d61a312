"""stage: one 10,000-file stage request through the Tape REST API beside the same files
ordered one order per 100 files through the order API, in the same run, on the same tape
layout (files spread over 40 volumes, one copy each, 4 drives). Each side starts from an empty
cache; both go through the archive's recalls and its scheduler, the drives in threads. Reported
per side: how long the API took to accept the work, wall time until the last file was on disk
(drive delays slept at --time-scale), the time to last file on the drives' emulated clock
against the simulator's prediction for the same recalls and drives (stage_predict), mounts and
mounts per volume, and the stage side's ratio to the orders' (the baseline)."""
import io
import os
import time
from datetime import UTC, datetime, timedelta

from django.conf import settings

NAME = "stage"
HELP = "a 10,000-file Tape REST API stage request beside the same files as 100 orders"


def add_arguments(parser):
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--volumes", type=int, default=40)
    parser.add_argument("--drives", type=int, default=4)
    parser.add_argument("--per-order", type=int, default=100)
    parser.add_argument("--size", type=int, default=4096, help="bytes per file")
    parser.add_argument("--time-scale", type=float, default=0.02,
                        help="the drives' emulated delays are slept at this scale")


def _layout(options):
    from backend.archive import operations
    from backend.catalog.models import Collection

    from .live import media

    primary, _ = operations.install_layout(drives_per_silo=options["drives"],
                                           volumes_per_silo=options["volumes"],
                                           model=media(10**12))
    collection = Collection.objects.create(short_name="STAGEBENCH", version="1",
                                           title="stage bench")
    operations.set_policy(collection, [primary])
    return collection, primary


def _files_on_tape(collection, primary, options):
    from backend.archive.models import Volume

    volumes = list(Volume.objects.filter(silo=primary.silo).select_related("silo")
                   .order_by("label")[:options["volumes"]])
    return files_on_tape(collection, primary, volumes, options["files"] // options["per_order"],
                         options["per_order"], options["size"])


def files_on_tape(collection, group, volumes, granule_count, per, size):
    """Granules of `per` files each; file j of granule k on volume (k + j) % len(volumes), so
    every granule touches every volume. Written as real volume members (the archive reads them
    back byte for byte), one copy each, as if archived already. Also the journey's setup."""
    from backend.archive import tape
    from backend.archive.models import FileCopy, Volume
    from backend.archive.services.paths import member_name, volume_path
    from backend.catalog import checksums
    from backend.catalog.models import File, Granule

    day = datetime(2024, 1, 1, tzinfo=UTC)
    granules = Granule.objects.bulk_create([
        Granule(collection=collection, granule_id=f"G{k:05d}", state=Granule.State.ARCHIVED,
                temporal_start=day + timedelta(hours=k), temporal_end=day + timedelta(hours=k),
                archived_at=day, total_size=per * size) for k in range(granule_count)])
    File.objects.bulk_create([
        File(granule=g, name=f"f{j:03d}.dat", size=size, checksum_type="MD5",
             checksum="0" * 32) for g in granules for j in range(per)])
    files = list(File.objects.filter(granule__collection=collection)
                 .select_related("granule__collection").order_by("granule_id", "name"))
    by_volume = {}
    for n, f in enumerate(files):
        by_volume.setdefault(volumes[(n // per + n % per) % len(volumes)], []).append(f)
    copies = []
    for volume, members in by_volume.items():
        writer = tape.VolumeWriter(volume_path(volume), volume.end_of_data)
        for f in members:
            data = os.urandom(size)
            f.checksum = checksums.of_bytes("MD5", data)
            w = writer.add(member_name(f), io.BytesIO(data), size, "MD5", {"file": str(f.pk)})
            copies.append(FileCopy(file=f, copy_number=1, volume=volume, position=w.position,
                                   data_offset=w.data_offset, length=size, checksum_type="MD5",
                                   checksum=f.checksum, state=FileCopy.State.VERIFIED))
        writer.close()
        Volume.objects.filter(pk=volume.pk).update(
            group=group, state=Volume.State.FILLING, end_of_data=writer.end_of_data,
            live_bytes=size * len(members), file_count=len(members))
    File.objects.bulk_update(files, ["checksum"], batch_size=5000)
    FileCopy.objects.bulk_create(copies, batch_size=5000)
    return granules, files


def _empty_cache():
    import shutil

    from backend.archive.models import CacheEntry

    CacheEntry.objects.all().delete()
    shutil.rmtree(settings.CACHE_ROOT, ignore_errors=True)


def _mounts():
    from backend.archive.models import Volume

    return dict(Volume.objects.values_list("label", "mount_count"))


def _recall(refresh, scale, settle=None):
    """Have the work asked of the archive (what a worker does after the API answered; the
    drives' nudges go to the broker, purged at the end), then the drives work until idle, each
    in its thread: wall seconds for both, the busiest drive's emulated seconds, and mounts per
    volume."""
    from backend.archive import services as archive

    from .stage_predict import emulated_clock

    before = _mounts()
    start = time.perf_counter()
    refresh()
    with emulated_clock(scale) as clocks:
        archive.run_until_idle(parallel=True)
    if settle:
        settle()  # the orders' refreshes the recalls' messages ask a worker for
    seconds = time.perf_counter() - start
    per_volume = {k: v - before.get(k, 0) for k, v in _mounts().items()
                  if v - before.get(k, 0)}
    return seconds, max((v for k, v in clocks.items() if k is not None), default=0.0), per_volume


def _stage_side(client, files, scale):
    from distribution.models import StageFile
    from distribution.services import staging_progress

    paths = [f"/{f.granule.collection.key}/{f.granule.granule_id}/{f.name}" for f in files]
    # a running server has loaded its URLs and views: the first request of this process would
    # time their import (seconds on a loaded machine), not the acceptance
    assert client.get("/.well-known/wlcg-tape-rest-api").status_code == 200
    start = time.perf_counter()
    response = client.post("/api/tape/v1/stage", {"files": [{"path": p} for p in paths]},
                           format="json")
    accepted = time.perf_counter() - start
    assert response.status_code == 201, response.content[:500]
    stage_id = response.json()["requestId"]
    seconds, tape_s, per_volume = _recall(lambda: staging_progress.refresh_stage(stage_id),
                                          scale)
    states = dict.fromkeys(StageFile.State.values, 0)
    for state in StageFile.objects.filter(request_id=stage_id).values_list("state", flat=True):
        states[state] += 1
    return {"accepted_s": round(accepted, 3), "recall_s": round(seconds, 2),
            "last_file_tape_s": round(tape_s, 1),
            "mounts": sum(per_volume.values()), "mounts_per_volume": per_volume,
            "retries": _retries(), "states": states}


def _retries():
    """Recall attempts charged (a drive's or a copy's failure), each a possible extra mount."""
    from django.db.models import Sum

    from backend.archive.models import ArchiveRequest

    return ArchiveRequest.objects.filter(kind="recall").aggregate(n=Sum("attempts"))["n"] or 0


def _goals(stage, predicted, volumes):
    return {"accepted <= 2 s": stage["accepted_s"] <= 2,
            "mounts <= volumes + retries": stage["mounts"] <= volumes + stage["retries"],
            "every file COMPLETED": stage["states"]["COMPLETED"] == sum(stage["states"].values()),
            "last file <= 1.10 x simulator": stage["last_file_tape_s"] <= 1.10 * predicted}


def _write_early(options, stage, predicted, predicted_mounts):
    """The stage side's figures as soon as they are known (a long run cut short keeps them)."""
    import json
    from pathlib import Path

    if options.get("json_out"):
        Path(options["json_out"]).write_text(json.dumps({
            "partial": "stage side only", "stage": stage,
            "simulator": {"last_file_s": round(predicted, 1), "mounts": predicted_mounts},
            "stage_over_simulator_last_file": round(stage["last_file_tape_s"] / predicted, 3),
            "goals_met": _goals(stage, predicted, options["volumes"])}, indent=2))


def _order_side(client, granules, scale):
    from distribution.models import Order, OrderItem
    from distribution.services import orders

    start = time.perf_counter()
    ids = []
    for g in granules:
        response = client.post("/api/v1/orders/", {"granules": [g.pk]}, format="json")
        assert response.status_code == 201, response.content[:500]
        ids.append(response.json()["id"])
    accepted = time.perf_counter() - start

    def refresh():
        for order_id in ids:
            orders.refresh_order(order_id)

    seconds, tape_s, per_volume = _recall(refresh, scale, settle=refresh)
    states = dict.fromkeys(OrderItem.State.values, 0)
    for state in OrderItem.objects.filter(order_id__in=ids).values_list("state", flat=True):
        states[state] += 1
    return {"accepted_s": round(accepted, 3), "recall_s": round(seconds, 2),
            "last_file_tape_s": round(tape_s, 1),
            "mounts": sum(per_volume.values()), "mounts_per_volume": per_volume,
            "states": states, "orders": len(ids),
            "orders_ready": Order.objects.filter(pk__in=ids, state="ready").count()}


def run(options):
    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient

    from .live import NO_WAITS, purge_queues

    for key, value in NO_WAITS.items():
        setattr(settings, key, float(value))
    settings.GRANARY_ORDER_MAX_OPEN = options["files"]
    settings.GRANARY_CACHE_BYTES = max(settings.GRANARY_CACHE_BYTES,
                                       4 * options["files"] * options["size"])
    collection, primary = _layout(options)
    granules, files = _files_on_tape(collection, primary, options)
    user = get_user_model().objects.create(username="stage-bench", email="bench@example.org")
    client = APIClient()
    client.force_authenticate(user)
    from .stage_predict import predicted_s

    predicted, predicted_mounts = predicted_s(files, options["drives"])
    scale = options["time_scale"]
    stage = _stage_side(client, files, scale)
    _write_early(options, stage, predicted, predicted_mounts)
    _empty_cache()
    ordered = _order_side(client, granules, scale)
    purge_queues()
    volumes = options["volumes"]
    result = {
        "files": len(files), "volumes": volumes, "drives": options["drives"],
        "time_scale": scale, "stage": stage, "orders": ordered,
        "simulator": {"last_file_s": round(predicted, 1), "mounts": predicted_mounts},
        "stage_over_simulator_last_file": round(stage["last_file_tape_s"] / predicted, 3),
        "orders_over_simulator_last_file": round(ordered["last_file_tape_s"] / predicted, 3),
        "stage_over_orders_recall_s": round(stage["recall_s"] / ordered["recall_s"], 3),
        "goals": {"stage accepted_s": "<= 2", "stage mounts": f"<= {volumes} (+ retries)",
                  "every file": "COMPLETED", "last file vs simulator": "within 10 %"},
        "goals_met": _goals(stage, predicted, volumes),
    }
    result["table"] = [
        ("files / volumes / drives", f"{len(files)} / {volumes} / {options['drives']}"),
        ("stage: POST /stage answered (s)", stage["accepted_s"]),
        ("stage: recall wall time (s)", stage["recall_s"]),
        ("stage: mounts (volumes touched)",
         f"{stage['mounts']} ({len(stage['mounts_per_volume'])})"),
        ("stage: max mounts of one volume", max(stage["mounts_per_volume"].values(), default=0)),
        ("stage: recall retries (attempts charged)", stage["retries"]),
        ("stage: file states", stage["states"]),
        ("stage: last file, drives' emulated clock (s)", stage["last_file_tape_s"]),
        ("simulator: last file, same recalls and drives (s)", result["simulator"]["last_file_s"]),
        ("ratio stage/simulator last file", result["stage_over_simulator_last_file"]),
        (f"orders: {ordered['orders']} POSTs answered (s)", ordered["accepted_s"]),
        ("orders: recall wall time (s)", ordered["recall_s"]),
        ("orders: mounts (volumes touched)",
         f"{ordered['mounts']} ({len(ordered['mounts_per_volume'])})"),
        ("orders: item states", ordered["states"]),
        ("orders: last file, drives' emulated clock (s)", ordered["last_file_tape_s"]),
        ("ratio orders/simulator last file", result["orders_over_simulator_last_file"]),
        ("ratio stage/orders recall wall time", result["stage_over_orders_recall_s"]),
        ("goals met", result["goals_met"]),
    ]
    return result
