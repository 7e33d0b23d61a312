"""dashboard: every endpoint the operator dashboards poll, over HTTP (gunicorn) as a logged-in
operator, against a year of per-minute transfers and an archive in full work; p50/p95 each.

The goal is p95 <= 100 ms for every endpoint; the baseline is GET /api/health/ (no database
work) in the same run on the same connection. Requests go round-robin over the endpoints, one
keep-alive connection with the session cookie, as a browser tab polling them does.
"""
import http.client
import json
import math
import os
import re
import time
from datetime import timedelta
from http.cookies import SimpleCookie
from urllib.parse import urlsplit

NAME = "dashboard"
HELP = "a year of per-minute transfers and a busy archive; p50/p95 of every dashboard endpoint"
GOAL_MS = 100

# (label, path): what frontend/src/features/dashboards/api/*.ts fetch (and the layout's /me/).
# {volumes_next} and {failed_request} are filled in from the live data.
ENDPOINTS = [
    ("who am I (every page)", "/api/v1/me/"),
    ("today vs targets", "/api/v1/metrics/today/"),
    ("daily, 30 days", "/api/v1/metrics/daily/?days=30"),
    ("throughput, 48 h", "/api/v1/metrics/throughput/?hours=48"),
    ("targets", "/api/v1/metrics/targets/"),
    ("demo: synthetic history note", "/api/v1/demo/synthetic-history/"),
    ("archive board: drives", "/api/v1/archive/drives/"),
    ("archive board: cache", "/api/v1/archive/cache/"),
    ("archive board: volumes p1", "/api/v1/archive/volumes/?limit=1000"),
    ("archive board: volumes p2", "{volumes_next}"),
    ("archive board: volume groups", "/api/v1/archive/volume-groups/"),
    ("archive board: repacks", "/api/v1/archive/requests/?state=done&kind=repack&limit=200"),
    ("archive board: object store", "/api/v1/archive/buckets/board/"),
    ("queues", "/api/v1/archive/queues/"),
    ("failures: archive requests", "/api/v1/archive/requests/?state=failed&limit=200"),
    ("failures: recalls only", "/api/v1/archive/requests/?state=failed&kind=recall&limit=200"),
    ("failures: ingest requests", "/api/v1/ingest/requests/?limit=200"),
    ("failures: failed granules", "/api/v1/ingest/requests/{failed_request}/?state=failed"),
    ("failures: latest reconciliation", "/api/v1/archive/reconciliation/?limit=1"),
    ("failures: grouped by reason", "/api/v1/console/failures/groups/"),
    ("failures: dead letters", "/api/v1/console/dead-letter/?limit=50"),
    ("overview: worst collections", "/api/v1/completeness/worst/"),
    ("console: granules, newest first",
     "/api/v1/console/granules/?limit=25&ordering=-created_at"),
    ("console: granule state counts", "/api/v1/console/granules/counts/"),
    ("console: one collection's granules",
     "/api/v1/console/granules/?collection=MOD021KM.061&limit=25&ordering=-created_at"),
    ("console: one collection's counts",
     "/api/v1/console/granules/counts/?collection=MOD021KM.061"),
]
BASELINE = ("baseline: health", "/api/health/")


def add_arguments(parser):
    parser.add_argument("--days", type=int, default=365,
                        help="days of per-minute transfers (and of the granules' arrival)")
    parser.add_argument("--granules", "--files", dest="files", type=int, default=200_000,
                        help="granules (one file each) behind the cache, requests and ingest")
    parser.add_argument("--volumes-per-silo", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=120, help="timed requests per endpoint")
    parser.add_argument("--warmup", type=int, default=10, help="untimed requests per endpoint")
    parser.add_argument("--passes", type=int, default=1,
                        help="timing passes over the same load (each its own table)")


def reuse_key(options):
    """What a kept database holds (bench --reuse)."""
    return f"{options['days']}_{options['files']}_{options['volumes_per_silo']}"


def percentile(values, p):
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


class Browser:
    """One keep-alive connection carrying the operator's session cookie."""

    def __init__(self, base_url):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port
        self.cookies = SimpleCookie()
        self.connection = None
        self.reconnects = 0

    def _send(self, method, path, body=None, headers=None):
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.host, self.port, timeout=120)
        cookie = "; ".join(f"{k}={m.value}" for k, m in self.cookies.items())
        self.connection.request(method, path, body=body, headers={
            "Accept": "application/json", "Cookie": cookie, **(headers or {})})
        answer = self.connection.getresponse()
        data = answer.read()
        for header in answer.headers.get_all("Set-Cookie") or []:
            self.cookies.load(header)
        return answer.status, data

    def call(self, method, path, body=None, headers=None):
        """(status, body bytes, seconds); a connection the server closed is opened again."""
        for attempt in (1, 2):
            started = time.perf_counter()
            try:
                status, data = self._send(method, path, body, headers)
                return status, data, time.perf_counter() - started
            except (http.client.RemoteDisconnected, ConnectionError):
                self.connection.close()
                self.connection = None
                self.reconnects += 1
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def log_in(self, username, password):
        status, data, _ = self.call("POST", "/api/v1/auth/login/",
                                    json.dumps({"username": username, "password": password}),
                                    {"Content-Type": "application/json"})
        if status != 200 or "sessionid" not in self.cookies:
            raise RuntimeError(f"the operator could not log in ({status}): {data[:300]!r}")


def _rows(body):
    """How many rows an answer carries, to show the endpoint had real work."""
    if isinstance(body, list):
        return len(body)
    for key in ("results", "granules", "days", "hours"):
        if isinstance(body, dict) and isinstance(body.get(key), list):
            return len(body[key])
    return 1


def resolve(browser, failed_request):
    """The endpoints with their placeholders filled from the live data (no second volumes page
    when every volume fits the first)."""
    status, data, _ = browser.call("GET", "/api/v1/archive/volumes/?limit=1000")
    following = json.loads(data).get("next") if status == 200 else None
    parts = urlsplit(following or "")
    values = {"volumes_next": f"{parts.path}?{parts.query}", "failed_request": failed_request}
    return [(label, path.format(**values)) for label, path in ENDPOINTS
            if following or "{volumes_next}" not in path]


def measure(browser, endpoints, warmup, rounds):
    """Round-robin over the endpoints: warm-up, then `rounds` timed requests each."""
    for _ in range(warmup):
        for _, path in endpoints:
            browser.call("GET", path)
    seconds = {path: [] for _, path in endpoints}
    shapes = {}
    for _ in range(rounds):
        for label, path in endpoints:
            status, data, took = browser.call("GET", path)
            if status != 200:
                raise RuntimeError(f"{label}: GET {path} answered {status}: {data[:300]!r}")
            seconds[path].append(took)
            if path not in shapes:
                shapes[path] = (_rows(json.loads(data)), len(data))
    out = {}
    for label, path in endpoints:
        ms = [s * 1000 for s in seconds[path]]
        rows, size = shapes[path]
        out[label] = {"path": path, "p50_ms": round(percentile(ms, 50), 2),
                      "p95_ms": round(percentile(ms, 95), 2), "max_ms": round(max(ms), 2),
                      "requests": len(ms), "rows": rows, "bytes": size}
    return out


def _analyze():
    """Fresh planner statistics and visibility maps after the bulk load (autovacuum would get
    there later; index-only scans need the maps)."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")


def _loaded():
    """The transfer counts of a reused database (--reuse: loaded by an earlier run)."""
    from backend.metrics.models import TransferRecord, TransferRollup

    return {"records": TransferRecord.objects.count(),
            "rollup_rows": TransferRollup.objects.count()}


def _loaded_archive():
    """The archive counts of a reused database, as load_archive would have answered them."""
    from django.db.models import Count, Sum

    from backend.archive.models import ArchiveRequest, CacheEntry, Drive, Volume
    from backend.catalog.models import Granule
    from ingest.models import IngestRequest

    by_state = dict(ArchiveRequest.objects.order_by().values_list("state")
                    .annotate(n=Count("pk")))
    return {"drives": Drive.objects.count(), "volumes": Volume.objects.count(),
            "granules": Granule.objects.count(),
            "granule_bytes": Granule.objects.aggregate(b=Sum("total_size"))["b"],
            "cache_entries": CacheEntry.objects.count(),
            "archive_requests": sum(by_state.values()), "archive_requests_by_state": by_state,
            "ingest_requests": IngestRequest.objects.count(),
            "ingest_requests_with_failures": IngestRequest.objects.filter(
                failed_count__gt=0).count(), "reused": True}


def check_worst(repeats=5, days=7):
    """The worst collections from kept days equal a count from the granule rows (window_report,
    in Python), at one instant; with the in-process time of both ways of answering, the one
    from kept days and the one counting the whole window in SQL every poll (as before #33)."""
    from django.utils import timezone

    from backend.catalog import completeness, completeness_days
    from backend.catalog.models import Collection

    now = timezone.now()
    start = completeness_days.midnight(now.date() - timedelta(days=days - 1))
    kept = completeness_days.worst(days=days, limit=1000, now=now)["collections"]
    counted = []
    for collection in Collection.objects.filter(cadence_seconds__isnull=False):
        found, late, _ = completeness.window_report(collection, start, now, now)
        late = None if late is None else len(late)
        if found.expected or late:
            counted.append((collection.key, found.expected, found.received, len(found.gaps),
                            late))
    got = [(r["collection"], r["expected"], r["received"], r["gaps"], r["late_count"])
           for r in kept]
    if sorted(got) != sorted(counted):
        raise RuntimeError(f"worst collections from kept days {got} differ from the count "
                           f"from granules {counted}")

    def timed(answer):
        ms = []
        for _ in range(repeats):
            began = time.perf_counter()
            answer()
            ms.append((time.perf_counter() - began) * 1000)
        return round(percentile(ms, 50), 1)

    collections = list(Collection.objects.filter(cadence_seconds__isnull=False))
    return {"collections": len(got), "equal_to_brute_force": True,
            "kept_days_p50_ms": timed(lambda: completeness_days.worst(days=days)),
            "whole_window_p50_ms": timed(lambda: [completeness.window_segment(
                c, start, timezone.now(), timezone.now()) for c in collections])}


def _summary(timings, load_before, load_after):
    """One timing pass: its endpoints, the baseline apart, the worst p95 and the load."""
    baseline = timings.pop(BASELINE[0])
    worst = max(timings, key=lambda label: timings[label]["p95_ms"])
    return {"endpoints": timings,
            "baseline": {"path": BASELINE[1], "p50_ms": baseline["p50_ms"],
                         "p95_ms": baseline["p95_ms"], "rows": baseline["rows"]},
            "load_average_1min": {"before": round(load_before[0], 2),
                                  "after": round(load_after[0], 2)},
            "p95_ms_max": timings[worst]["p95_ms"], "p95_ms_max_endpoint": worst}


def _pass_table(n, of, run_, requests):
    """The table rows of one timing pass."""
    title = f"pass {n} of {of}: " if of > 1 else ""
    load = run_["load_average_1min"]
    rows = [(f"{title}machine load (1-min average) before / after timing",
             f"{load['before']:.2f} / {load['after']:.2f} on {os.cpu_count()} cores"),
            (f"{title}endpoint ({requests} timed requests each)", "p50 ms    p95 ms   rows")]
    baseline = dict(run_["baseline"], path=BASELINE[1])
    for label, t in [*run_["endpoints"].items(), (BASELINE[0], baseline)]:
        rows.append((f"{label}  GET {re.sub('cursor=[^&]+', 'cursor=...', t['path'])}",
                     f"{t['p50_ms']:7.1f}  {t['p95_ms']:8.1f}  {t['rows']:5}"))
    rows.append((f"{title}p95 max (goal <= {GOAL_MS} ms)",
                 f"{run_['p95_ms_max']:.1f} ms ({run_['p95_ms_max_endpoint']})"))
    return rows


def run(options):
    from django.db import connection
    from django.utils import timezone

    from backend.accounts import roles
    from backend.accounts.services import create_user
    from backend.catalog.models import Granule
    from ingest.models import IngestRequest

    from . import dashboard_data as data
    from . import dashboard_sql, live

    started = time.perf_counter()
    if options.get("reuse") and connection.vendor == "postgresql" and Granule.objects.exists():
        transfers, archive, transfers_s = _loaded(), _loaded_archive(), 0.0
        data.declare_cadences()
    else:
        now = timezone.now()
        world = data.make_collections()
        loader = dashboard_sql if connection.vendor == "postgresql" else data
        transfers = loader.load_transfers(options["days"], now, world["collections"])
        transfers_s = time.perf_counter() - started
        archive = loader.load_archive(world, now, options["files"],
                                      options["volumes_per_silo"], options["days"])
    _analyze()
    load_s = time.perf_counter() - started
    failed_request = (IngestRequest.objects.filter(failed_count__gt=0)
                      .order_by("-failed_count", "-id").values_list("id", flat=True).first())
    user, password, token = create_user("bench-operator", roles.OPERATOR)
    cache_gb = str(max(64, 2 * archive["granule_bytes"] // 2**30))
    with live.running(token, extra_env={"GRANARY_CACHE_GB": cache_gb}, workers=()) as web:
        browser = Browser(web.base_url)
        browser.log_in(user.username, password)
        endpoints = resolve(browser, failed_request)
        passes = []
        for _ in range(options["passes"]):
            load_before = os.getloadavg()
            timings = measure(browser, [*endpoints, BASELINE], options["warmup"],
                              options["requests"])
            passes.append(_summary(timings, load_before, os.getloadavg()))
    worst_check = check_worst()
    result = {
        "days": options["days"], "records": transfers["records"],
        "rollup_rows": transfers["rollup_rows"], "archive": archive,
        "transfers_load_s": round(transfers_s, 1), "load_s": round(load_s, 1),
        "loaded_with": "SQL over generate_series, indexes built after (PostgreSQL) / "
                       "executemany with roll-ups from rollup.tally (SQLite)",
        "requests_per_endpoint": options["requests"], "warmup_per_endpoint": options["warmup"],
        "reconnects": browser.reconnects, **passes[0], "passes": passes,
        "p95_ms_max": max(p["p95_ms_max"] for p in passes),
        "goals": {"p95_ms_max": f"<= {GOAL_MS}"}, "worst_collections_check": worst_check,
    }
    by_state = archive["archive_requests_by_state"]
    table = [
        ("transfer records (per minute x 4 directions)",
         f"{transfers['records']:,} over {options['days']} days, {len(data.COLLECTIONS)} "
         f"collections; {transfers['rollup_rows']:,} roll-up rows ({transfers_s:.0f} s)"),
        ("archive", f"2 silos, {archive['drives']} drives, {archive['volumes']:,} volumes, "
                    f"{archive['granules']:,} granules, {archive['cache_entries']:,} in cache"),
        ("archive and ingest requests",
         f"{archive['archive_requests']:,} archive ({by_state.get('queued', 0):,} queued, "
         f"{by_state.get('running', 0)} running, {by_state.get('failed', 0)} failed); "
         f"{archive['ingest_requests']:,} ingest, {archive['ingest_requests_with_failures']} "
         "with failed granules"),
        ("everything loaded in", "reused the last run's database (--reuse); vacuumed in "
                                 f"{load_s:.0f} s" if archive.get("reused") else f"{load_s:.0f} s"),
    ]
    for n, run_ in enumerate(passes, start=1):
        table += _pass_table(n, len(passes), run_, options["requests"])
    table.append(("worst collections: kept days = count from granules (brute force)",
                  f"yes, {worst_check['collections']} collections; in process p50 "
                  f"{worst_check['kept_days_p50_ms']} ms from kept days vs "
                  f"{worst_check['whole_window_p50_ms']} ms counting the whole window"))
    result["table"] = table
    return result
