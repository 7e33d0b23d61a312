"""Run a benchmark in its own data root and database, print a table and write JSON.

`manage.py bench NAME [options] --json OUT`. The work happens in a child process whose
GRANARY_DATA_ROOT is a fresh folder on the same disk as the data root (so baselines such as dd
measure the same disk) and whose database is a throwaway one (a SQLite file there, or
<database>_bench_<name> on the PostgreSQL server of DATABASE_URL). A benchmark with
`reuse_key(options)` takes --reuse: its PostgreSQL database is then named after that key and kept
between runs, so a large load is done once per set of parameters.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from backend.cli import Command as DomainCommand
from bench import BENCHMARKS


class Command(DomainCommand):
    help = "Run a benchmark: " + ", ".join(BENCHMARKS)

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="benchmark", required=True)
        for name, module in BENCHMARKS.items():
            p = sub.add_parser(name, help=module.HELP)
            module.add_arguments(p)
            p.add_argument("--json", dest="json_out", help="write the result here")
            p.add_argument("--keep", action="store_true", help="keep the bench data root")
            p.add_argument("--inner", action="store_true", help="(internal) run here")
            if hasattr(module, "reuse_key"):
                p.add_argument("--reuse", action="store_true",
                               help="keep the loaded database for the next run with the same "
                                    "parameters (PostgreSQL)")

    def handle(self, *args, **opts):
        name = opts["benchmark"]
        if opts["inner"]:
            return self._inner(name, opts)
        root = settings.DATA_ROOT / "bench" / f"{name}-{int(time.time())}"
        root.mkdir(parents=True)
        env = dict(os.environ, GRANARY_DATA_ROOT=str(root))
        url = os.environ.get("DATABASE_URL", "")
        if url.startswith("postgres"):
            # named after the database of DATABASE_URL: helpers on one server never share one
            base, database = url.split("?", 1)[0].rsplit("/", 1)
            database = f"{database}_bench_{name.replace('-', '_')}"
            keep = opts.get("reuse")
            if keep:
                database += "_" + BENCHMARKS[name].reuse_key(opts)
            env["DATABASE_URL"] = f"{base}/{database}"
            subprocess.run([sys.executable, "scripts/pg_recreate.py", env["DATABASE_URL"],
                            *(["--keep"] if keep else [])], cwd=settings.BASE_DIR, check=True)
        else:
            env.pop("DATABASE_URL", None)
        argv = [sys.executable, "manage.py", *sys.argv[1:], "--inner"]
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        child = subprocess.Popen(argv, cwd=settings.BASE_DIR, env=env)
        try:
            child.wait()
        except BaseException:
            child.terminate()  # stopped from outside: the child stops what it started first
            child.wait()
            raise
        finally:
            if not opts["keep"]:
                shutil.rmtree(root, ignore_errors=True)
        if child.returncode:
            raise CommandError(f"benchmark {name} failed")

    def _inner(self, name, opts):
        call_command("migrate", verbosity=0)
        from django.db import connection

        result = BENCHMARKS[name].run(opts)
        table = result.pop("table")
        result.update({"benchmark": name, "database": connection.vendor,
                       "cores": os.cpu_count(), "when": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                      time.gmtime())})
        width = max(len(k) for k, _ in table)
        self.stdout.write(f"\n{name}  ({connection.vendor}, {os.cpu_count()} cores)")
        self.stdout.write("-" * (width + 24))
        for key, value in table:
            self.stdout.write(f"{key:<{width}}  {value}")
        if opts.get("json_out"):
            out = Path(opts["json_out"])
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(result, indent=2, default=str))
            self.stdout.write(f"\nwrote {out}")
