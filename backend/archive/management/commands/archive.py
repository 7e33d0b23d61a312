"""`manage.py archive <subcommand>`: the archive tier from the command line.

A thin layer: each subcommand is an entry in SUBCOMMANDS (its help, a function adding its
arguments, and a handler taking the command and the parsed options); the work is done by the
archive modules, whose refusals end the command with their sentence (backend.cli.Command).
"""
import json
from dataclasses import dataclass
from pathlib import Path

from django.core.management.base import CommandError

from backend.archive import object_board, operations, scheduler, simulator
from backend.archive.media import MediumError
from backend.archive.models import Drive, Volume
from backend.archive.services import add_bucket
from backend.archive.services import reconcile as reconciliation
from backend.archive.services.cache import cache_usage
from backend.archive.services.manager import recover_stale_work, run_until_idle
from backend.cli import Command as ServiceCommand


@dataclass(frozen=True)
class Subcommand:
    help: str
    arguments: object
    handler: object


def _simulate_arguments(parser):
    parser.add_argument("--workload", required=True,
                        help="workload JSON (nas26, gsfc97 or lto9 format)")
    parser.add_argument("--policy", choices=sorted(scheduler.POLICIES), default="smart")
    parser.add_argument("--hours", type=float, default=24.0, help="virtual hours to simulate")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", metavar="OUT", help="also write the result here")


def _simulate(command, opts):
    path = Path(opts["workload"])
    if not path.is_file():
        raise CommandError(f"no workload file at {path}")
    if opts["hours"] <= 0:
        raise CommandError("--hours must be positive")
    result = simulator.simulate(simulator.load_workload(path), opts["policy"], opts["hours"],
                                opts["seed"])
    command.stdout.write(_table(result))
    if opts["json"]:
        Path(opts["json"]).write_text(json.dumps(result, indent=2) + "\n")
        command.stdout.write(f"result written to {opts['json']}")


def _table(result):
    """The result as aligned `name  value` lines, nested figures flattened with dots."""
    rows = []

    def walk(prefix, value):
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else key, inner)
        else:
            rows.append((prefix, f"{value:,}" if isinstance(value, int | float)
                         and not isinstance(value, bool) else str(value)))

    walk("", result)
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def _rows(command, header, rows):
    """Print rows as an aligned table with a header."""
    rows = [tuple(str(v) for v in row) for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(header)]
    command.stdout.write("  ".join(f"{h:<{w}}" for h, w in zip(header, widths, strict=True)))
    for row in rows:
        command.stdout.write("  ".join(f"{v:<{w}}" for v, w in zip(row, widths, strict=True)))
    if not rows:
        command.stdout.write("(none)")


def _mib(nbytes):
    return f"{nbytes / 2**20:,.1f} MiB"


def _volume(label):
    try:
        return Volume.objects.select_related("silo", "group").get(label=label)
    except Volume.DoesNotExist as exc:
        raise CommandError(f"no volume {label}") from exc


def _drive(name):
    try:
        return Drive.objects.select_related("silo").get(name=name)
    except Drive.DoesNotExist as exc:
        raise CommandError(f"no drive {name}") from exc


def _groups(command, opts):
    _rows(command, ("group", "role", "silo", "volumes", "used", "live", "% full"),
          [(g["name"], g["role"], g["silo"], g["volumes"], _mib(g["used_bytes"]),
            _mib(g["live_bytes"]), g["percent_full"]) for g in operations.volume_groups()])


def _volumes(command, opts):
    _rows(command, ("label", "silo", "group", "state", "% full", "live", "files", "mounts"),
          [(v.label, v.silo.name, v.group.name if v.group else "-", v.state, v.percent_full,
            _mib(v.live_bytes), v.file_count, v.mount_count)
           for v in operations.media_by_state(opts["state"])])


def _files(command, opts):
    _rows(command, ("position", "length", "copy", "segment", "state", "granule", "file"),
          [(c.position, c.length, c.copy_number, c.segment, c.state, c.file.granule.granule_id,
            c.file.name) for c in operations.files_on_volume(_volume(opts["volume"]))])


def _file_status(command, opts):
    status = operations.file_status(operations.find_file(opts["file"]))
    f, entry = status["file"], status["cache"]
    command.stdout.write(f"{f.name}  {f.size} bytes  {f.checksum_type} {f.checksum}")
    cache = f"{entry.state}{' (pinned)' if entry.pinned else ''}" if entry else "not in cache"
    command.stdout.write(f"cache: {cache}")
    command.stdout.write(f"copies required: {status['required_copies']}  "
                         f"complete: {'yes' if status['complete'] else 'no'}")
    _rows(command, ("copy", "segment", "medium", "where", "position", "length", "state"),
          [(c.copy_number, c.segment, c.medium,
            f"{c.volume.label} in {c.volume.silo.name}" if c.volume_id
            else f"{c.bucket.name}: {c.key}", c.position if c.volume_id else "-", c.length,
            c.state) for c in status["copies"]])


def _buckets(command, opts):
    _rows(command, ("bucket", "store", "on the server", "objects", "held", "failures",
                    "health"),
          [(b["name"], b["store"], "/".join(filter(None, (b["bucket"], b["prefix"]))),
            b["objects"], _mib(b["bytes"]), b["failures"]["requests"],
            "ok" if b["health"]["ok"] else b["health"]["reason"])
           for b in object_board.bucket_board()])


def _add_bucket(command, opts):
    try:
        bucket = add_bucket(opts["name"], opts["bucket"], store=opts["store"],
                            prefix=opts["prefix"], create=opts["create"])
    except MediumError as exc:   # the store refused or is down: its reason, not a traceback
        raise CommandError(f"{exc}; nothing was recorded: run this again once the store "
                           "answers") from exc
    command.stdout.write(f"bucket {bucket.name}: {bucket.bucket} on object store "
                         f"{bucket.store}" + (f", keys under {bucket.prefix}" if bucket.prefix
                                              else ""))


def _drives(command, opts):
    _rows(command, ("drive", "silo", "state", "mode", "volume", "errors", "note"),
          [(d.name, d.silo.name, d.state, d.mode or "-",
            d.mounted_volume.label if d.mounted_volume else "-", d.consecutive_errors,
            d.offline_reason or d.last_error[:60])
           for d in Drive.objects.select_related("silo", "mounted_volume")])


def _queue(command, opts):
    states = [opts["state"]] if opts["state"] else ["queued", "running"]
    _rows(command, ("id", "kind", "state", "priority", "file", "group", "% done", "error"),
          [(r.pk, r.kind, r.state, r.get_priority_display(), r.file.name if r.file else "-",
            r.volume_group.name if r.volume_group else "-", r.percent_done, r.error[:60])
           for r in operations.request_queue(states, opts["kind"])])


def _vary(command, opts):
    drive = operations.vary_drive(_drive(opts["drive"]), opts["state"] == "on", opts["reason"])
    command.stdout.write(f"drive {drive.name} is {drive.state}")


def _label(command, opts):
    from backend.archive.models import DriveModel, Silo

    silo = Silo.objects.filter(name=opts["silo"]).first()
    media = DriveModel.objects.filter(name=opts["media"]).first()
    if silo is None or media is None:
        raise CommandError(f"no silo {opts['silo']!r}" if silo is None
                           else f"no drive model {opts['media']!r}")
    volumes = operations.label_volumes(silo, media, opts["count"], opts["prefix"])
    command.stdout.write(f"labelled {len(volumes)} volumes: {volumes[0].label} .. "
                         f"{volumes[-1].label}")


def _repack(command, opts):
    job = operations.start_repack(_volume(opts["volume"]))
    command.stdout.write(f"repack request {job.pk} queued for {opts['volume']} "
                         f"({_mib(job.bytes_total)} live)")


def _audit(command, opts):
    if not opts["volume"] and not opts["sample"]:
        raise CommandError("give --volume LABEL or --sample N")
    volume = _volume(opts["volume"]) if opts["volume"] else None
    count = operations.start_audit(volume=volume, sample=opts["sample"])
    command.stdout.write(f"{count} copies queued for audit")


def _pin(command, opts):
    files = [operations.find_file(ref) for ref in opts["files"]]
    operations.pin(files, opts["action"] == "pin")
    command.stdout.write(f"{len(files)} files {opts['action']}ned")


def _release(command, opts):
    files = [operations.find_file(ref) for ref in opts["files"]]
    released = operations.release(files)
    command.stdout.write(f"{len(released.files)} files released from the cache "
                         f"({_mib(released.freed_bytes)}); they are on their copies only now")
    for _, reason in released.kept:
        command.stdout.write(f"kept: {reason}")


def _cache(command, opts):
    usage = cache_usage()
    _rows(command, ("capacity", "used", "free", "dirty", "clean", "pinned"),
          [tuple(_mib(v) for v in (usage.capacity, usage.used, usage.free, usage.dirty,
                                   usage.clean, usage.pinned))])


def _rebuild(command, opts):
    counts = operations.rebuild_catalog()
    command.stdout.write(", ".join(f"{k}: {v}" for k, v in counts.items()))


def _reconcile(command, opts):
    run = reconciliation.reconcile(full=opts["full"], sample=opts["sample"],
                                   repair=opts["repair"])
    found = list(run.discrepancies.select_related("volume").order_by("pk"))
    _rows(command, ("id", "kind", "objects", "detail", "repair", "done"),
          [(d.pk, d.kind, _objects(d), d.detail, d.repair or "(report only)", d.outcome or "-")
           for d in found])
    n = run.discrepancy_count
    command.stdout.write(
        f"reconciliation {run.pk} ({run.scope}): {n} discrepanc{'y' if n == 1 else 'ies'}, "
        f"{sum(1 for d in found if d.repaired_at)} repaired; read {run.volumes_read} volumes, "
        f"{run.copies_read} copies, {run.cache_files_read} cached files")
    for note in run.notes:   # told, not discrepancies: nothing is wrong
        command.stdout.write(f"note: {note['message']}")
        for m in note.get("listed", []):
            command.stdout.write(f"  byte {m['position']}: {m['name']} ({m['size']} bytes; "
                                 f"granule {m['granule_id']}, copy {m['copy']})")
        if note.get("members", 0) > len(note.get("listed", [])):
            command.stdout.write(f"  ... and {note['members'] - len(note['listed'])} more")


def _objects(d):
    return " ".join(f"{name} {value}" for name, value in (
        ("volume", d.volume.label if d.volume else None), ("file", d.file_id),
        ("copy", d.copy_id), ("request", d.request_id)) if value is not None) or "-"


def _run(command, opts):
    import time

    while True:
        recover_stale_work()
        steps = run_until_idle(parallel=opts["parallel"])
        if steps:
            command.stdout.write(f"{steps} drive steps done")
        if not opts["forever"]:
            return
        time.sleep(opts["interval"])


def _none(parser):
    return parser


def _volumes_arguments(parser):
    parser.add_argument("--state", choices=[s for s, _ in Volume.State.choices])


def _queue_arguments(parser):
    parser.add_argument("--kind", choices=["migrate", "recall", "repack", "audit"])
    parser.add_argument("--state", choices=["queued", "running", "done", "failed", "cancelled"])


def _vary_arguments(parser):
    parser.add_argument("drive")
    parser.add_argument("state", choices=["on", "off"])
    parser.add_argument("--reason", default="")


def _label_arguments(parser):
    parser.add_argument("--silo", required=True)
    parser.add_argument("--media", required=True, help="drive model name")
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--prefix", required=True, help="label prefix, e.g. C")


def _add_bucket_arguments(parser):
    parser.add_argument("name", help="the copy target's name in policies")
    parser.add_argument("--bucket", required=True, help="the bucket's name on the server")
    parser.add_argument("--store", default="default",
                        help="an entry of GRANARY_OBJECT_STORES (default: default)")
    parser.add_argument("--prefix", default="", help="keys start with this")
    parser.add_argument("--create", action="store_true",
                        help="make the bucket on the server when it is not there")


def _audit_arguments(parser):
    parser.add_argument("--volume")
    parser.add_argument("--sample", type=int)


def _pin_arguments(parser):
    parser.add_argument("action", choices=["pin", "unpin"])
    parser.add_argument("files", nargs="+", help="file ids or COLLECTION:GRANULE/NAME")


def _reconcile_arguments(parser):
    parser.add_argument("--full", action="store_true",
                        help="read every volume, copy and cached file")
    parser.add_argument("--sample", type=int,
                        help="copies and cached files to read at random (default: the daily "
                             "sample, GRANARY_RECONCILE_SAMPLE)")
    parser.add_argument("--repair", action="store_true", help="apply the safe repairs")


def _run_arguments(parser):
    parser.add_argument("--forever", action="store_true", help="keep serving the queue")
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--parallel", action="store_true", help="one thread per drive")


SUBCOMMANDS = {
    "simulate": Subcommand(
        "Replay a workload on the simulated silos under a scheduling policy",
        _simulate_arguments, _simulate,
    ),
    "groups": Subcommand("Volume groups with % full", _none, _groups),
    "volumes": Subcommand("Media list, optionally by state", _volumes_arguments, _volumes),
    "files": Subcommand("Files on a volume, in tape order",
                        lambda p: p.add_argument("volume"), _files),
    "file-status": Subcommand("A file's cache state and every copy",
                              lambda p: p.add_argument("file"), _file_status),
    "buckets": Subcommand("Object-store buckets: what each holds, failures, health", _none,
                          _buckets),
    "add-bucket": Subcommand("Add an object-store bucket as a copy target",
                             _add_bucket_arguments, _add_bucket),
    "drives": Subcommand("Drive status", _none, _drives),
    "queue": Subcommand("Request queue with % done", _queue_arguments, _queue),
    "vary": Subcommand("Vary a drive on or off", _vary_arguments, _vary),
    "label": Subcommand("Label new scratch volumes (in parallel)", _label_arguments, _label),
    "repack": Subcommand("Repack a sparse volume and recycle it",
                         lambda p: p.add_argument("volume"), _repack),
    "audit": Subcommand("Fixity audit of a volume or a sample", _audit_arguments, _audit),
    "pin": Subcommand("Pin or unpin cached files", _pin_arguments, _pin),
    "release": Subcommand(
        "Drop files' cache copies now (clean, unpinned, not kept for an order)",
        lambda p: p.add_argument("files", nargs="+", help="file ids or COLLECTION:GRANULE/NAME"),
        _release,
    ),
    "cache": Subcommand("Cache usage", _none, _cache),
    "rebuild-catalog": Subcommand("Rebuild the copy catalog from the volumes alone", _none,
                                  _rebuild),
    "reconcile": Subcommand(
        "Compare catalog, cache, volumes (read back) and copies; report, and repair if asked",
        _reconcile_arguments, _reconcile,
    ),
    "run": Subcommand("Run the storage manager in this process", _run_arguments, _run),
}


class Command(ServiceCommand):
    help = "Archive tier commands: " + ", ".join(SUBCOMMANDS)

    def add_arguments(self, parser):
        subparsers = parser.add_subparsers(dest="subcommand", required=True)
        for name, sub in SUBCOMMANDS.items():
            sub.arguments(subparsers.add_parser(name, help=sub.help.replace("%", "%%")))

    def handle(self, *args, **opts):
        SUBCOMMANDS[opts["subcommand"]].handler(self, opts)
