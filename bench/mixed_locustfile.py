"""The scientists of `manage.py bench mixed`, for locust: each a logged-in portal user doing what
the React front end does, through the same API calls (frontend/src/lib/api/, the portal
journeys in tests/e2e/): the search page's queries, granule pages, the cart, an HTTPS
order watched until it is ready, its files downloaded by their links and checked against the
catalog's MD5, and the orders list.

Runs inside locust (gevent), so it imports no Django. The bench writes the plan it reads
(MIXED_PLAN: the server's sessions, what to search, what may be ordered) and reads back its
stats (--json-file, --csv) and the checks this file writes at the end (MIXED_CHECKS): what the
users verified, counted, not timed. SIGUSR1 resets the stats: the bench sends it when the
measured window (ingest under load) starts.
"""
import hashlib
import itertools
import json
import os
import random
import signal
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit

import gevent
from locust import HttpUser, between, events, task
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

PLAN = json.loads(open(os.environ["MIXED_PLAN"]).read()) if os.environ.get("MIXED_PLAN") else {}
CHECKS = Counter()
SESSIONS = itertools.count()
READY = ("ready", "partially_ready", "completed")
ORDER_POLL_S = 2.5          # the order page's refresh while files come back from tape
ORDER_WAIT_S = float(PLAN.get("order_wait_s", 300))
SEPARATE = os.environ.get("MIXED_SEPARATE") == "1"


@events.init.add_listener
def _on_init(environment, **_):
    """SIGUSR1 opens the measured window (the stats start again), SIGUSR2 closes it (the stats
    so far are written to MIXED_CHECKS.window.json); then SIGTERM stops the users, each after
    its current task (--stop-timeout), so an order under way is still followed to its end."""
    def reset():
        environment.runner.stats.reset_all()
        CHECKS["stats_resets"] += 1

    def snapshot():
        stats = environment.runner.stats
        with open(os.environ["MIXED_CHECKS"] + ".window.json", "w") as out:
            json.dump({"stats": stats.serialize_stats(), "errors": stats.serialize_errors()},
                      out, default=str)

    gevent.signal_handler(signal.SIGUSR1, reset)
    gevent.signal_handler(signal.SIGUSR2, snapshot)


@events.spawning_complete.add_listener
def _on_spawned(user_count, **_):
    """Tell the bench every user has started (its warm-up counts from here)."""
    CHECKS["users_started"] = user_count
    if os.environ.get("MIXED_CHECKS"):
        with open(os.environ["MIXED_CHECKS"] + ".started", "w") as out:
            out.write(str(user_count))


@events.test_stop.add_listener
def _on_test_stop(environment, **_):
    """Every user has stopped: what they verified."""
    # an exception in a task is no request: counted here so it is never lost
    exceptions = environment.runner.exceptions.values()
    CHECKS["task_exceptions"] = sum(e["count"] for e in exceptions)
    CHECKS["task_exceptions_seen"] = sorted({f"{e['msg']} at {e['traceback'][-600:]}"
                                            for e in exceptions})
    if os.environ.get("MIXED_CHECKS"):
        with open(os.environ["MIXED_CHECKS"], "w") as out:
            json.dump(dict(CHECKS), out, indent=2)


def _day(value):
    return value.strftime("%Y-%m-%d")


def _page_alone(link):
    """A next link as the search page follows it: the page alone, without `include` (the
    first page's facets and timeline stay on screen: lib/api/granules/search.ts)."""
    parts = urlsplit(link)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "include"]
    return parts._replace(query=urlencode(query)).geturl()


class Scientist(HttpUser):
    """One portal user with a session the bench made (cookie and CSRF token, as the browser
    holds them after logging in)."""

    wait_time = between(*PLAN.get("think_s", (2, 8)))

    def on_start(self):
        users = PLAN["users"]
        me = users[next(SESSIONS) % len(users)]
        self.username = me["username"]
        self.client.cookies.set("sessionid", me["session"])
        self.client.cookies.set("csrftoken", me["csrf"])
        self.csrf = me["csrf"]
        # A browser sends a request again, once, when the kept-alive connection it reused was
        # closed under it (gunicorn closes one idle for 5 s; users think for longer): a reset
        # before any answer. Nothing else is retried: every other failure counts.
        self.client.mount(self.host, HTTPAdapter(max_retries=Retry(
            total=1, connect=1, read=1, status=0, other=0, redirect=0, allowed_methods=None,
            raise_on_status=False)))
        self.rng = random.Random(hash(self.username))
        self.seen = []              # granule ids from the last results, for granule pages
        self.collections_at = None  # when the search page last asked for its collections
        self._get("/api/v1/me/", "me", check=lambda body: body["username"] == self.username)
        self._get("/api/v1/cart/", "cart: view")

    # --- requests as the front end's apiFetch makes them

    def _call(self, method, path, name, json_body=None, params=None, check=None):
        headers = {"Accept": "application/json"}
        if method not in ("GET", "HEAD"):
            headers["X-CSRFToken"] = self.csrf
        with self.client.request(method, path, name=name, json=json_body, params=params,
                                 headers=headers, catch_response=True) as answer:
            if not answer.ok:
                answer.failure(f"{answer.status_code}: {answer.text[:200]}")
                return None
            try:
                body = answer.json() if answer.content else None
                checked = check is None or check(body)
            except (ValueError, KeyError, TypeError) as exc:
                checked = False
                answer.failure(f"unreadable answer ({exc!r}): {answer.text[:200]}")
                return None
            if not checked:
                answer.failure(f"unexpected answer: {answer.text[:200]}")
                return None
            return body

    def _get(self, path, name, params=None, check=None):
        return self._call("GET", path, name, params=params, check=check)

    # --- what a scientist does

    def _search_state(self, collections, first, last):
        """A search as the page's address holds it: some collections (or all), a box, a
        window of days, now and then day/night or cloud cover."""
        rng = self.rng
        span = max(1, (last - first).days)
        start = first + timedelta(days=rng.randrange(span))
        end = start + timedelta(days=rng.choice((0, 1, 7, 30, 90, 365)))
        west, south = rng.uniform(-180, 150), rng.uniform(-80, 50)
        width, height = rng.uniform(5, 60), rng.uniform(5, 40)
        params = {"start": _day(start), "end": _day(end),
                  "bbox": f"{west:.1f},{south:.1f},{min(180, west + width):.1f},"
                          f"{min(90, south + height):.1f}"}
        if collections and rng.random() < 0.8:
            params["collection"] = ",".join(rng.sample(collections, 1 + (rng.random() < 0.2)))
        if rng.random() < 0.2:
            params["attr.day_night"] = rng.choice(("Day", "Night"))
        if rng.random() < 0.2:
            params["attr.cloud_cover.lt"] = str(rng.choice((10, 30, 50)))
        return params

    def _search_page(self, params, limit=20):
        """The search page's queries: its collections, asked once and again only when five
        minutes old (features/search/searchCollections.ts), and one request for the results
        page with its facets and timeline (lib/api/granules/search.ts). With MIXED_SEPARATE=1,
        the requests the page made before: collections every time, results, facets and
        timeline apart."""
        now = time.monotonic()
        if SEPARATE or self.collections_at is None or now - self.collections_at > 300:
            self._get("/api/v1/collections/", "search: collections", params={"limit": 100})
            self.collections_at = now
        if not SEPARATE:
            return self._get("/api/v1/granules/", "search: results",
                             params={**params, "limit": limit, "include": "facets,timeline"},
                             check=lambda b: "results" in b and "timeline" in b)
        facets = {k: v for k, v in params.items() if k != "collection"}
        self._get("/api/v1/granules/facets/", "search: facets", params=facets)
        page = self._get("/api/v1/granules/", "search: results",
                         params={**params, "limit": limit}, check=lambda b: "results" in b)
        self._get("/api/v1/granules/timeline/", "search: timeline",
                  params={**params, "bucket": "auto"})
        return page

    @task(6)
    def search(self):
        span = PLAN["catalog_span"]
        params = self._search_state(PLAN["collections"], datetime.fromisoformat(span[0]),
                                    datetime.fromisoformat(span[1]))
        page = self._search_page(params)
        if page:
            self.seen = [g["id"] for g in page["results"]] or self.seen
            if page.get("next") and self.rng.random() < 0.3:
                self._get(_page_alone(page["next"]), "search: next page")

    @task(3)
    def granule_page(self):
        if not self.seen:
            return self.search()
        granule = self._get(f"/api/v1/granules/{self.rng.choice(self.seen)}/", "granule page",
                            check=lambda b: "files" in b)
        if granule and granule.get("browse_url"):
            self._browse(granule)

    def _browse(self, granule):
        """The page's browse image: 200 when its file is in the cache; else 409, and the page
        says it may be on tape only (synthetic granules have no bytes at all)."""
        cached = any(f["role"] == "browse" and f["in_cache"] for f in granule["files"])
        with self.client.get(granule["browse_url"], name="granule: browse image",
                             catch_response=True) as image:
            if image.status_code == (200 if cached else 409):
                image.success()
            else:
                image.failure(f"{image.status_code} for a browse file "
                              f"{'in' if cached else 'not in'} the cache")

    @task(1)
    def orders_list(self):
        self._get("/api/v1/orders/", "orders: list", check=lambda b: "results" in b)

    @task(PLAN.get("order_weight", 1))
    def order(self):
        """Find orderable granules, put one to three in the cart, order the cart for HTTPS,
        watch the order page until it is ready, download every file by its link and check its
        MD5 against the catalog's, and see the order completed."""
        span = PLAN["orderable_span"]
        first, last = datetime.fromisoformat(span[0]), datetime.fromisoformat(span[1])
        params = {"collection": PLAN["orderable"], "start": _day(first), "end": _day(last)}
        if self.rng.random() < 0.5:
            params["attr.day_night"] = self.rng.choice(("Day", "Night"))
        page = self._search_page(params, limit=50)
        if not page or not page["results"]:
            return
        picked = self.rng.sample(page["results"], min(len(page["results"]),
                                                      self.rng.randint(1, 3)))
        ids = [g["id"] for g in picked]
        self._get(f"/api/v1/granules/{ids[0]}/", "granule page", check=lambda b: "files" in b)
        for granule in ids:          # one at a time, as the rows' "Add to cart" buttons do
            added = self._call("POST", "/api/v1/cart/", "cart: add",
                               json_body={"granules": [granule]},
                               check=lambda b, g=granule: g in [x["granule"]
                                                                for x in b["granules"]])
            if added is None:
                return
        cart = self._get("/api/v1/cart/", "cart: view", check=lambda b: b["count"] >= len(ids))
        if cart is None:
            return
        order = self._call("POST", "/api/v1/orders/", "order: place",
                           json_body={"delivery": "https"})
        if order is None:
            return
        CHECKS["orders_placed"] += 1
        CHECKS["order_files"] += len(order["items"])
        if any(i["residency"] == "tape" for i in order["items"]):
            CHECKS["orders_with_tape_files"] += 1
        self._download_when_ready(order["id"])

    def _download_when_ready(self, order_id):
        started, detail = time.monotonic(), None
        while True:
            detail = self._get(f"/api/v1/orders/{order_id}/", "order: status")
            if detail is None:
                return
            if detail["state"] in READY or detail["state"] in ("failed", "cancelled"):
                break
            if time.monotonic() - started > ORDER_WAIT_S:
                self._fail("order: ready", f"order {order_id} is {detail['state']} after "
                                           f"{ORDER_WAIT_S:.0f} s")
                return
            gevent.sleep(ORDER_POLL_S)
        if detail["state"] != "ready":
            self._fail("order: ready", f"order {order_id} ended {detail['state']}: "
                                       f"{detail.get('error')}")
            return
        CHECKS["orders_ready"] += 1
        CHECKS["order_ready_s_total"] += round(time.monotonic() - started, 3)
        links = self._get(f"/api/v1/orders/{order_id}/links/", "order: links")
        if links is None:
            return
        for link in links["links"]:
            self._download(link)
        final = self._get(f"/api/v1/orders/{order_id}/", "order: status")
        if final is not None and final["state"] == "completed":
            CHECKS["orders_completed"] += 1
        elif final is not None:
            self._fail("order: completed", f"order {order_id} is {final['state']} after every "
                                           "file was downloaded")

    def _download(self, link):
        digest = hashlib.md5()
        with self.client.get(link["url"], name="order: download", stream=True,
                             catch_response=True) as answer:
            if not answer.ok:
                answer.failure(f"{answer.status_code}: {answer.text[:200]}")
                return
            received = 0
            for block in answer.iter_content(1 << 16):
                digest.update(block)
                received += len(block)
            if link["checksum_type"] != "MD5" or digest.hexdigest() != link["checksum"] \
                    or received != link["size"]:
                CHECKS["downloads_mismatched"] += 1
                answer.failure(f"{link['name']}: {received} bytes, MD5 {digest.hexdigest()}; "
                               f"the catalog says {link['size']}, {link['checksum']}")
                return
        CHECKS["downloads_verified"] += 1
        CHECKS["download_bytes"] += received

    def _fail(self, name, why):
        """A failed step that is no single request (an order that never got ready)."""
        self.environment.events.request.fire(
            request_type="CHECK", name=name, response_time=0, response_length=0,
            exception=RuntimeError(why), context={}, url=None, response=None,
            start_time=datetime.now(UTC).timestamp())
