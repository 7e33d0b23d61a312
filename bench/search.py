"""search: STAC item search over many granules, through gunicorn as in production.

Loads N synthetic granules (swaths crossing the antimeridian, daily tiles, 16-day composites,
over years; two files each), then times GET and POST /stac/search with bbox + datetime +
collections and limit 100 over varied queries, each next to a request that touches no table
(GET /stac/conformance) on the same connection: the baseline the search latency is set
against. A few first pages are compared with a brute-force scan of the loaded granules, and
some queries follow their `next` link (keyset paging: page 2 should cost what page 1 does);
the checked queries' second pages are compared too. With --reuse (PostgreSQL) the loaded
database is kept for the next run with the same --granules, --years and --seed.

The figure to beat: a Django/PostGIS STAC server reports 76 ms at 100k items; goal p95 <= 50 ms.
"""
import http.client
import json
import math
import random
import time
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlencode, urlsplit

import numpy as np

from backend.catalog.geo import BBox

from . import synthetic

NAME = "search"
HELP = "p50/p95 of STAC /stac/search (bbox+datetime+collections, limit 100) over N granules"
LIMIT = 100
GOAL_P95_MS = 50


def add_arguments(parser):
    parser.add_argument("--granules", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=400, help="timed, after the warm-up")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--years", type=float, default=5.0, help="time the granules span")
    parser.add_argument("--check", type=int, default=10,
                        help="first and second pages compared with a brute-force scan")
    parser.add_argument("--seed", type=int, default=1)


def reuse_key(options):
    """What a kept database holds (bench --reuse)."""
    return f"{options['granules']}_{options['years']:g}_{options['seed']}".replace(".", "p")


@dataclass(frozen=True)
class Query:
    method: str
    collections: tuple
    bbox: tuple
    datetime: str

    def params(self):
        return {"collections": ",".join(self.collections),
                "bbox": ",".join(f"{v:g}" for v in self.bbox),
                "datetime": self.datetime, "limit": str(LIMIT)}

    def body(self):
        return {"collections": list(self.collections), "bbox": list(self.bbox),
                "datetime": self.datetime, "limit": LIMIT}


def _rfc3339(value):
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def make_queries(count, keys, first, last, seed=1):
    """Varied searches: one collection (sometimes two), boxes of 2 to 60 degrees (some across
    the antimeridian), windows of an hour to a year (some open-ended, some instants);
    GET and POST alternate."""
    rng = random.Random(seed)
    span = (last - first).total_seconds()
    queries = []
    for i in range(count):
        collections = tuple(rng.sample(keys, 2 if rng.random() < 0.2 else 1))
        bbox = synthetic.area_of_interest(rng, (2, 60), (2, 40), (-60, 75), 0.15)
        length = math.exp(rng.uniform(math.log(3600), math.log(365 * 86400)))
        start = first + timedelta(seconds=rng.uniform(0, max(0.0, span - length)))
        end = start + timedelta(seconds=length)
        kind = rng.random()
        if kind < 0.05:
            text = f"../{_rfc3339(end)}"
        elif kind < 0.10:
            text = f"{_rfc3339(start)}/.."
        elif kind < 0.15:
            text = _rfc3339(start)
        else:
            text = f"{_rfc3339(start)}/{_rfc3339(end)}"
        queries.append(Query("GET" if i % 2 == 0 else "POST", collections, bbox, text))
    return queries


class Catalog:
    """What was loaded, read back from the table in id order (columns as numpy arrays), for
    the brute-force check."""

    COLUMNS = ("id", "collection_id", "temporal_start", "temporal_end", "west", "south", "east",
               "north")

    def __init__(self, columns):
        self.pk, self.collection, self.start, self.end, *box = columns
        self.west, self.south, self.east, self.north = box
        self.crossing = int(np.count_nonzero(self.west > self.east))

    @classmethod
    def read(cls):
        """Every granule's columns: a binary COPY on PostgreSQL (seconds for ten million
        rows), the ORM elsewhere."""
        from django.db import connection

        from backend.catalog.models import Granule

        if connection.vendor != "postgresql":
            rows = Granule.objects.order_by("pk").values_list(*cls.COLUMNS)
            columns = list(zip(*((*r[:2], r[2].timestamp(), r[3].timestamp(), *r[4:])
                                 for r in rows), strict=True)) or [()] * len(cls.COLUMNS)
            return cls([np.array(c, dtype=float) for c in columns])
        select = ", ".join(f"extract(epoch from {c})::float8" if c.startswith("temporal")
                           else f"{c}::float8" for c in cls.COLUMNS)
        data = bytearray()
        with connection.cursor() as cursor, cursor.cursor.copy(
                f"COPY (SELECT {select} FROM catalog_granule ORDER BY id) TO STDOUT "
                "(FORMAT binary)") as copy:
            for block in copy:
                data += block
        # a 19-byte header, rows of (count, then length and value per column), a 2-byte end
        row = np.dtype([("count", ">i2")] + [(f"{k}{i}", t) for i in range(len(cls.COLUMNS))
                                             for k, t in (("length", ">i4"), ("value", ">f8"))])
        rows = np.frombuffer(bytes(data[19:-2]), dtype=row)
        if not ((rows["count"] == len(cls.COLUMNS)).all() and all(
                (rows[f"length{i}"] == 8).all() for i in range(len(cls.COLUMNS)))):
            raise RuntimeError("a loaded granule has an empty time or box column")
        return cls([rows[f"value{i}"].astype(float) for i in range(len(cls.COLUMNS))])

    def pages(self, query, collection_pks, count=None):
        """Primary keys of the first `count` (default two pages) matches, newest first, ties
        by id descending, by a scan: collection and time overlap over every granule, then
        geo.BBox.intersects on each in that order until `count` have met the box."""
        from backend.catalog.stac_search import parse_datetime_interval

        start, end = parse_datetime_interval(query.datetime)
        lo = start.timestamp() if start else -math.inf
        hi = end.timestamp() if end else math.inf
        chosen = np.nonzero(np.isin(self.collection, collection_pks) & (self.start <= hi)
                            & (self.end >= lo))[0]
        chosen = chosen[np.lexsort((-self.pk[chosen], -self.start[chosen]))]
        box, hits, count = BBox(*query.bbox), [], count or 2 * LIMIT
        for i in chosen:
            if box.intersects(BBox(self.west[i], self.south[i], self.east[i], self.north[i])):
                hits.append(int(self.pk[i]))
                if len(hits) == count:
                    break
        return hits


class Client:
    """One keep-alive HTTP connection, timing each request until its body is read."""

    def __init__(self, base_url):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)

    def call(self, method, path, body=None):
        headers = {"Accept": "application/geo+json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):
            try:
                started = time.perf_counter()
                self.conn.request(method, path, body=data, headers=headers)
                answer = self.conn.getresponse()
                payload = answer.read()
                return answer.status, time.perf_counter() - started, payload
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()        # the server closed an idle keep-alive: not timed
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self):
        self.conn.close()


def percentile(values, q):
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def search(client, query):
    """(status, seconds, answer) for one search as GET or POST."""
    if query.method == "GET":
        status, seconds, payload = client.call("GET", "/stac/search?" + urlencode(query.params()))
    else:
        status, seconds, payload = client.call("POST", "/stac/search", query.body())
    answer = json.loads(payload)
    if status != 200:
        raise RuntimeError(f"{query} answered {status}: {answer}")
    return seconds, answer


def next_page(client, query, answer):
    """(seconds, answer) of the page after `answer`, or None when it has no next link."""
    link = next((x for x in answer["links"] if x["rel"] == "next"), None)
    if link is None:
        return None
    if link.get("method", "GET") == "POST":
        status, seconds, payload = client.call("POST", "/stac/search",
                                               {**query.body(), **link["body"]})
    else:
        parts = urlsplit(link["href"])
        status, seconds, payload = client.call("GET", f"{parts.path}?{parts.query}")
    if status != 200:
        raise RuntimeError(f"the next page of {query} answered {status}: {payload[:300]}")
    return seconds, json.loads(payload)


def load(n, years, seed):
    """Collections for the synthetic products and n granules in them; returns
    (collections, seconds)."""
    from backend.catalog.models import Collection

    from .loading import load_synthetic

    collections = [Collection.objects.create(short_name=p.short_name, version="1",
                                             title=f"bench {p.kind}", platform="Terra")
                   for p in synthetic.PRODUCTS]
    started = time.perf_counter()
    load_synthetic(collections, n, years, seed)
    return collections, time.perf_counter() - started


def loaded(n):
    """The synthetic collections of a kept database, if it holds all `n` granules (else an
    error: a load was cut short), or None when it is empty."""
    from backend.catalog.models import Collection, Granule

    names = [p.short_name for p in synthetic.PRODUCTS]
    found = {c.short_name: c for c in Collection.objects.filter(short_name__in=names)}
    if not found:
        return None
    if len(found) != len(names) or Granule.objects.count() != n:
        raise RuntimeError("the kept database holds a cut-short load: drop it and run again")
    return [found[name] for name in names]


def measure(base_url, queries, warmup, every_next=1):
    """Time `queries` (after `warmup` of them), each next to a baseline request, and the
    next page of every `every_next`-th one that has one."""
    client = Client(base_url)
    times = {"search": [], "GET": [], "POST": [], "next": [], "baseline": []}
    returned = []
    try:
        for i, query in enumerate(queries):
            seconds, answer = search(client, query)
            status, base_seconds, _ = client.call("GET", "/stac/conformance")
            if status != 200:
                raise RuntimeError(f"/stac/conformance answered {status}")
            if i < warmup:
                continue
            times["search"].append(seconds)
            times[query.method].append(seconds)
            times["baseline"].append(base_seconds)
            returned.append(answer["numberReturned"])
            if i % every_next == 0:
                following = next_page(client, query, answer)
                if following is not None:
                    times["next"].append(following[0])
    finally:
        client.close()
    return times, returned


def check(base_url, queries, catalog, collections):
    """Compare first pages, and the second pages their next links lead to, with the
    brute-force scan; returns (first pages agreeing, second pages compared, agreeing). A
    second page is compared wherever the scan or the search finds one."""
    from backend.catalog.models import Granule

    client = Client(base_url)
    pks = {c.key: c.pk for c in collections}
    agreed = compared = agreed_next = 0
    try:
        for query in queries:
            _, answer = search(client, query)
            expected = catalog.pages(query, [pks[key] for key in query.collections])
            names = dict(Granule.objects.filter(pk__in=expected).values_list("pk", "granule_id"))
            expected = [names[pk] for pk in expected]
            agreed += expected[:LIMIT] == [f["id"] for f in answer["features"]]
            following = next_page(client, query, answer)
            if following is None and len(expected) <= LIMIT:
                continue
            compared += 1
            if following is not None:
                agreed_next += expected[LIMIT:] == [f["id"] for f in following[1]["features"]]
    finally:
        client.close()
    return agreed, compared, agreed_next


def run(options):
    from . import live

    n = options["granules"]
    collections = loaded(n) if options.get("reuse") else None
    load_s = None
    if collections is None:
        collections, load_s = load(n, options["years"], options["seed"])
    catalog = Catalog.read()
    keys = [c.key for c in collections]
    last = synthetic.EPOCH + timedelta(days=365.25 * options["years"])
    queries = make_queries(options["warmup"] + options["queries"], keys, synthetic.EPOCH, last,
                           options["seed"])
    checked = make_queries(options["check"], keys, synthetic.EPOCH, last, options["seed"] + 1)
    token = live.provider_token(f"BENCHQ{int(time.time())}", collections)
    with live.running(token, workers=()) as web:
        times, returned = measure(web.base_url, queries, options["warmup"])
        agreed, compared, agreed_next = check(web.base_url, checked, catalog, collections)

    def ms(values, q):
        return round(1000 * percentile(values, q), 2) if values else None

    p50, p95 = ms(times["search"], 50), ms(times["search"], 95)
    base50, base95 = ms(times["baseline"], 50), ms(times["baseline"], 95)
    full = sum(1 for r in returned if r == LIMIT)
    result = {
        "granules": n, "collections": keys, "years": options["years"],
        "antimeridian_crossing_granules": catalog.crossing,
        "load_s": load_s and round(load_s, 1),
        "load_granules_per_s": load_s and round(n / load_s), "reused": load_s is None,
        "queries": len(times["search"]), "warmup": options["warmup"], "limit": LIMIT,
        "p50_ms": p50, "p95_ms": p95, "p99_ms": ms(times["search"], 99),
        "max_ms": ms(times["search"], 100),
        "get_p95_ms": ms(times["GET"], 95), "post_p95_ms": ms(times["POST"], 95),
        "next_page_requests": len(times["next"]), "next_page_p95_ms": ms(times["next"], 95),
        "baseline": "GET /stac/conformance (no query), same connection, interleaved",
        "baseline_p50_ms": base50, "baseline_p95_ms": base95,
        "ratio_p95_to_baseline": round(p95 / base95, 2) if base95 else None,
        "returned_mean": round(sum(returned) / max(1, len(returned)), 1),
        "full_pages": full,
        "brute_force_checked": len(checked), "brute_force_agreed": agreed,
        "brute_force_next_compared": compared, "brute_force_next_agreed": agreed_next,
        "goals": {"p95_ms": f"<= {GOAL_P95_MS}", "next_page_p95_ms": f"<= {GOAL_P95_MS}",
                  "brute_force": "every compared page equal"},
        "goal_met": (p95 is not None and p95 <= GOAL_P95_MS
                     and (not times["next"] or ms(times["next"], 95) <= GOAL_P95_MS)
                     and agreed == len(checked) and agreed_next == compared),
    }
    result["table"] = [
        ("granules (2 files each)", f"{n} in {len(keys)} collections over "
                                    f"{options['years']:g} years"),
        ("  crossing the antimeridian", f"{catalog.crossing}"),
        ("load (COPY, indexes built after, VACUUM ANALYZE)",
         "reused (--reuse)" if load_s is None else f"{load_s:.1f} s ({n / load_s:.0f} granules/s)"),
        ("timed searches (half GET, half POST)", f"{len(times['search'])} after "
                                                 f"{options['warmup']} warm-up, limit {LIMIT}"),
        ("items returned per search", f"mean {result['returned_mean']}, {full} full pages"),
        ("search p50 / p95 / p99", f"{p50} / {p95} / {result['p99_ms']} ms"),
        ("GET p95 / POST p95", f"{result['get_p95_ms']} / {result['post_p95_ms']} ms"),
        ("next page (keyset) p95", f"{result['next_page_p95_ms']} ms over "
                                   f"{len(times['next'])} pages"),
        ("baseline GET /stac/conformance p50 / p95", f"{base50} / {base95} ms"),
        ("search p95 / baseline p95", f"{result['ratio_p95_to_baseline']}"),
        ("first pages equal to a brute-force scan", f"{agreed}/{len(checked)}"),
        ("second pages (next link) equal to it", f"{agreed_next}/{compared}"),
        (f"search and next page p95 <= {GOAL_P95_MS} ms, pages equal",
         "met" if result["goal_met"] else "NOT met"),
    ]
    return result
