"""mixed: web users while ingest runs. The ingest-small workload (bulk API and PDRs to two
verified copies) is timed alone, then again while N scientists use the portal (locust,
bench/mixed_locustfile.py: search, granule pages, cart, HTTPS orders watched until ready and
downloaded with their MD5 checked); web p50/p95/p99 per request kind and overall over that
window, errors, and the ingest rate under load as a ratio of the solo rate of the same run.

Granary runs as in ingest-small (gunicorn and prefork Celery workers as subprocesses, bench/
live.py), with a distribution worker for the orders, on one machine shared with locust.
The users find a catalog: synthetic granules (bench/synthetic.py, loaded as in the search
bench) and orderable ones ingested for real before the clock starts (small random files;
some released from the cache so their orders wait for a recall). Each user has a session the
bench made (cookie and CSRF token), as the browser has after logging in.

Goals: web p95 <= 300 ms, 0 errors, ingest under load >= 0.8 of its solo rate.
"""
import hashlib
import json
import math
import os
import random
import secrets
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from importlib import import_module
from pathlib import Path

from django.conf import settings

from . import ingest_small, live
from .mixed_timeline import Timeline

NAME = "mixed"
HELP = "100 portal users (locust) while ingest-small runs: web p95 and ingest rate vs solo"
GOAL_P95_MS = 300
GOAL_RATIO = 0.8
LOCUSTFILE = Path(__file__).with_name("mixed_locustfile.py")
ORDERABLE_START = datetime(2026, 10, 1, tzinfo=UTC)
# The workers of ingest-small, and one for orders (refreshes, recalls asked for): the same
# processes in both phases, so the solo rate is taken with the same machine set.
WORKERS = (*live.WORKERS, ("distribution", "distribution", ["--pool", "prefork",
                                                           "--concurrency", "1"]))


def add_arguments(parser):
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--spawn-rate", type=float, default=20, help="users started per second")
    parser.add_argument("--granules", type=int, default=2000,
                        help="ingest-small granules per way in, per phase")
    parser.add_argument("--pdr-granules", type=int, default=1000, help="granules per PDR")
    parser.add_argument("--catalog", type=int, default=20_000,
                        help="synthetic granules to search (bench/synthetic.py)")
    parser.add_argument("--orderable", type=int, default=300,
                        help="granules ingested for real before the clock, which users order")
    parser.add_argument("--tape-share", type=float, default=0.2,
                        help="of the orderable granules, released from the cache (recalled)")
    parser.add_argument("--max-file-kib", type=int, default=1024,
                        help="orderable files are 4 KiB to this")
    parser.add_argument("--think-s", default="2,8",
                        help="a user's pause between actions, min,max seconds")
    parser.add_argument("--order-weight", type=int, default=1,
                        help="how often a user orders, against 6 searches, 3 granule pages "
                             "and 1 look at the orders list")
    parser.add_argument("--warmup-s", type=float, default=10,
                        help="users run this long after the last has started, before the clock")
    parser.add_argument("--min-seconds", type=float, default=0,
                        help="the users' measured window lasts at least this long")
    parser.add_argument("--stop-timeout-s", type=float, default=120,
                        help="after the window, users finish their task (an order under way "
                             "is followed to its end) for up to this long")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--provider-pool", type=int, choices=(0, 1), default=1,
                        help="1: the provider API on a gunicorn of its own, as deploy/ runs "
                             "it; 0: one pool for users and providers alike")
    parser.add_argument("--timeline", action="store_true",
                        help="also sample the pipeline's granule states every 0.1 s in both "
                             "phases (a query each) and keep the series in the JSON")


# --- the catalog and the users


def make_users(n):
    """n users, each with a session as a login leaves it (and a CSRF token): the portal's
    credentials. Passwords are never used, so the cheapest hasher saves a minute of PBKDF2."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.test import override_settings

    from backend.accounts import roles
    from backend.accounts.services import create_user

    engine = import_module(settings.SESSION_ENGINE)
    out = []
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        for i in range(n):
            user, _, _ = create_user(f"scientist-{i:03d}", roles.USER)
            session = engine.SessionStore()
            session[SESSION_KEY] = str(user.pk)
            session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
            session[HASH_SESSION_KEY] = user.get_session_auth_hash()
            session.create()
            out.append({"username": user.username, "session": session.session_key,
                        "csrf": secrets.token_hex(16)})
    return out


def orderable_body(collection, area, n, max_bytes, rng):
    """n granules of one random file each (4 KiB to max_bytes) staged under area/orderable,
    spread over ten days and the globe, with day/night and cloud cover: a bulk request body."""
    folder = area / "orderable"
    folder.mkdir(parents=True, exist_ok=True)
    granules = []
    for i in range(n):
        data = os.urandom(rng.randint(4096, max(4096, max_bytes)))
        name = f"ORD{i:05d}.nc"
        (folder / name).write_bytes(data)
        start = ORDERABLE_START + timedelta(minutes=rng.randrange(10 * 1440))
        west, south = rng.uniform(-180, 140), rng.uniform(-80, 40)
        granules.append({
            "collection": collection.key, "granule_id": f"ORD{i:05d}",
            "temporal": {"start": start.isoformat(),
                         "end": (start + timedelta(minutes=5)).isoformat()},
            "bbox": [round(west, 2), round(south, 2), round(west + 40, 2), round(south + 40, 2)],
            "attributes": {"day_night": rng.choice(("Day", "Night")),
                           "cloud_cover": rng.randrange(100)},
            "files": [{"name": name, "path": f"orderable/{name}", "size": len(data),
                       "checksum_type": "MD5", "checksum": hashlib.md5(data).hexdigest()}]})
    return {"granules": granules}


def release_share(collection, share, rng):
    """Drop the cached files of `share` of the collection's granules: on tape only, so the
    orders that hold them wait for a recall. Returns how many granules."""
    from backend.archive import operations
    from backend.catalog.models import File

    granules = sorted(set(File.objects.filter(granule__collection=collection)
                          .values_list("granule_id", flat=True)))
    picked = rng.sample(granules, round(share * len(granules)))
    operations.release(list(File.objects.filter(granule_id__in=picked)))
    return len(picked)


# --- locust


class Users:
    """A headless locust run: started, its stats reset when the window opens, stopped when it
    closes; then its stats (--json-file), failures (--csv) and the users' checks are read."""

    def __init__(self, folder, plan, options, base_url):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "plan.json").write_text(json.dumps(plan))
        env = dict(os.environ, MIXED_PLAN=str(folder / "plan.json"),
                   MIXED_CHECKS=str(folder / "checks.json"))
        argv = [str(Path(sys.executable).with_name("locust")), "-f", str(LOCUSTFILE),
                "--headless", "--host", base_url, "-u", str(options["users"]),
                "-r", str(options["spawn_rate"]), "--csv", str(folder / "locust"),
                "--json-file", str(folder / "stats"), "--loglevel", "WARNING",
                "--exit-code-on-error", "0", "--only-summary",
                "--stop-timeout", str(options["stop_timeout_s"])]
        self.log = open(folder / "locust.log", "wb")
        self.proc = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def check(self):
        if self.proc.poll() is not None:
            raise RuntimeError(f"locust exited ({self.proc.returncode}):\n{self.tail()}")

    def tail(self):
        return (self.folder / "locust.log").read_text(errors="replace")[-4000:]

    def started(self):
        """Whether every user has started."""
        self.check()
        return (self.folder / "checks.json.started").exists()

    def reset(self):
        self.check()
        self.proc.send_signal(signal.SIGUSR1)

    def close_window(self):
        """The stats of the window so far go to a file (see the locustfile)."""
        self.check()
        window = self.folder / "checks.json.window.json"
        self.proc.send_signal(signal.SIGUSR2)
        deadline = time.monotonic() + 60
        while not window.exists() and time.monotonic() < deadline:
            time.sleep(0.1)

    def stop(self, timeout):
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=timeout + 60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    def results(self):
        stats_file, checks_file = self.folder / "stats.json", self.folder / "checks.json"
        window_file = self.folder / "checks.json.window.json"
        if not all(f.exists() for f in (stats_file, checks_file, window_file)):
            raise RuntimeError(f"locust wrote no stats:\n{self.tail()}")
        failures = []
        failures_csv = self.folder / "locust_failures.csv"
        if failures_csv.exists():
            import csv

            with open(failures_csv, newline="") as f:
                failures = [{"method": r["Method"], "name": r["Name"], "error": r["Error"],
                             "occurrences": int(r["Occurrences"])} for r in csv.DictReader(f)]
        return (json.loads(window_file.read_text())["stats"], json.loads(stats_file.read_text()),
                json.loads(checks_file.read_text()), failures)


def histogram_percentile(histogram, q):
    """Nearest-rank percentile (q in 0..100) of {value: count}."""
    if not histogram:
        return None
    total = sum(histogram.values())
    rank, seen = max(1, math.ceil(q / 100 * total)), 0
    for value in sorted(histogram):
        seen += histogram[value]
        if seen >= rank:
            return value
    return max(histogram)


def latency(entries):
    """Per request kind and overall: requests, failures, p50/p95/p99/max ms (locust keeps
    response times rounded to 2 significant digits above 100 ms)."""
    kinds, overall = {}, {}
    for entry in entries:
        if entry["method"] == "CHECK":      # a failed step, not a request: no time to count
            row = kinds.setdefault(entry["name"], {"requests": 0, "failures": 0, "_h": {}})
            row["failures"] += entry["num_failures"]
            continue
        histogram = {int(float(k)): v for k, v in entry["response_times"].items()}
        row = kinds.setdefault(entry["name"], {"requests": 0, "failures": 0, "_h": {}})
        row["requests"] += entry["num_requests"]
        row["failures"] += entry["num_failures"]
        for value, count in histogram.items():
            row["_h"][value] = row["_h"].get(value, 0) + count
            overall[value] = overall.get(value, 0) + count
    out = {}
    for name in sorted(kinds):
        row = kinds[name]
        histogram = row.pop("_h")
        out[name] = {**row, **{f"p{q}_ms": histogram_percentile(histogram, q)
                               for q in (50, 95, 99)},
                     "max_ms": max(histogram) if histogram else None}
    total = {"requests": sum(r["requests"] for r in out.values()),
             "failures": sum(r["failures"] for r in out.values()),
             **{f"p{q}_ms": histogram_percentile(overall, q) for q in (50, 95, 99)},
             "max_ms": max(overall) if overall else None}
    return out, total


# --- the run


class _Noted:
    """The live client, its provider calls noted on a timeline."""

    def __init__(self, web, timeline):
        self.web, self.timeline = web, timeline

    def call(self, *args, **kwargs):
        return self.timeline.call(self.web, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.web, name)


def _phase(web, work, extra=None, states=False):
    """Send `work` through both ways in; its timings, rates, the CPU each process used, and
    the timeline of the phase (bench/mixed_timeline.py)."""
    before = web.cpu_seconds()
    extra_before = {k: live.tree_cpu(pid) for k, pid in (extra or {}).items()}
    timeline = Timeline({**{k: p.pid for k, p in web.procs.items()}, **(extra or {})},
                        states=states).start()
    started = time.perf_counter()
    times = ingest_small.through_both(_Noted(web, timeline), work)
    wall = time.perf_counter() - started
    noted = timeline.stop()
    after = web.cpu_seconds()
    cpu = {k: round(after[k] - before.get(k, 0), 2) for k in after}
    cpu.update({k: round(live.tree_cpu(pid) - extra_before[k], 2)
                for k, pid in (extra or {}).items()})
    n = len(work[0]["granules"])
    return {"seconds": round(wall, 3), "bulk_s": round(times["bulk_s"], 3),
            "pdr_s": round(times["pdr_s"], 3),
            "bulk_accepted_s": round(times["bulk_accepted_s"], 3),
            "pdr_accepted_s": round(times["pdr_accepted_s"], 3),
            "bulk_granules_per_s": round(n / times["bulk_s"], 1),
            "pdr_granules_per_s": round(n / times["pdr_s"], 1),
            "granules_per_s": round(2 * n / (times["bulk_s"] + times["pdr_s"]), 1),
            "cpu_s": cpu, "timeline": noted,
            **({"series": timeline.series()} if states else {})}


def order_counts():
    """Orders by state, and order items whose file was recalled from tape for them."""
    from django.db.models import Count

    from distribution.models import Order, OrderItem

    states = dict(Order.objects.values("state").annotate(n=Count("pk")).values_list("state", "n"))
    recalled = OrderItem.objects.filter(recall_request_id__isnull=False,
                                        state=OrderItem.State.READY).count()
    return {"by_state": states, "items_recalled": recalled}


def users_cpu(alone, loaded, overall, kinds):
    """The users' CPU per request and per search page view (ms), web and database: the CPU of
    the window less that of the same ingest alone (its own web calls and queries)."""
    searches = (kinds.get("search: results") or {}).get("requests", 0)
    out = {}
    for process in ("web", "database"):
        if process not in loaded["cpu_s"]:      # SQLite: no database server to measure
            continue
        extra = max(0.0, loaded["cpu_s"][process] - alone["cpu_s"][process])
        out[process] = {
            "per_request_ms": round(1000 * extra / max(1, overall["requests"]), 1),
            "per_search_ms": round(1000 * extra / searches, 1) if searches else None}
    return out


def run(options):
    from backend.accounts.models import Provider
    from ingest.services import staging_area

    from .search import Catalog, load

    marks = {"start": time.perf_counter()}
    rng = random.Random(options["seed"])
    n, per_pdr = options["granules"], max(1, options["pdr_granules"])
    ingest, orderable = live.layout(["BENCHS", "BENCHM"])
    token = live.provider_token("BENCHS", [ingest, orderable])
    collections, load_s = load(options["catalog"], 2.0, options["seed"])
    crossing = Catalog.read().crossing
    marks["catalog_loaded"] = time.perf_counter()
    users = make_users(options["users"])
    marks["users_made"] = time.perf_counter()
    area = staging_area(Provider.objects.get(name="BENCHS"))
    orderable_work = (orderable_body(orderable, area, options["orderable"],
                                     options["max_file_kib"] << 10, rng), [])
    solo, mixed = (ingest_small.prepare(ingest, n, per_pdr, tag) for tag in ("S", "M"))
    think = [float(x) for x in options["think_s"].split(",")]
    plan = {"users": users, "collections": [c.key for c in collections] + [orderable.key],
            "catalog_span": [datetime(2019, 1, 1, tzinfo=UTC).isoformat(),
                             datetime(2021, 1, 1, tzinfo=UTC).isoformat()],
            "orderable": orderable.key,
            "orderable_span": [ORDERABLE_START.isoformat(),
                               (ORDERABLE_START + timedelta(days=10)).isoformat()],
            "think_s": think, "order_weight": options["order_weight"],
            # an order not ready by then is a failure, reported before the stop's timeout
            "order_wait_s": 0.8 * options["stop_timeout_s"]}

    with live.running(token, workers=WORKERS,
                      provider_pool=bool(options["provider_pool"])) as web:
        marks["services_up"] = time.perf_counter()
        ingest_small.through_both(web, orderable_work)
        released = release_share(orderable, options["tape_share"], rng)
        marks["orderable_archived"] = time.perf_counter()
        alone = _phase(web, solo, states=options["timeline"])
        marks["solo_done"] = time.perf_counter()
        users_run = Users(settings.DATA_ROOT / "locust", plan, options, web.base_url)
        try:
            web.wait(users_run.started, 120 + 2 * options["users"] / options["spawn_rate"],
                     "the users' start", interval=0.2)
            marks["users_started"] = time.perf_counter()
            web.wait(lambda: time.perf_counter() - marks["users_started"] > options["warmup_s"],
                     options["warmup_s"] + 60, "the warm-up", interval=0.2)
            users_run.reset()
            window = time.perf_counter()
            loaded = _phase(web, mixed, extra={"locust": users_run.proc.pid},
                            states=options["timeline"])
            while time.perf_counter() - window < options["min_seconds"]:
                users_run.check()
                time.sleep(0.2)
            users_run.close_window()
            window_s = time.perf_counter() - window
            marks["window_closed"] = time.perf_counter()
        finally:
            users_run.stop(options["stop_timeout_s"])
        marks["users_stopped"] = time.perf_counter()
        stats, final_stats, checks, failures = users_run.results()
    archived, verified = live.archived_counts(ingest)
    expected = 2 * n * 2
    if archived != expected or verified != 2 * expected:
        raise RuntimeError(f"{archived}/{expected} granules archived, {verified}/{2 * expected} "
                           "verified copies")
    kinds, overall = latency(stats)
    orders = order_counts()
    ratio = round(loaded["granules_per_s"] / alone["granules_per_s"], 3)
    # every failure counts, those of orders followed to their end after the window too
    # (locust writes its failures CSV after its JSON: a failure at the very end is only there)
    errors = max(sum(e["num_failures"] for e in final_stats),
                 sum(f["occurrences"] for f in failures)) + checks.get("task_exceptions", 0)
    goals = {"web_p95_ms": overall["p95_ms"] is not None and overall["p95_ms"] <= GOAL_P95_MS,
             "errors": errors == 0, "ingest_ratio": ratio >= GOAL_RATIO}
    result = {
        "users": options["users"], "think_s": think, "spawn_rate": options["spawn_rate"],
        "granules_per_way": n, "granules_per_pdr": per_pdr,
        "catalog_granules": options["catalog"], "catalog_load_s": round(load_s, 1),
        "antimeridian_crossing_granules": crossing,
        "orderable_granules": options["orderable"], "released_to_tape": released,
        "solo": alone, "with_users": loaded, "window_s": round(window_s, 1),
        "ingest_ratio": ratio,
        "steps_s": {step: round(t - marks["start"], 1) for step, t in marks.items()},
        "web": {"overall": overall, "kinds": kinds,
                "requests_per_s": round(overall["requests"] / window_s, 1),
                "users_cpu": users_cpu(alone, loaded, overall, kinds)},
        "errors": errors, "failures": failures, "checks": checks, "orders": orders,
        "workers": [f"{name}: -Q {queues} {' '.join(pool)}" for name, queues, pool in WORKERS],
        "web_server": "gunicorn deploy/gunicorn.conf.py, 2 processes x 4 threads (gthread)"
                      + (", the provider API on 1 process x 4 threads of its own"
                         if options["provider_pool"] else ""),
        "worker_nice": os.environ.get("GRANARY_WORKER_NICE", "10"),
        "goals": {"web_p95_ms": f"<= {GOAL_P95_MS}", "errors": "0",
                  "ingest_ratio": f">= {GOAL_RATIO}"},
        "goals_met": goals, "goal_met": all(goals.values()),
    }

    def ms(row):
        return f"{row['p50_ms']} / {row['p95_ms']} / {row['p99_ms']} ms"

    def cpu(phase):
        return ", ".join(f"{k} {v}" for k, v in phase["cpu_s"].items())

    def waits(phase):
        return ", ".join(f"{k} {v}" for k, v in phase["timeline"]["runq_wait_s"].items())

    result["table"] = [
        ("users (think time s)", f"{options['users']} ({think[0]:g}-{think[1]:g})"),
        ("catalog: synthetic + orderable (on tape)", f"{options['catalog']} + "
                                                     f"{options['orderable']} ({released})"),
        ("ingest per phase: bulk API + PDRs", f"{n} + {n} granules of 4 KB"),
        ("ingest alone", f"{alone['granules_per_s']} granules/s ({alone['seconds']} s; bulk "
                         f"{alone['bulk_granules_per_s']}, PDR {alone['pdr_granules_per_s']})"),
        ("ingest with users", f"{loaded['granules_per_s']} granules/s ({loaded['seconds']} s; "
                              f"bulk {loaded['bulk_granules_per_s']}, PDR "
                              f"{loaded['pdr_granules_per_s']})"),
        (f"ingest ratio (goal >= {GOAL_RATIO})",
         f"{ratio} {'met' if goals['ingest_ratio'] else 'NOT met'}"),
        ("web requests in the window", f"{overall['requests']} in {window_s:.1f} s "
                                       f"({result['web']['requests_per_s']}/s)"),
        *[(f"  {name}", f"{row['requests']:>6}  {ms(row)}"
           + (f"  ({row['failures']} failed)" if row["failures"] else ""))
          for name, row in kinds.items()],
        (f"web p50 / p95 / p99 (goal p95 <= {GOAL_P95_MS} ms)",
         f"{ms(overall)} {'met' if goals['web_p95_ms'] else 'NOT met'}"),
        ("errors (goal 0)", f"{errors} {'met' if goals['errors'] else 'NOT met'}"),
        ("orders placed / ready / completed", f"{checks.get('orders_placed', 0)} / "
                                              f"{checks.get('orders_ready', 0)} / "
                                              f"{checks.get('orders_completed', 0)}"),
        ("downloads MD5-verified (bytes); files recalled",
         f"{checks.get('downloads_verified', 0)} ({checks.get('download_bytes', 0)}); "
         f"{orders['items_recalled']}"),
        ("CPU s alone", cpu(alone)),
        ("CPU s with users", cpu(loaded)),
        ("run-queue wait s alone", waits(alone)),
        ("run-queue wait s with users", waits(loaded)),
        ("machine busy s alone / with users (others')", " / ".join(
            f"{p['timeline']['machine_busy_s']} ({p['timeline']['others_busy_s']})"
            for p in (alone, loaded))),
        ("users' CPU ms per request: web, database", " / ".join(
            str(row["per_request_ms"]) for row in result["web"]["users_cpu"].values())),
        ("users' CPU ms per search page: web, database", " / ".join(
            str(row["per_search_ms"]) for row in result["web"]["users_cpu"].values())),
    ]
    return result
