"""`bench mixed` at a tiny size, for real: gunicorn, the Celery workers and locust as
subprocesses on the test database, a few users, a few granules. The JSON has its fields, and
the users' checks verified something (orders ready and completed, downloads whose MD5 matched
the catalog, a file recalled from tape): counts, never times."""
import json

import pytest
from django.core.management import call_command

from bench import mixed
from tests.workers import database_url


def test_percentiles_of_a_histogram_are_nearest_rank():
    histogram = {10: 50, 20: 45, 300: 4, 900: 1}          # 100 requests
    assert [mixed.histogram_percentile(histogram, q) for q in (50, 95, 99, 100)] == [
        10, 20, 300, 900]
    assert mixed.histogram_percentile({}, 95) is None


def test_latency_merges_the_entries_of_a_kind_and_counts_every_request_overall():
    entries = [
        {"name": "search: results", "method": "GET", "num_requests": 3, "num_failures": 0,
         "response_times": {"10": 2, "40": 1}},
        {"name": "order: ready", "method": "CHECK", "num_requests": 1, "num_failures": 1,
         "response_times": {"0": 1}},
        {"name": "search: results", "method": "POST", "num_requests": 1, "num_failures": 1,
         "response_times": {"200": 1}},
    ]
    kinds, overall = mixed.latency(entries)
    assert kinds["search: results"] == {"requests": 4, "failures": 1, "p50_ms": 10,
                                        "p95_ms": 200, "p99_ms": 200, "max_ms": 200}
    # a failed step (an order never ready) counts as a failure, not as a request of 0 ms
    assert kinds["order: ready"] == {"requests": 0, "failures": 1, "p50_ms": None,
                                     "p95_ms": None, "p99_ms": None, "max_ms": None}
    assert overall == {"requests": 4, "failures": 2, "p50_ms": 10, "p95_ms": 200,
                       "p99_ms": 200, "max_ms": 200}


@pytest.mark.slow  # a minute or two: gunicorn, three workers and locust for real
@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_tiny_mixed_run_orders_downloads_and_checks(data_root, monkeypatch, settings):
    # the subprocesses use this test's database, data root and secret key (which signs the
    # users' sessions); the bench command's child has them from its parent
    monkeypatch.setenv("DATABASE_URL", database_url())
    monkeypatch.setenv("GRANARY_DATA_ROOT", str(data_root))
    monkeypatch.setenv("DJANGO_SECRET_KEY", settings.SECRET_KEY)
    out = data_root / "mixed.json"
    # every user orders at once and often, and every orderable granule is on tape only: the
    # first orders wait for recalls; users finish the order under way once the window closes
    call_command("bench", "mixed", "--inner", "--users", "3", "--granules", "4",
                 "--pdr-granules", "2", "--catalog", "60", "--orderable", "4",
                 "--tape-share", "1", "--think-s", "0.1,0.3", "--order-weight", "50",
                 "--warmup-s", "0", "--min-seconds", "2", "--max-file-kib", "16",
                 "--json", str(out))
    result = json.loads(out.read_text())

    for field in ("solo", "with_users", "ingest_ratio", "web", "errors", "checks", "orders",
                  "goals", "goals_met", "window_s", "steps_s"):
        assert field in result, field
    for phase in ("solo", "with_users"):
        assert result[phase]["granules_per_s"] > 0
        assert {"web", "ingest", "archive", "distribution"} <= set(result[phase]["cpu_s"])
    assert "locust" in result["with_users"]["cpu_s"]
    web = result["web"]
    assert web["overall"]["requests"] == sum(k["requests"] for k in web["kinds"].values()) > 0
    # downloads are checked below: in a tiny run they may all fall after the timed window
    # (orders wait for recalls), so the window's kinds are not asked to hold them
    assert {"search: results", "order: place"} <= set(web["kinds"])
    assert {"p50_ms", "p95_ms", "p99_ms"} <= set(web["overall"])

    checks, orders = result["checks"], result["orders"]
    assert result["errors"] == 0, result["failures"]
    assert checks["users_started"] == 3
    assert checks["orders_completed"] >= 1
    assert checks["downloads_verified"] >= 1 and checks.get("downloads_mismatched", 0) == 0
    assert orders["by_state"].get("completed", 0) >= checks["orders_completed"]
    assert orders["items_recalled"] >= 1
    assert result["released_to_tape"] == 4


def test_the_users_cpu_is_the_window_less_the_solo_phase_per_request_and_per_search():
    from bench.mixed import users_cpu

    alone = {"cpu_s": {"web": 1.0, "database": 0.5}}
    loaded = {"cpu_s": {"web": 11.0, "database": 2.5}}
    # 10 s of web and 2 s of database CPU for 100 requests, 20 of them search pages
    got = users_cpu(alone, loaded, {"requests": 100}, {"search: results": {"requests": 20}})
    assert got == {"web": {"per_request_ms": 100.0, "per_search_ms": 500.0},
                   "database": {"per_request_ms": 20.0, "per_search_ms": 100.0}}
    assert users_cpu(alone, loaded, {"requests": 0}, {})["web"]["per_search_ms"] is None
