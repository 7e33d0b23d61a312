"""`manage.py chaos`: the outer process starts the run's own PostgreSQL and RabbitMQ, picks the
port and keys of its S3 server (the child starts it: starting it late is one of its faults),
runs the chaos in a child process pointed at them (and at a data root of its own), and stops
everything it started at the end, also when the run fails or is interrupted."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings

from . import report, s3, tapelib
from .fleet import kill_leftovers
from .services import Postgres, Rabbit

DEFAULTS = {"granules": 1000, "large": 20, "large_mb_min": 20, "large_mb_max": 50, "kills": 20,
            "varies": 6, "repacks": 3, "seed": 1, "timeout": 900}
SHORT = {"granules": 200, "large": 2, "large_mb_min": 20, "large_mb_max": 20, "kills": 5,
         "varies": 2, "repacks": 1, "timeout": 300}
# The S3 side: the big object's size, how long the server stays down at the start, and which
# of s3.ALL_FAULTS the run does.
S3_DEFAULTS = {"big_object_gb": 1.0, "s3_late_s": 120.0, "s3_faults": ",".join(s3.ALL_FAULTS)}
S3_SHORT = {"big_object_gb": 0.0, "s3_late_s": 10.0,
            "s3_faults": "unreachable,kill,bucket,damage"}


def add_arguments(parser):
    for name in DEFAULTS:
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=None,
                            help=f"default {DEFAULTS[name]} ({SHORT.get(name, '=')} with --short)")
    parser.add_argument("--big-object-gb", type=float, default=None,
                        help=f"the big object's size (default {S3_DEFAULTS['big_object_gb']}, "
                             f"none with --short); the issue's 5 GB: --big-object-gb 5")
    parser.add_argument("--s3-late-s", type=float, default=None,
                        help="seconds the S3 server stays down at the start (default "
                             f"{S3_DEFAULTS['s3_late_s']:.0f}, {S3_SHORT['s3_late_s']:.0f} "
                             "with --short)")
    parser.add_argument("--s3-faults", default=None,
                        help=f"comma-separated, of {S3_DEFAULTS['s3_faults']} (all by default; "
                             f"{S3_SHORT['s3_faults']} with --short; '' for none)")
    parser.add_argument("--short", action="store_true",
                        help="the short run of the test suite: " + json.dumps(SHORT))
    parser.add_argument("--tape", choices=tapelib.KINDS, default=None,
                        help="the tape volumes: the emulator's files, or cartridges of tgt's "
                             "virtual library the run starts (default: GRANARY_TAPE)")
    parser.add_argument("--iscsi-port", type=int, default=None,
                        help="the virtual library's iSCSI port (--tape scsi; a free one by "
                             "default)")
    parser.add_argument("--lease-s", type=int, help="drive and ingest leases (default 15/30 s)")
    parser.add_argument("--json", dest="json_out", help="write the result here")
    parser.add_argument("--keep", action="store_true", help="keep the run folder")
    parser.add_argument("--inner", action="store_true", help="(internal) run here")


def options_of(opts):
    preset = {**DEFAULTS, **S3_DEFAULTS,
              **({**SHORT, **S3_SHORT} if opts.get("short") else {})}
    out = {**opts, **{k: preset[k] if opts.get(k) is None else opts[k] for k in preset}}
    out["s3_faults"] = [f for f in out["s3_faults"].split(",") if f]
    out["tape"] = out.get("tape") or settings.GRANARY_TAPE
    unknown = set(out["s3_faults"]) - set(s3.ALL_FAULTS)
    if unknown:
        raise ValueError(f"unknown S3 faults {sorted(unknown)}: choose of {s3.ALL_FAULTS}")
    return out


def outer(opts, write):
    """Start the servers, run the child, stop everything; returns the result (None: the run
    itself failed)."""
    run_dir = (settings.DATA_ROOT / "chaos" / f"run-{time.strftime('%Y%m%d-%H%M%S')}"
               f"-{os.getpid()}").resolve()
    run_dir.mkdir(parents=True)
    write(f"chaos run folder: {run_dir}")
    postgres, rabbit = Postgres(run_dir), Rabbit(run_dir)
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    result = None
    try:
        postgres.start()
        postgres.create_database()
        rabbit.start()
        result = _child(run_dir, postgres, rabbit)
    finally:
        kill_leftovers(run_dir)
        s3.kill_leftover(run_dir)
        tapelib.stop(run_dir)
        rabbit.stop()
        postgres.stop()
        keep = opts["keep"] or result is None or not report.passed(result)
        postgres.remove(keep=keep)
        signal.signal(signal.SIGTERM, previous)
        if keep:
            write(f"kept {run_dir} (logs in logs/, the database in postgres/)")
        else:
            shutil.rmtree(run_dir, ignore_errors=True)
    return result


def _child(run_dir, postgres, rabbit):
    env = dict(os.environ, DATABASE_URL=postgres.url, CELERY_BROKER_URL=rabbit.url,
               GRANARY_DATA_ROOT=str(run_dir / "data"), **s3.environment(),
               CHAOS_SERVICES=json.dumps({"postgres": postgres.spec(), "rabbit": rabbit.spec()}))
    argv = [sys.executable, "manage.py", *sys.argv[1:], "--inner"]
    child = subprocess.Popen(argv, cwd=settings.BASE_DIR, env=env)
    try:
        child.wait()
    except BaseException:
        child.terminate()  # interrupted: the child stops what it started first
        child.wait()
        raise
    found = run_dir / "result.json"
    return json.loads(found.read_text()) if found.exists() else None


def inner(opts):
    """The run itself (in the child); writes result.json into the run folder."""
    from .run import Run

    services = json.loads(os.environ["CHAOS_SERVICES"])
    started = time.time()
    run = Run(opts, services)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        rows = run.start()
        run.chaos(rows)
        result = run.finish()
    finally:
        run.stop()
    result["run_s"] = round(time.time() - started, 1)
    report.write(result, Path(services["postgres"]["run_dir"]) / "result.json")
