"""The events benchmark's parts (bench/events.py says what it measures); imported when it
runs, as it needs the apps loaded."""
import statistics
import time
import uuid
from collections import Counter
from types import SimpleNamespace

import requests
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from backend.events import services as events
from backend.events.models import Delivery, Endpoint, Event

from . import events_amqp
from .dashboard import percentile
from .events import GOAL_ADDED_S, GOAL_P95_S
from .events_receiver import Receiver
from .events_workers import Workers


def _now():
    return timezone.now()


def _endpoints(operators, receiver, names, options):
    """One webhook per name, each of its own operator (as many sites' systems would be)."""
    made = {}
    for name in names:
        port = options["dead_port"] if name == "dead" else options["port"]
        owner = get_user_model().objects.create(username=f"bench-{name}")
        owner.groups.add(operators)
        endpoint = events.create(owner, "webhook", f"http://127.0.0.1:{port}/{name}", name,
                                 [{"type": "granule.archived"}])
        receiver.add_secret(name, endpoint.secret)
        made[name] = endpoint
    return made


def _announce(collection, first, count, rate, bus=False):
    """count granule.archived events, in batches of 10 at `rate` per second; their uids. With
    the bus listening, each batch's granules are then withdrawn (the AMQP endpoint's order
    per granule to check; the webhooks take only granule.archived)."""
    uids, start = [], time.monotonic()
    for at in range(first, first + count, 10):
        batch = [SimpleNamespace(pk=i, granule_id=f"G{i:07d}", version=1, collection=collection)
                 for i in range(at, min(at + 10, first + count))]
        with transaction.atomic():
            rows = events.emit_many([events.granule_event("granule.archived", g)
                                     for g in batch])
            if bus:
                events.emit_many([events.granule_event("granule.withdrawn", g) for g in batch])
        uids += [str(r.uid) for r in rows]
        time.sleep(max(0.0, start + (at + 10 - first) / rate - time.monotonic()))
    return uids


def _phase(receiver, collection, endpoints, first, count, options):
    """Announce `count` granules, wait until every healthy delivery is made; the healthy
    ones' latencies (archived -> delivered) and the events' (archived -> fanned out)."""
    healthy = [n for n in endpoints if n.startswith("h")]
    target = receiver.firsts + len(healthy) * count
    uids = _announce(collection, first, count, options["rate"], bus=options.get("bus", False))
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and receiver.firsts < target:
        time.sleep(0.2)
    at = {str(u): (t.timestamp(), f.timestamp() - t.timestamp() if f else None)
          for u, t, f in Event.objects.filter(uid__in=uids).values_list(
              "uid", "time", "fanned_at")}
    latencies = [t - at[u][0] for (_, u), t in receiver.arrivals(healthy, uids).items()]
    fanned = [at[u][1] for u in uids if at[u][1] is not None]
    return latencies, len(healthy) * len(uids) - len(latencies), fanned


def _rounds(receiver, collection, endpoints, extra, options):
    """Alone and mixed phases, interleaved (alone, mixed, alone, mixed ...) so that the
    machine's load drifting during the run falls on both alike: the dead and slow endpoints
    are disabled for the alone phases (a slow send in flight is let finish first)."""
    per = max(10, options["granules"] // (2 * options["rounds"]) // 10 * 10)
    out = {"alone": [], "mixed": [], "missing": 0, "fanned": [], "seconds": 0.0}
    first = 0
    for _ in range(options["rounds"]):
        for mode in ("alone", "mixed"):
            Endpoint.objects.filter(pk__in=[e.pk for e in extra]).update(
                enabled=mode == "mixed")
            while mode == "alone" and Endpoint.objects.filter(
                    pk__in=[e.pk for e in extra], lane_until__gt=_now()).exists():
                time.sleep(0.2)
            started = time.monotonic()
            latencies, missing, fanned = _phase(receiver, collection, endpoints, first, per,
                                                options)
            out[mode] += latencies
            out["missing"] += missing
            out["fanned"] += fanned
            out["seconds"] += time.monotonic() - started
            first += per
    out["granules"] = first
    return out


def _uuid(text):
    return uuid.UUID(text)


def _bare_post(port, count=200):
    body = b'{"specversion":"1.0"}' * 20
    times = []
    with requests.Session() as session:
        for _ in range(count):
            started = time.perf_counter()
            session.post(f"http://127.0.0.1:{port}/bare", data=body, timeout=5)
            times.append(time.perf_counter() - started)
    return times


def run(options):
    from django.conf import settings
    from django.contrib.auth.models import Group

    from backend.accounts import roles
    from backend.catalog.models import Collection

    if connection.vendor != "postgresql":
        raise SystemExit("bench events needs PostgreSQL (lanes write from many processes)")
    # the endpoints are made here and the workers send: both get the bench's settings
    mine = {"GRANARY_EVENTS_ALLOWED_NETS": ["127.0.0.1/32"],
            "GRANARY_EVENTS_TIMEOUT_S": options["slow_s"] + 5,
            "GRANARY_EVENTS_RETRY_BASE_S": 0.5, "GRANARY_EVENTS_MAX_TRIES": 4}
    for name, value in mine.items():
        setattr(settings, name, value)
    knobs = {name: ",".join(v) if isinstance(v, list) else str(v) for name, v in mine.items()}
    operators = Group.objects.get_or_create(name=roles.OPERATOR)[0]
    collection = Collection.objects.create(short_name="BENCHEV", version="001",
                                           title="events bench", processing_level="2")
    receiver = Receiver(options["port"], options["slow_s"])
    bare = _bare_post(options["port"])
    receiver.reset_cpu()
    healthy = [f"h{i}" for i in range(options["endpoints"])]
    endpoints = _endpoints(operators, receiver, healthy, options)
    consumer = events_amqp.start(operators)
    options["bus"] = consumer is not None
    if consumer is not None:
        knobs["GRANARY_EVENTS_AMQP_URL"] = settings.GRANARY_EVENTS_AMQP_URL
    workers = Workers(options["workers"], knobs)
    try:
        endpoints |= _endpoints(operators, receiver, ["dead", "slow"], options)
        cpu_before = workers.cpu_s()
        runs = _rounds(receiver, collection, endpoints,
                       [endpoints["dead"], endpoints["slow"]], options)
        runs["workers_cpu_s"] = workers.cpu_s() - cpu_before
        _settle(endpoints["dead"])
        bus = _bus(consumer, runs["granules"])
    finally:
        workers.close()
    tally = receiver.tally()
    receiver.close()
    result = _result(options, tally, bare, runs, endpoints)
    if bus:
        result["amqp"] = bus
        result["table"].append(("AMQP received / missing / out of order / duplicates",
                                " / ".join(str(bus[k]) for k in (
                                    "received", "missing", "out_of_order", "duplicates"))))
    return result


def _bus(consumer, granules, wait_s=120):
    """The AMQP consumer's tally once every event reached it (or the wait ran out)."""
    if consumer is None:
        return None
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and consumer.got() < granules * len(
            events_amqp.SEQUENCE):
        time.sleep(0.2)
    received, missing, out_of_order, duplicates = consumer.tally(granules)
    consumer.close()
    return {"received": received, "missing": missing, "out_of_order": out_of_order,
            "duplicates": duplicates}


def _settle(dead, wait_s=60):
    """Let the dead endpoint use its tries: its deliveries end dead, none left pending."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and Delivery.objects.filter(
            endpoint=dead, state=Delivery.State.PENDING).exists():
        time.sleep(0.5)


def _cpu(tally, runs, delivered):
    """CPU ms per delivery of the events workers (fan-outs, claims, queries, sends) while the
    granules were announced and delivered, and of the receiver per request (the site's cost,
    not Granary's)."""
    requests_ = tally["cpu"].get("requests", 0)
    return {"workers_ms": runs["workers_cpu_s"] * 1000 / max(delivered, 1),
            "receiver_ms": tally["cpu"].get("s", 0.0) * 1000 / max(requests_, 1)}


def _result(options, tally, bare, runs, endpoints):
    delivered = Delivery.objects.filter(state=Delivery.State.DELIVERED).count()
    cpu = _cpu(tally, runs, delivered)
    alone, mixed = runs["alone"], runs["mixed"]
    p95 = {k: percentile(v, 95) for k, v in (("bare", bare), ("alone", alone),
                                              ("mixed", mixed), ("fanned", runs["fanned"]))}
    copies = tally["healthy_copies"]
    dead = Delivery.objects.filter(endpoint=endpoints["dead"]).values_list("state", flat=True)
    added = p95["mixed"] - p95["alone"]
    rate = (len(alone) + len(mixed)) / runs["seconds"]
    table = [
        ("granules x healthy endpoints", f"{runs['granules']} x {options['endpoints']} "
                                         f"({options['rounds']} rounds alone / mixed)"),
        ("bare POST p95 (baseline)", f"{p95['bare'] * 1000:.1f} ms"),
        ("archived -> fanned out p95", f"{p95['fanned']:.3f} s"),
        ("archived -> delivered p50, healthy alone", f"{statistics.median(alone):.3f} s"),
        ("archived -> delivered p95, healthy alone", f"{p95['alone']:.3f} s"),
        ("p95 with a dead and a slow endpoint", f"{p95['mixed']:.3f} s"),
        ("added by the dead and slow endpoints", f"{added:+.3f} s (goal <= {GOAL_ADDED_S})"),
        ("ratio p95 / bare POST p95", f"{p95['alone'] / p95['bare']:.0f}x"),
        ("healthy deliveries / s (while announcing)", f"{rate:.0f}"),
        ("events workers (processes); deliveries made", f"{options['workers']}; {delivered}"),
        ("CPU ms per delivery: events workers / receiver",
         f"{cpu['workers_ms']:.2f} / {cpu['receiver_ms']:.2f}"),
        ("missing / duplicates / bad signatures",
         f"{runs['missing']} / {copies} / {tally['bad']}"),
        ("dead endpoint's deliveries", ", ".join(f"{k} {v}" for k, v in Counter(dead).items())),
        (f"goals: p95 <= {GOAL_P95_S:g} s, added <= {GOAL_ADDED_S} s, 0 missing",
         "met" if p95["mixed"] <= GOAL_P95_S and added <= GOAL_ADDED_S
         and not runs["missing"] else "MISSED"),
    ]
    return {"table": table, "p95_s": p95, "added_s": added, "missing": runs["missing"],
            "duplicates": copies, "bad_signatures": tally["bad"], "options": options,
            "deliveries_per_s": rate, "delivered": delivered, "cpu": cpu,
            "dead_states": dict(Counter(dead))}
